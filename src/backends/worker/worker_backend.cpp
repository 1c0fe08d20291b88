#include "backends/worker/worker_backend.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>

#include "backend/optimizer.h"
#include "backends/worker/process.h"
#include "model/model_file.h"
#include "model/params.h"
#include "tensor/tensor_file.h"
#include "util/atomic_file.h"
#include "util/child_env.h"
#include "util/error.h"
#include "util/paths.h"
#include "util/temp_dir.h"

namespace nnbench::backends::worker {

using host::read_tensors;
using host::write_tensors;
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// How long a request may take before the worker counts as hung: generous,
// since one chunk of a slow model's steps is one request.
double timeout_seconds() {
  if (const char* t = std::getenv("NNBENCH_WORKER_TIMEOUT"); t && *t)
    return std::atof(t);
  return 600;
}

// How long a worker may take to start and say hello: Python and its
// framework import in seconds (TensorFlow's cold import is the slowest);
// far less than a step's timeout, since every nnbench command that lists
// the engines waits for each one's hello.
double start_timeout_seconds() {
  if (const char* t = std::getenv("NNBENCH_WORKER_START_TIMEOUT"); t && *t)
    return std::atof(t);
  return 30;
}

std::string frameworks_dir() {
  if (const char* d = std::getenv("NNBENCH_FRAMEWORKS"); d && *d) return d;
  return util::shipped_path("frameworks", "frameworks");
}

// The interpreter that runs the framework's worker, "" when none exists.
std::string python_of(const Framework& f) {
  for (const auto& p : f.pythons) {
    const std::string path =
        p.rfind("venv:", 0) == 0
            ? venvs_dir() + "/" + p.substr(5) + "/bin/python"
            : p;
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

// A field of a worker's reply, of the kind its protocol says: a reply
// without it is the worker's failure, named in plain words rather than the
// JSON library's.
const json& field(const json& reply, const std::string& op, const char* key,
                  bool (json::*is)() const noexcept, const char* kind) {
  const auto it = reply.find(key);
  if (it == reply.end() || !((*it).*is)())
    throw std::runtime_error("the worker's reply to '" + op + "' has no " +
                             kind + " '" + key +
                             "': " + reply.dump().substr(0, 200));
  return *it;
}

// A folder of its own for the tensors handed to one worker and its log.
class Scratch : public util::TempDir {
 public:
  Scratch() : util::TempDir("nnbench-worker") {}
};

// `threads` (asked, 0 for every CPU) is in the worker's environment as
// NNBENCH_THREADS: frameworks whose thread pools are sized when they are
// imported (OpenMP for MXNet, XLA's for JAX) read it before that.
std::unique_ptr<Process> start(const Framework& f, const std::string& python,
                               const Scratch& s, int threads = 0) {
  const std::string dir = frameworks_dir();
  if (dir.empty() || !fs::exists(dir + "/common/worker.py"))
    throw Error(
        "the framework workers are not found (frameworks/ beside the "
        "binary or in its source tree; NNBENCH_FRAMEWORKS names "
        "another)");
  std::map<std::string, std::string> env{
      {"PYTHONDONTWRITEBYTECODE", "1"},
      {"NNBENCH_THREADS", std::to_string(threads)}};
  // What nnbench's own settings imply for it (util/child_env.h): its
  // malloc keeps freed memory, else a fresh worker page-faults its
  // buffers again every step.
  for (const auto& [k, v] : util::child_env()) env[k] = v;
  return std::make_unique<Process>(
      std::vector<std::string>{python, "-u", dir + "/common/worker.py",
                               dir + "/" + f.folder + "/engine.py"},
      env, s.file("worker.log"), start_timeout_seconds());
}

std::map<std::string, host::Tensor> seeded_params(
    const model::Model& m, uint64_t seed, const std::string& weights = "") {
  std::map<std::string, host::Tensor> params;
  for (auto& p : backend::initial_params(m, seed, weights)) {
    host::Tensor t;
    t.shape = p.spec.shape;
    t.f = std::move(p.data);
    params[p.spec.name] = std::move(t);
  }
  // Under the names nnbench_onnx.py reads for its BatchNormalization nodes.
  for (auto& [name, t] : backend::running_stats_tensors(
           m, backend::initial_running_stats(m, weights)))
    params[name] = std::move(t);
  return params;
}

// The options as the workers read them: the optimizer's settings at the
// top level, its name under "optimizer".
json options_json(const backend::Options& o) {
  json j = backend::optimizer_json(o);
  j.erase("name");
  j.update({{"device", o.device},
            {"threads", o.threads},
            {"seed", o.seed},
            {"precision", o.precision},
            {"calibration", o.calibration},
            {"optimizer", o.optimizer},
            {"observe", o.observe}});
  return j;
}

class WorkerExecutable : public backend::Executable {
 public:
  WorkerExecutable(const Framework& f, const std::string& python,
                   const model::Model& m, const backend::Options& o,
                   const backend::Shapes& shapes)
      : process_(start(f, python, scratch_, o.threads)) {
    if (!o.weights.empty() && !f.can.running_stats)
      for (const auto& l : m.layers)
        if (l.op == model::Op::kBatchNorm)
          throw backend::Unimplemented(
              "weights for a model with batch norm (" + l.name + "): the " +
              f.name +
              " engine does not load batch norm's running statistics yet");
    write_tensors(scratch_.file("params"), seeded_params(m, o.seed, o.weights));
    json sizes = json::array();
    for (int64_t b : shapes.infer_batches) sizes.push_back(b);
    const json reply = process_->request(
        {{"op", "compile"},
         {"model", model::to_json(m)},
         {"params", scratch_.file("params")},
         {"options", options_json(o)},
         {"shapes",
          {{"train_batch", shapes.train_batch}, {"infer_batches", sizes}}}},
        timeout_seconds());
    effective_ = backend::effective_from_json(
        field(reply, "compile", "effective", &json::is_object, "object"));
    effective_.extras["python"] = python;
    effective_.extras["worker"] = f.folder + "/engine.py";
    effective_.extras["worker_start"] =
        process_->forked()
            ? "forked from the suite's zygote (the framework imported once)"
            : "a new process (the framework imported for this case)";
    // What the worker got: nnbench's setting, or the user's own tunables.
    std::string tunables;
    if (const auto c = util::child_env(); c.count("GLIBC_TUNABLES"))
      tunables = c.at("GLIBC_TUNABLES");
    else if (const char* t = std::getenv("GLIBC_TUNABLES"))
      tunables = t;
    effective_.extras["worker_malloc"] =
        tunables.empty() ? "glibc defaults" : "GLIBC_TUNABLES=" + tunables;
  }

  void load_batches(const std::vector<host::Batch>& batches) override {
    std::map<std::string, host::Tensor> t;
    for (size_t i = 0; i < batches.size(); ++i) {
      t["input." + std::to_string(i)] = batches[i].input;
      t["labels." + std::to_string(i)] = batches[i].labels;
    }
    write_tensors(scratch_.file("batches"), t);
    process_->request(
        {{"op", "load_batches"}, {"file", scratch_.file("batches")}},
        timeout_seconds());
  }

  void infer(int batch) override {
    timed_steps(backend::Mode::kInfer, batch, 1);
  }
  void train_step(int batch) override {
    timed_steps(backend::Mode::kTrain, batch, 1);
  }
  double last_loss() override { return loss_; }
  void set_learning_rate(double lr) override {
    process_->request({{"op", "set_learning_rate"}, {"value", lr}},
                      timeout_seconds());
    rate_changed_ = true;
  }
  void synchronize() override {}  // every reply comes after the work
  bool self_timed() const override { return true; }
  std::vector<int> processes() const override { return {process_->pid()}; }

  std::vector<double> timed_steps(backend::Mode mode, int first,
                                  int n) override {
    const json reply = process_->request(
        {{"op", "steps"},
         {"mode", mode == backend::Mode::kTrain ? "train" : "infer"},
         {"first", first},
         {"n", n}},
        timeout_seconds());
    std::vector<double> s;
    for (const json& x :
         field(reply, "steps", "seconds", &json::is_array, "list")) {
      if (!x.is_number())
        throw std::runtime_error("the worker's reply to 'steps' has " +
                                 x.dump().substr(0, 50) + " among its seconds");
      s.push_back(x.get<double>());
    }
    const auto l = reply.find("loss");
    if (l == reply.end() || !(l->is_null() || l->is_number()))
      throw std::runtime_error(
          "the worker's reply to 'steps' has no number or null 'loss'");
    if (mode == backend::Mode::kTrain)
      loss_ = l->is_null() ? std::nan("") : l->get<double>();
    if (static_cast<int>(s.size()) != n)
      throw std::runtime_error("the worker ran " + std::to_string(s.size()) +
                               " steps for " + std::to_string(n) + " asked");
    for (double x : s)
      if (!(x >= 0))
        throw std::runtime_error("the worker timed a step at " +
                                 std::to_string(x) + " s");
    return s;
  }

  // After a schedule changed the rate, the optimizer's description is
  // asked again (the last rate, as the native backends report it).
  backend::Effective effective() const override {
    if (rate_changed_) {
      try {
        auto e = backend::effective_from_json(
            field(process_->request({{"op", "effective"}}, timeout_seconds()),
                  "effective", "effective", &json::is_object, "object"));
        e.extras.insert(effective_.extras.begin(), effective_.extras.end());
        effective_ = e;
        rate_changed_ = false;
      } catch (const std::exception&) {
        // A worker that died keeps what it said last.
      }
    }
    return effective_;
  }

  host::Tensor output() override { return fetch("output").at("output"); }
  std::map<std::string, host::Tensor> parameters() override {
    return fetch("parameters");
  }
  std::map<std::string, host::Tensor> gradients() override {
    return fetch("gradients");
  }
  std::map<std::string, host::Tensor> running_stats() override {
    return fetch("running_stats");
  }

 private:
  std::map<std::string, host::Tensor> fetch(const std::string& what) {
    const std::string file = scratch_.file(what);
    process_->request({{"op", what}, {"file", file}}, timeout_seconds());
    return read_tensors(file);
  }

  Scratch scratch_;  // before the process: it outlives it
  std::unique_ptr<Process> process_;
  mutable backend::Effective effective_;
  mutable bool rate_changed_ = false;
  double loss_ = std::nan("");
};

// What hello said, once per framework per process: starting Python and
// importing a framework takes a second or more (TensorFlow about three),
// and every nnbench command describes every backend. The answer is also
// kept on disk, keyed by what could change it: the interpreter, its
// environment's packages folder and the worker's files, by path and
// modification time.
struct Hello {
  std::string python, unavailable;
  json reply;
};

std::string cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return std::string(x) + "/nnbench";
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "/tmp") + "/.cache/nnbench";
}

std::string stamp(const std::string& path) {
  std::error_code ec;
  const auto t = fs::last_write_time(path, ec);
  return path + "@" +
         (ec ? "missing" : std::to_string(t.time_since_epoch().count()));
}

std::string hello_key(const Framework& f, const std::string& python) {
  const std::string dir = frameworks_dir();
  const fs::path env = fs::path(python).parent_path().parent_path();
  std::string key = stamp(python) + " " + stamp(dir + "/common/worker.py") +
                    " " + stamp(dir + "/" + f.folder + "/engine.py");
  // The environment's packages (pip and apt touch these folders).
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(env / "lib", ec))
    if (e.path().filename().string().rfind("python", 0) == 0)
      for (const char* sub : {"site-packages", "dist-packages"})
        if (fs::exists(e.path() / sub))
          key += " " + stamp((e.path() / sub).string());
  return key;
}

