#include "engines/worker/worker_backend.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>

#include "backend/generator.h"
#include "backend/optimizer.h"
#include "engines/worker/hello.h"
#include "engines/worker/process.h"
#include "engines/worker/start.h"
#include "host/tensor_file.h"
#include "model/analysis.h"
#include "model/model_file.h"
#include "model/params.h"
#include "util/child_env.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/paths.h"

namespace nnbench::engines::worker {

using host::read_tensors;
using host::write_tensors;
namespace {

using nlohmann::json;

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

// The model as the workers read it: nnbench's description with each
// layer's per-sample output shape under "shape", as nnbench computed it
// (model/analysis.h), so that no engine computes it again.
json worker_model(const model::Model& m) {
  json j = model::to_json(m);
  const auto shapes = model::infer_shapes(m);
  for (size_t i = 0; i < shapes.size(); ++i)
    j["layers"][i]["shape"] = shapes[i];
  return j;
}

// The options as the workers read them: the optimizer's settings at the
// top level, its name under "optimizer".
// A compile for generation says so: a worker may generate at a precision
// its steps do not run (and an int8 generation needs no calibration).
json options_json(const backend::Options& o, bool generation) {
  json j = backend::optimizer_json(o);
  j.erase("name");
  j.update({{"device", o.device},
            {"threads", o.threads},
            {"seed", o.seed},
            {"precision", o.precision},
            {"calibration", o.calibration},
            {"optimizer", o.optimizer},
            {"observe", o.observe},
            {"generation", generation}});
  return j;
}

class WorkerExecutable : public backend::Executable, public backend::SelfTimed {
 public:
  WorkerExecutable(const Framework& f, const std::string& python,
                   const model::Model& m, const backend::Options& o,
                   const backend::Shapes& shapes, bool generation = false)
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
        "compile",
        {{"model", worker_model(m)},
         {"params", scratch_.file("params")},
         {"options", options_json(o, generation)},
         {"shapes",
          {{"train_batch", shapes.train_batch}, {"infer_batches", sizes}}}},
        timeout_seconds());
    effective_ = backend::effective_from_json(reply["effective"]);
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
    write_batches(batches);
    process_->request("load_batches", {{"file", scratch_.file("batches")}},
                      timeout_seconds());
  }

  // The worker times the loop; the harness times the call around it and
  // refuses a loop longer than the call (a clock that lies).
  backend::FrameworkEpoch framework_epoch(
      const std::vector<host::Batch>& batches) override {
    write_batches(batches);
    const auto t0 = util::Clock::now();
    // A whole epoch in one request: each batch may take as long as one
    // request may (a suite's case timeout still bounds the whole run).
    const double limit =
        timeout_seconds() *
        static_cast<double>(std::max<size_t>(1, batches.size()));
    const json reply =
        process_->request("fit", {{"file", scratch_.file("batches")}}, limit);
    const double call = util::seconds_since(t0);
    backend::FrameworkEpoch e;
    e.seconds = reply["seconds"].get<double>();
    if (!(e.seconds >= 0) || e.seconds > call)
      throw std::runtime_error(
          "the worker timed its training loop at " + std::to_string(e.seconds) +
          " s, the call took " + std::to_string(call) + " s");
    if (reply["loss"].is_number()) e.loss = reply["loss"].get<double>();
    if (reply["accuracy"].is_number())
      e.accuracy = reply["accuracy"].get<double>();
    e.loop = reply["loop"].get<std::string>();
    return e;
  }

  void infer(int batch) override {
    timed_steps(backend::Mode::kInfer, batch, 1);
  }
  void train_step(int batch) override {
    timed_steps(backend::Mode::kTrain, batch, 1);
  }
  double last_loss() override { return loss_; }
  void set_learning_rate(double lr) override {
    process_->request("set_learning_rate", {{"value", lr}}, timeout_seconds());
    rate_changed_ = true;
  }
  void synchronize() override {}  // every reply comes after the work
  backend::SelfTimed* self_timed() override { return this; }
  std::vector<int> processes() const override { return {process_->pid()}; }

