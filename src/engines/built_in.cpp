#include <functional>

#include "backend/registry.h"
#include "util/error.h"
#ifdef NNBENCH_WITH_REFERENCE
#include "engines/reference/reference_backend.h"
#endif
#ifdef NNBENCH_WITH_TORCH
#include "engines/torch/torch_backend.h"
#include "util/module.h"
#endif
#ifdef NNBENCH_WITH_ONEDNN
#include "engines/onednn/onednn_backend.h"
#endif
#ifdef NNBENCH_WITH_WORKER
#include "engines/worker/manifest.h"
#include "engines/worker/worker_backend.h"
#endif

namespace nnbench::backend {
namespace {

#ifdef NNBENCH_WITH_TORCH
// A built backend whose module did not load (LibTorch missing or broken):
// listed, never run, its description saying why (dlerror's text).
class NotLoaded : public Backend {
 public:
  NotLoaded(std::string name, std::string why)
      : name_(std::move(name)), why_(std::move(why)) {}
  std::string name() const override { return name_; }
  std::string version() const override { return ""; }
  Description describe() const override {
    Description d;
    d.name = name_;
    d.unavailable = why_;
    return d;
  }
  Support supports(const model::Layer&, const Options&) const override {
    return Support::no(why_);
  }
  std::unique_ptr<Executable> compile(const model::Model&, const Options&,
                                      const Shapes&) override {
    throw Unavailable("backend '" + name_ + "' cannot run here: " + why_);
  }

 private:
  std::string name_, why_;
};

// LibTorch's static initialisers cost every process that maps it 0.4 s
// (docs/design.md): the backend lives in a module loaded on first use.
std::unique_ptr<Backend> make_torch() {
  namespace t = engines::torch_backend;
  std::string why;
  auto make = reinterpret_cast<t::MakeBackend>(
      util::module_symbol(t::kModule, t::kMakeBackend, &why));
  if (!make)
    return std::make_unique<NotLoaded>(
        "torch", "its module (LibTorch) cannot be loaded: " + why);
  return std::unique_ptr<Backend>(make());
}
#endif

struct Entry {
  std::string name;
  std::function<std::unique_ptr<Backend>()> make;  // a framework's captures it
};

// The built backends, the oracle first: adding a native backend is one line
// here (and its folder and CMake option); the frameworks follow, one per
// folder of frameworks/ with a manifest (engines/worker/manifest.h).
std::vector<Entry> native() {
  return {
#ifdef NNBENCH_WITH_REFERENCE
      {kOracle, engines::reference::make_backend},
#endif
#ifdef NNBENCH_WITH_TORCH
      {"torch", make_torch},
#endif
#ifdef NNBENCH_WITH_ONEDNN
      {"onednn", engines::onednn::make_backend},
#endif
  };
}

std::vector<Entry>& entries() {
  static std::vector<Entry> list = [] {
    std::vector<Entry> all = native();
#ifdef NNBENCH_WITH_WORKER
    // Frameworks through their own front ends, each in a worker process
    // in its own Python environment (frameworks/NAME: framework.toml,
    // engine.py, requirements.txt).
    const std::string dir = engines::worker::frameworks_dir();
    for (auto& l : engines::worker::list_frameworks(dir)) {
      for (const auto& e : all)
        if (e.name == l.framework.name)
          throw Error(dir + "/" + l.framework.folder +
                      ": a framework may not take the name of nnbench's "
                      "own backend '" +
                      e.name + "'; rename its folder");
      all.push_back({l.framework.name, [f = l.framework] {
                       return engines::worker::make_worker_backend(f);
                     }});
    }
#endif
    return all;
  }();
  return list;
}

}  // namespace

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const auto& e : entries()) names.push_back(e.name);
  return names;
}

std::unique_ptr<Backend> make_backend(const std::string& name) {
  for (const auto& e : entries())
    if (name == e.name) return e.make();
  std::string known;
  for (const auto& n : backend_names()) known += " " + n;
  throw Error("unknown backend '" + name + "'; built backends:" + known);
}

std::unique_ptr<Backend> make_ready_backend(const std::string& name) {
  auto b = make_backend(name);
  if (const std::string why = b->describe().unavailable; !why.empty())
    throw Unavailable("backend '" + name + "' cannot run here: " + why);
  return b;
}

std::string default_backend() {
  for (const auto& e : entries())
    if (e.name != kOracle) return e.name;
  return kOracle;
}

void register_backend(const std::string& name, Factory make) {
  for (const auto& e : entries())
    if (e.name == name)
      throw Error("backend '" + name + "' is registered twice");
  entries().push_back({name, make});
}

}  // namespace nnbench::backend