// What describe() and supports() read from hello, of the kinds they read
// it as: a malformed hello makes the engine unavailable naming the field,
// never a JSON library's exception in every command.
void check_hello(const json& r) {
  const auto fail = [](const std::string& key, const char* kind) {
    throw std::runtime_error("its hello reply's '" + key + "' is not " + kind);
  };
  for (const char* k : {"framework", "version", "python", "environment"})
    if (r.contains(k) && !r[k].is_string()) fail(k, "a string");
  for (const char* k : {"devices", "precisions", "optimizers", "exports"}) {
    if (!r.contains(k)) continue;
    if (!r[k].is_array()) fail(k, "a list of strings");
    for (const auto& v : r[k])
      if (!v.is_string()) fail(k, "a list of strings");
  }
  if (r.contains("checks_shapes") && !r["checks_shapes"].is_boolean())
    fail("checks_shapes", "true or false");
  if (!r.contains("unsupported")) return;
  if (!r["unsupported"].is_array()) fail("unsupported", "a list of objects");
  for (const auto& gap : r["unsupported"]) {
    if (!gap.is_object()) fail("unsupported", "a list of objects");
    for (const char* k : {"op", "attribute", "precision", "why"})
      if (gap.contains(k) && !gap[k].is_string())
        fail(std::string("unsupported[].") + k, "a string");
  }
}