  std::vector<double> timed_steps(backend::Mode mode, int first,
                                  int n) override {
    const json reply = process_->request(
        "steps",
        {{"mode", mode == backend::Mode::kTrain ? "train" : "infer"},
         {"first", first},
         {"n", n}},
        timeout_seconds());
    const auto s = reply["seconds"].get<std::vector<double>>();
    const json& l = reply["loss"];
    if (mode == backend::Mode::kTrain)
      loss_ = l.is_null() ? std::nan("") : l.get<double>();
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
            process_->request("effective", {}, timeout_seconds())["effective"]);
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

  // A request of another op to this worker (generation's), its reply.
  json call(const std::string& op, const json& fields) {
    return process_->request(op, fields, timeout_seconds());
  }

 private:
  void write_batches(const std::vector<host::Batch>& batches) {
    std::map<std::string, host::Tensor> t;
    for (size_t i = 0; i < batches.size(); ++i) {
      t["input." + std::to_string(i)] = batches[i].input;
      t["labels." + std::to_string(i)] = batches[i].labels;
    }
    write_tensors(scratch_.file("batches"), t);
  }

  std::map<std::string, host::Tensor> fetch(const std::string& what) {
    const std::string file = scratch_.file(what);
    process_->request(what, {{"file", file}}, timeout_seconds());
    return read_tensors(file);
  }

  Scratch scratch_;  // before the process: it outlives it
  std::unique_ptr<Process> process_;
  mutable backend::Effective effective_;
  mutable bool rate_changed_ = false;
  double loss_ = std::nan("");
};

json prompts_json(const std::vector<std::vector<int64_t>>& rows) {
  return {{"rows", rows}};
}

// Generation in the worker: the engine's prefill and decode, one request
// each, and whole generations timed by worker.py (op generate).
class WorkerGenerator : public backend::Generator {
 public:
  // What the C++ engines check is checked here too, before the worker
  // is asked: the worker only knows the capacity.
  WorkerGenerator(std::unique_ptr<WorkerExecutable> e,
                  const backend::GenerationShape& shape)
      : e_(std::move(e)),
        shape_(shape),
        capacity_(shape.prompt + shape.new_tokens) {}
  std::vector<int64_t> prefill(
      const std::vector<std::vector<int64_t>>& prompts) override {
    backend::check_prompts(prompts, shape_);
    return e_
        ->call("prefill", {{"prompts", prompts_json(prompts)},
                           {"capacity", capacity_}})["next"]
        .get<std::vector<int64_t>>();
  }
  std::vector<int64_t> decode(const std::vector<int64_t>& tokens) override {
    backend::check_decode(tokens, shape_);
    return e_->call("decode", {{"tokens", tokens}})["next"]
        .get<std::vector<int64_t>>();
  }
  // Null where the engine gives none (its step yields the token only).
  std::optional<std::vector<float>> last_logits() override {
    const json r = e_->call("logits", json::object())["logits"];
    if (!r.contains("rows")) return std::nullopt;
    std::vector<float> rows;
    for (const auto& row : r["rows"]) {
      const auto v = row.get<std::vector<float>>();
      rows.insert(rows.end(), v.begin(), v.end());
    }
    return rows;
  }
  backend::Effective effective() const override { return e_->effective(); }
  std::vector<int> processes() const override { return e_->processes(); }
  // Measured by the engine on its device (op bandwidth); {} on the host.
  std::optional<backend::DeviceBandwidth> device_bandwidth() override {
    const json r = e_->call("bandwidth", json::object())["bandwidth"];
    if (!r.contains("read_gbs") || !r["read_gbs"].is_number() ||
        r["read_gbs"].get<double>() <= 0)
      return std::nullopt;
    backend::DeviceBandwidth bw;
    bw.read_gbs = r["read_gbs"].get<double>();
    bw.array_bytes = r.value("array_bytes", int64_t{0});
    bw.passes = r.value("passes", 0);
    bw.method = r.value("method", std::string());
    bw.seconds = r.value("seconds", 0.0);
    return bw;
  }
  std::optional<backend::GenerationTimes> timed(
      const std::vector<std::vector<int64_t>>& prompts, int64_t new_tokens,
      int warmup, int repetitions) override {
    backend::check_prompts(prompts, shape_);
    if (new_tokens < 2 || new_tokens > shape_.new_tokens)
      throw Error("generation: " + std::to_string(new_tokens) +
                  " new tokens for a generator sized for " +
                  std::to_string(shape_.new_tokens));
    const json r = e_->call("generate", {{"prompts", prompts_json(prompts)},
                                         {"new_tokens", new_tokens},
                                         {"warmup", warmup},
                                         {"repetitions", repetitions}});
    backend::GenerationTimes t;
    t.ttft = r["ttft"].get<std::vector<double>>();
    t.itl = r["itl"].at("rows").get<std::vector<std::vector<double>>>();
    t.tokens = r["tokens"].at("rows").get<std::vector<std::vector<int64_t>>>();
    return t;
  }

