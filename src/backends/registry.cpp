#include "backend/registry.h"

#include "util/error.h"
#ifdef NNBENCH_WITH_REFERENCE
#include "backends/reference/reference_backend.h"
#endif
#ifdef NNBENCH_WITH_TORCH
#include "backends/torch/torch_backend.h"
#include "util/module.h"
#endif
#ifdef NNBENCH_WITH_ONEDNN
#include "backends/onednn/onednn_backend.h"
#endif
#ifdef NNBENCH_WITH_WORKER
#include "backends/worker/worker_backend.h"
#endif

namespace nnbench::backend {
namespace {

#ifdef NNBENCH_WITH_WORKER
// The framework workers change the rate between steps (schedules) and
// give and load batch norm's running statistics; none takes part in
// nnbench's data-parallel training.
const Capabilities kFrameworkCan = [] {
  Capabilities c;
  c.lr_schedules = true;
  c.running_stats = true;
  return c;
}();
// Inference engines: no training, so no schedules either; the ONNX graph
// carries batch norm's running statistics from a weights file.
const Capabilities kInferenceCan = [] {
  Capabilities c;
  c.training = false;
  c.running_stats = true;
  return c;
}();
#endif

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
  namespace t = backends::torch_backend;
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
  Factory make;
};

// The explicit list of built backends, the oracle first: adding a backend
// is one line here (and its folder and CMake option).
std::vector<Entry>& entries() {
  static std::vector<Entry> list = {
#ifdef NNBENCH_WITH_REFERENCE
      {kOracle, backends::reference::make_backend},
#endif
#ifdef NNBENCH_WITH_TORCH
      {"torch", make_torch},
#endif
#ifdef NNBENCH_WITH_ONEDNN
      {"onednn", backends::onednn::make_backend},
#endif
#ifdef NNBENCH_WITH_WORKER
      // Frameworks through their own front ends, each in a worker process
      // (frameworks/NAME: its engine.py and pinned requirements.txt).
      // PyTorch 2.x in its own environment when set up (`scripts/setup
      // pytorch`: a several-GB CUDA build from the index), else Debian's
      // python3-torch 1.13, which scripts/setup installs everywhere.
      {"pytorch",
       [] {
         return backends::worker::make_worker_backend(
             {"pytorch",
              "pytorch",
              {"venv:pytorch", "/usr/bin/python3"},
              "scripts/setup (Debian's python3-torch) or scripts/setup "
              "pytorch",
              kFrameworkCan});
       }},
      // Keras 3 on TensorFlow's CPU build, its own environment.
      {"tensorflow",
       [] {
         return backends::worker::make_worker_backend(
             {"tensorflow",
              "tensorflow",
              {"venv:tensorflow"},
              "scripts/setup tensorflow",
              kFrameworkCan});
       }},
      // Keras 3 on JAX, its own environment.
      {"jax",
       [] {
         return backends::worker::make_worker_backend(
             {"jax", "jax", {"venv:jax"}, "scripts/setup jax", kFrameworkCan});
       }},
      // MXNet's Gluon, hybridized; its own environment (numpy < 1.24).
      {"mxnet",
       [] {
         return backends::worker::make_worker_backend({"mxnet",
                                                       "mxnet",
                                                       {"venv:mxnet"},
                                                       "scripts/setup mxnet",
                                                       kFrameworkCan});
       }},
      // Inference engines on nnbench's models as ONNX graphs
      // (frameworks/common/nnbench_onnx.py), their own environments.
      {"onnxruntime",
       [] {
         return backends::worker::make_worker_backend(
             {"onnxruntime",
              "onnxruntime",
              {"venv:onnxruntime"},
              "scripts/setup onnxruntime",
              kInferenceCan});
       }},
      {"openvino",
       [] {
         return backends::worker::make_worker_backend({"openvino",
                                                       "openvino",
                                                       {"venv:openvino"},
                                                       "scripts/setup openvino",
                                                       kInferenceCan});
       }},
      // The studies' frameworks that no package offers here: listed, never
      // run, so that their rows say why.
      {"caffe",
       [] {
         return backends::worker::make_worker_backend(
             {"caffe",
              "caffe",
              {},
              "",
              {},
              "no Debian 12 package, and the name 'caffe' on the Python "
              "package index is an empty placeholder"});
       }},
      {"cntk",
       [] {
         return backends::worker::make_worker_backend(
             {"cntk",
              "cntk",
              {},
              "",
              {},
              "CNTK's last wheels (2.7) are for Python 3.6 and older; this "
              "machine has Python 3.11"});
       }},
#endif
  };
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