json cached_hello(const Framework& f, const std::string& key) {
  std::ifstream in(cache_dir() + "/hello-" + f.name + ".json");
  if (!in) return nullptr;
  try {
    const json j = json::parse(in);
    if (j.value("key", "") == key) {
      check_hello(j.at("reply"));
      return j.at("reply");
    }
  } catch (const std::exception&) {
  }
  return nullptr;
}

void keep_hello(const Framework& f, const std::string& key, const json& reply) {
  try {
    fs::create_directories(cache_dir());
    util::write_file_atomically(cache_dir() + "/hello-" + f.name + ".json",
                                json{{"key", key}, {"reply", reply}}.dump());
  } catch (const std::exception&) {
    // A cache that cannot be written costs the next command a second.
  }
}

const Hello& hello(const Framework& f) {
  static std::mutex mu;
  static std::map<std::string, Hello> cache;
  std::lock_guard<std::mutex> lock(mu);
  if (const auto it = cache.find(f.name); it != cache.end()) return it->second;
  Hello h;
  h.python = f.impossible.empty() ? python_of(f) : "";
  if (!f.impossible.empty()) {
    h.unavailable = "cannot be installed here: " + f.impossible;
  } else if (h.python.empty()) {
    h.unavailable = "no Python environment for " + f.name + ": run " + f.setup;
  } else {
    try {
      const std::string key = hello_key(f, h.python);
      h.reply = cached_hello(f, key);
      if (h.reply.is_null()) {
        Scratch s;
        auto p = start(f, h.python, s);
        h.reply = p->request({{"op", "hello"}}, start_timeout_seconds());
        check_hello(h.reply);
        keep_hello(f, key, h.reply);
      }
    } catch (const std::exception& e) {
      h.unavailable = f.name + " does not start in " + h.python + " (" +
                      e.what() + "): run " + f.setup;
    }
  }
  return cache.emplace(f.name, std::move(h)).first->second;
}