 private:
  std::unique_ptr<WorkerExecutable> e_;
  backend::GenerationShape shape_;
  int64_t capacity_;
};

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
    d.inference_only =
        r.value("inference_only_precisions", std::vector<std::string>{});
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
      // Started with the threads the first case asks for, as its worker
      // is: the same environment, so inside a suite both fork from one
      // zygote (the framework imported once, not twice); a check does not
      // depend on them.
      if (!c.process) c.process = start(f_, h.python, c.scratch, o.threads);
      c.process->request("check", {{"model", worker_model(m)}},
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
    p->request("export",
               {{"format", format},
                {"model", worker_model(m)},
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
  // An engine whose hello says it generates: the model compiled for
  // inference at the batch, then its prefill and decode.
  std::unique_ptr<backend::Generator> generator(
      const model::Model& m, const backend::Options& o,
      const backend::GenerationShape& shape) override {
    const Hello& h = hello(f_);
    if (!h.unavailable.empty()) throw backend::Unavailable(h.unavailable);
    if (!h.reply.value("generates", false))
      return backend::Backend::generator(m, o, shape);
    // The precisions it generates at are its hello's (fp32 unless it
    // lists more), apart from its steps': MXNet generates at bf16 and runs
    // its steps at fp32 only.
    const auto at = h.reply.value("generation_precisions",
                                  std::vector<std::string>{"fp32"});
    if (std::find(at.begin(), at.end(), o.precision) == at.end()) {
      std::string listed;
      for (const auto& p : at) listed += (listed.empty() ? "" : ", ") + p;
      const json why = h.reply.value("generation_gaps", json::object());
      throw backend::Unimplemented(
          "generation at precision " + o.precision + " (the " + name() +
          " worker generates at " + listed +
          (why.contains(o.precision)
               ? "; " + why[o.precision].get<std::string>()
               : std::string()) +
          ")");
    }
    backend::check_generates(m, shape);
    // Layers at fp32: a precision's gaps are the steps' (generation's were
    // judged above).
    backend::Options layers = o;
    layers.precision = "fp32";
    for (const auto& l : m.layers)
      if (const auto s = supports(l, layers); !s)
        throw backend::Unimplemented(s.why);
    return std::make_unique<WorkerGenerator>(
        std::make_unique<WorkerExecutable>(
            f_, h.python, m, o, backend::Shapes::infer(shape.batch), true),
        shape);
  }

 private:
  Framework f_;
};

}  // namespace

std::string venvs_dir() {
  if (const char* d = std::getenv("NNBENCH_VENVS"); d && *d) return d;
  return util::data_dir() + "/venvs";
}

std::unique_ptr<backend::Backend> make_worker_backend(Framework f) {
  return std::make_unique<WorkerBackend>(std::move(f));
}

}  // namespace nnbench::engines::worker