class WorkerBackend : public backend::Backend {
 public:
  explicit WorkerBackend(Framework f) : f_(std::move(f)) {}
  std::string name() const override { return f_.name; }
  std::string version() const override {
    const Hello& h = hello(f_);
    if (!h.unavailable.empty()) return f_.name + " (not set up)";
    return h.reply.value("framework", f_.name) + " " +
           h.reply.value("version", "?") + " (Python " +
           h.reply.value("python", "?") + ")";
  }
  backend::Description describe() const override {
    const Hello& h = hello(f_);
    backend::Description d;
    d.name = f_.name;
    d.can = f_.can;
    d.unavailable = h.unavailable;
    if (!h.unavailable.empty()) return d;
    const json& r = h.reply;
    d.libraries = {{r.value("framework", f_.name), r.value("version", "?")},
                   {"Python", r.value("python", "?")}};
    if (r.contains("environment"))
      d.libraries["environment"] = r["environment"].get<std::string>();
    d.devices = r.value("devices", std::vector<std::string>{"cpu"});
    d.precisions = r.value("precisions", std::vector<std::string>{"fp32"});
    d.optimizers = r.value("optimizers", std::vector<std::string>{});
    return d;
  }
  // The gaps the engine declares in hello: an op, optionally only with
  // one attribute value or at one precision ({"op", "attribute", "value",
  // "precision", "why"}).
  backend::Support supports(const model::Layer& l,
                            const backend::Options& o) const override {
    const auto d = describe();
    if (!d.unavailable.empty()) return backend::Support::no(d.unavailable);
    const std::string op(model::op_name(l.op));
    model::Model one;
    one.layers = {l};
    const json attrs = model::to_json(one).at("layers").at(0);
    for (const auto& gap :
         hello(f_).reply.value("unsupported", json::array())) {
      if (gap.value("op", "") != op) continue;
      const std::string p = gap.value("precision", "");
      if (!p.empty() && p != o.precision) continue;
      const std::string a = gap.value("attribute", "");
      if (!a.empty() && (!attrs.contains(a) || attrs[a] != gap["value"]))
        continue;
      return backend::Support::no("layer '" + l.name + "' (" + op +
                                  "): " + gap.value("why", "not supported"));
    }
    return backend::supports_options(d, o);
  }
  // Gaps that depend on shapes: the engine builds the model without
  // weights and names what it cannot build (once per model per process).
  backend::Support supports_shapes(const model::Model& m,
                                   const backend::Options& o) const override {
    const Hello& h = hello(f_);
    if (!h.unavailable.empty() || !h.reply.value("checks_shapes", false))
      return backend::Support::yes();
    static std::mutex mu;
    static std::map<std::string, backend::Support> checked;
    // One checking worker per framework, kept for the process's life:
    // starting Python and the framework costs 1-4 s, a check milliseconds.
    struct Checker {
      Scratch scratch;
      std::unique_ptr<Process> process;
    };
    static std::map<std::string, Checker> checkers;
    const std::string key = f_.name + " " + model::model_hash(m);
    std::lock_guard<std::mutex> lock(mu);
    if (const auto it = checked.find(key); it != checked.end())
      return it->second;
    backend::Support s = backend::Support::yes();
    Checker& c = checkers[f_.name];
    try {
      if (!c.process) c.process = start(f_, h.python, c.scratch);
      c.process->request({{"op", "check"}, {"model", model::to_json(m)}},
                         timeout_seconds());
    } catch (const backend::Unimplemented& e) {
      s = backend::Support::no(e.what());
    } catch (...) {
      c.process.reset();  // a worker that failed is not asked again
      throw;
    }
    return checked.emplace(key, s).first->second;
  }
  // An engine whose hello lists the format under "exports" writes it.
  std::string write_model(const model::Model& m, uint64_t seed,
                          const std::string& format) const override {
    const Hello& h = hello(f_);
    if (!h.unavailable.empty()) throw backend::Unavailable(h.unavailable);
    const json formats = h.reply.value("exports", json::array());
    if (std::find(formats.begin(), formats.end(), format) == formats.end())
      return backend::Backend::write_model(m, seed, format);
    Scratch scratch;
    write_tensors(scratch.file("params"), seeded_params(m, seed));
    auto p = start(f_, h.python, scratch);
    p->request({{"op", "export"},
                {"format", format},
                {"model", model::to_json(m)},
                {"params", scratch.file("params")},
                {"file", scratch.file("model")}},
               timeout_seconds());
    std::ifstream in(scratch.file("model"), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  std::unique_ptr<backend::Executable> compile(
      const model::Model& m, const backend::Options& o,
      const backend::Shapes& shapes) override {
    const Hello& h = hello(f_);
    if (!h.unavailable.empty()) throw backend::Unavailable(h.unavailable);
    // Layers and attributes only: a shape gap is the worker's own refusal
    // when it builds (asking supports_shapes would start a second worker).
    for (const auto& l : m.layers)
      if (const auto s = supports(l, o); !s)
        throw backend::Unimplemented(s.why);
    return std::make_unique<WorkerExecutable>(f_, h.python, m, o, shapes);
  }

 private:
  Framework f_;
};

}  // namespace

std::string venvs_dir() {
  if (const char* d = std::getenv("NNBENCH_VENVS"); d && *d) return d;
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x)
    return std::string(x) + "/nnbench/venvs";
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "/tmp") + "/.local/share/nnbench/venvs";
}

std::unique_ptr<backend::Backend> make_worker_backend(Framework f) {
  return std::make_unique<WorkerBackend>(std::move(f));
}

}  // namespace nnbench::backends::worker
