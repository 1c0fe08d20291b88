#pragma once
// The seam between a model description and the code that runs it. A backend
// compiles a description into an executable; the harness (bench/step_loop.h)
// drives the executable and owns the clock. Backends never time themselves.
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend/failures.h"
#include "host/host.h"
#include "model/model.h"
#include "model/params.h"
#include "util/error.h"

namespace nnbench::backend {

enum class Mode { kTrain, kInfer };
std::string mode_name(Mode mode);
Mode mode_from_name(const std::string& name);  // throws nnbench::Error

// Requested settings. What actually ran is reported by Executable::effective.
struct Options {
  std::string device = "cpu";
  int threads = 0;  // 0: the harness resolves it to the usable CPUs
  uint64_t seed = 1;
  std::string precision = "fp32";
  // The optimizer, with PyTorch's semantics and parameter names:
  // "sgd" (momentum, nesterov, weight_decay), "adam" (beta1, beta2, eps),
  // "rmsprop" (alpha, eps, momentum), "adadelta" (rho, eps; learning_rate
  // scales the update, 1.0 in the paper). A backend without one throws
  // Unimplemented naming it.
  std::string optimizer = "sgd";
  double learning_rate = 0.01;
  double momentum = 0.9;
  bool nesterov = false;
  double weight_decay = 0;
  double beta1 = 0.9, beta2 = 0.999;
  double alpha = 0.99;  // rmsprop smoothing constant
  double rho = 0.9;     // adadelta decay
  double eps = 1e-8;
  // Trained parameters to start from (a tensor file with every parameter
  // by canonical name, model/params.h, and every batch norm's running
  // statistics); empty: the seeded initial values.
  std::string weights;
  // int8: the samples a post-training quantization calibrates on (a
  // tensor file, "input" [N, ...]); the engine says what it did with them.
  std::string calibration;
  // The caller will ask for a training step's gradients() (nnbench
  // verify). Engines whose compiled step would change to keep them keep
  // them only then (JAX's and TensorFlow's: XLA compiled a ResNet-56 step
  // returning them 30 % faster than the one Keras users run).
  bool observe = false;
};

// The batch sizes a run will use, known before its clock starts, so that a
// backend with static graphs (oneDNN) builds them all in compile and never
// inside a timed region. Loading a batch of another size is an error there;
// dynamic backends (LibTorch, reference) accept any size.
struct Shapes {
  int64_t train_batch = 0;             // 0: the run never calls train_step
  std::vector<int64_t> infer_batches;  // sizes infer() runs at, apart from
                                       // train_batch (which infers too)
  static Shapes train(int64_t batch) { return {batch, {}}; }
  static Shapes infer(int64_t batch) { return {0, {batch}}; }
};

// What a backend can do beyond running layers: each is a method of
// Executable that throws Unimplemented when false (the conformance suite
// holds every backend to its answers).
struct Capabilities {
  bool data_parallel = false;  // set_gradient_reducer
  bool overlap = false;        // all-reduce overlapped with backward (hooks)
  bool lr_schedules = false;   // set_learning_rate between steps
  // False for an inference engine (ONNX Runtime, OpenVINO): compile with a
  // training batch and train_step throw Unimplemented; verify compares the
  // inference output only.
  bool training = true;
  // Batch norm's running statistics travel with trained weights: the
  // executable's running_stats() gives them for --save-weights, and a
  // weights file's are loaded. A backend without it refuses such files.
  bool running_stats = false;
};

// What ran, as the backend reports it after compile (and after the run):
// the settings every backend has, typed, and its own in `extras`.
struct Effective {
  int threads = 0;        // as the library reports it; 0: not reported
  std::string device;     // "cpu", "cuda:0"
  std::string precision;  // "fp32", "bf16"
  std::string optimizer;  // the update as applied, with its settings
  std::map<std::string, std::string> extras;  // layout, kernels, ISA ...
};

// Data-parallel training: the backends hand their gradients to this
// between backward and the optimizer update; it returns when every buffer
// holds the mean over the ranks (distributed/reducer.h). Buffers are fp32 host
// memory owned by the backend, in the backend's own layout: every rank runs
// the same backend, so layouts agree across ranks.
struct GradientBuffer {
  float* data = nullptr;
  int64_t count = 0;
};
class GradientReducer {
 public:
  virtual ~GradientReducer() = default;
  virtual void reduce(const std::vector<GradientBuffer>& buffers) = 0;

  // Overlap with backward, for backends that see each gradient as backward
  // produces it (LibTorch's hooks): begin() before backward with every
  // gradient's element count, ready(i, data) once gradient i is complete
  // (the reducer copies it and may start reducing), finish(buffers) after
  // backward, which returns when `buffers` hold the means. Backends that
  // cannot call reduce() instead; wants_overlap() says which was asked.
  virtual bool wants_overlap() const { return false; }
  virtual void begin(const std::vector<int64_t>& counts) {}
  virtual void ready(int index, const float* data) {}
  virtual void finish(const std::vector<GradientBuffer>& buffers) {}
};

// What one epoch of a framework's own loop gave: its time and what the
// framework counted (none where it counted nothing finite).
struct FrameworkEpoch {
  double seconds = 0;
  std::optional<double> loss, accuracy;
  std::string loop;  // the idiom in words, for the record
};

class SelfTimed;
class Generator;
struct GenerationShape;

class Executable {
 public:
  virtual ~Executable() = default;
  // Copies batches into the backend's memory, untimed; steps refer to them
  // by index so data preparation stays outside the timed region.
  virtual void load_batches(const std::vector<host::Batch>& batches) = 0;
  virtual void infer(int batch) = 0;
  // Forward, loss, backward and optimizer update.
  virtual void train_step(int batch) = 0;
  // Loss of the last train_step (may wait for the device).
  virtual double last_loss() = 0;
  // Learning-rate schedules call this between steps.
  virtual void set_learning_rate(double lr) {
    throw Unimplemented("learning-rate schedules (set_learning_rate)");
  }
  // Returns when all submitted work has finished.
  virtual void synchronize() = 0;
  // The work done in another process (a framework worker), timed there;
  // null for an executable the harness times itself (SelfTimed below).
  virtual SelfTimed* self_timed() { return nullptr; }
  // From the next train_step on, gradients go through `r` (not owned;
  // null: single process) after backward and before the update.
  virtual void set_gradient_reducer(GradientReducer* r) {
    throw Unimplemented("data-parallel training (gradient reducer)");
  }
  // What actually runs, read from the backend's own state: threads,
  // device, precision, optimizer as applied; extras such as parameters
  // counted from its tensors. Static-graph backends add "graph_builds",
  // which must not grow after compile (tests check it).
  virtual Effective effective() const = 0;

  // Inspection for verification (nnbench verify, conformance tests), never
  // on a timed path. Host copies, float32, batch first.
  // Output of the last infer() or train_step().
  virtual host::Tensor output() = 0;
  // Parameters by canonical name (model/params.h), current values.
  virtual std::map<std::string, host::Tensor> parameters() = 0;
  // Gradients of the last train_step, by canonical name.
  virtual std::map<std::string, host::Tensor> gradients() = 0;
  // Batch norm's running statistics, "<layer>.running_mean" and
  // "<layer>.running_var" (PyTorch's state_dict names); empty where the
  // backend keeps none it can give (Capabilities::running_stats).
  virtual std::map<std::string, host::Tensor> running_stats() { return {}; }
};

// An executable whose every call crosses a pipe to another process (a
// framework worker): its steps are timed where they run, and the harness
// times the whole call around them and checks that they fit in it.
class SelfTimed {
 public:
  virtual ~SelfTimed() = default;
  // The processes doing the work (a worker's pid), whose CPU time is the
  // run's own for the contention judgement.
  virtual std::vector<int> processes() const = 0;
  // `n` steps of `mode` on batches first, first + 1, ... (modulo the
  // batches loaded), each timed around the step and the framework's own
  // synchronisation.
  virtual std::vector<double> timed_steps(Mode mode, int first, int n) = 0;
  // One epoch through the framework's own training idiom (Keras
  // Model.fit, a Gluon loop, a plain PyTorch loop) over `batches` in
  // order, as users' scripts and the CPU-vs-GPU study train: timed where
  // it runs, around the whole loop.
  virtual FrameworkEpoch framework_epoch(
      const std::vector<host::Batch>& batches) = 0;
};

// The processes doing `e`'s work besides this one (none for an executable
// that runs here).
std::vector<int> worker_processes(Executable& e);

// What a backend is and what it can run, answered without compiling
// anything: the conformance suite, `nnbench env` and the results read it
// instead of knowing backends by name.
// Effective settings as one flat JSON object, the typed ones beside the
// extras (what a backend did not report is left out), and back; records
// written before the typed fields (every value a string) read the same.
// The framework workers answer in the same shape.
nlohmann::json to_json(const Effective& e);
Effective effective_from_json(const nlohmann::json& j);

struct Description {
  std::string name;
  Capabilities can;
  // Libraries it runs on and their versions as loaded, e.g. {"oneDNN",
  // "2.6.3"}; empty for plain C++.
  std::map<std::string, std::string> libraries;
  std::vector<std::string> devices;     // usable in this process
  std::vector<std::string> precisions;  // compile() accepts these
  std::vector<std::string> optimizers;  // Options::optimizer names it runs
  // "" when the backend can run here; else why not and how to set it up
  // (a framework engine whose environment is missing). Such a backend is
  // listed but left out of "all", and running it is a usage error.
  std::string unavailable;
  // Those of `precisions` it runs inference at only (a compile with a train
  // batch is refused): int8 on every engine that trains (post-training
  // quantization), bf16 on a framework worker whose training is fp32 only.
  std::vector<std::string> inference_only;
  bool trains_at(const std::string& precision) const;
};

// Whether a backend runs something exactly; `why` names the gap.
struct Support {
  bool ok = true;
  std::string why;
  static Support yes() { return {}; }
  static Support no(std::string why) { return {false, std::move(why)}; }
  explicit operator bool() const { return ok; }
};

// Every backend starts from model::init_params(model, options.seed): the
// same initial weights everywhere, so backends can be checked against the
// reference. Dropout draws its masks from each backend's own generator;
// verification therefore runs models with dropout disabled.
// A GEMM timed with a backend's own library, for the machine's practical
// peak (machine/peak.h): the best rate of n x n x n products.
struct GemmRate {
  std::string precision;  // "fp32", "bf16"
  std::string library;    // "oneDNN 2.6.3 matmul"
  std::string kernel;     // the implementation it ran, as the library says
  int threads = 0;
  double gflops = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual std::string version() const = 0;
  virtual Description describe() const = 0;
  // Whether this backend runs `layer` exactly with `options` (device,
  // precision, optimizer), answered without compiling. A "no" is final:
  // compile refuses it too. Gaps that depend on shapes (e.g. oneDNN's
  // average pooling in ceil mode with padding) are supports_shapes'.
  virtual Support supports(const model::Layer& layer,
                           const Options& options) const = 0;
  // Builds everything the run needs for `shapes`. Throws Unimplemented
  // naming the layer, op or setting (optimizer included) it cannot run
  // exactly, and nnbench::Error for invalid options (e.g. an unknown
  // device): a backend never runs something other than what was asked.
  virtual std::unique_ptr<Executable> compile(const model::Model& m,
                                              const Options& options,
                                              const Shapes& shapes) = 0;
  // The gaps that depend on the model's shapes (a linear layer on a
  // sequence, a pooling window over padding), answered from the shapes
  // without compiling. With supports(), the whole answer: a model both
  // say yes to compiles (the conformance suite holds every backend to it).
  virtual Support supports_shapes(const model::Model& m,
                                  const Options& options) const {
    return Support::yes();
  }
  // GEMMs timed at their best with this backend's library on `threads`
  // threads, one per precision it runs fast (none by default): a run's
  // fraction of peak is then never of a slower library's GEMM.
  virtual std::vector<GemmRate> time_gemms(int threads, int n) { return {}; }
  // The model with its seeded weights (model::init_params(m, seed)) in a
  // format another engine reads ("onnx"), as a file's bytes; Unimplemented
  // for a backend that writes none.
  virtual std::string write_model(const model::Model& m, uint64_t seed,
                                  const std::string& format) const {
    throw Unimplemented(name() + " writes no " + format + " files");
  }
  // A generator for `m` (model::generation_problem(m) is ""), its weights
  // as compile's, its cache sized for `shape`; Unimplemented for a backend
  // that does not generate.
  virtual std::unique_ptr<Generator> generator(const model::Model& m,
                                               const Options& options,
                                               const GenerationShape& shape) {
    throw Unimplemented("generation (token by token) on " + name());
  }
};

// The parameters a backend starts from: the seeded initial values
// (model::init_params(m, seed)), or with `weights` a tensor file's, which
// must hold every parameter of `m` by its canonical name and shape, the
// running statistics of every batch norm (see below), and nothing else (an
// nnbench::Error naming the file and the tensor).
std::vector<model::ParamValue> initial_params(const model::Model& m,
                                              uint64_t seed,
                                              const std::string& weights);

// Batch norm's running statistics from a weights file, by the batch-norm
// layer's index; empty without a file (every backend then starts them at
// mean 0, variance 1, as PyTorch does). initial_params checks they are all
// there.
struct RunningStats {
  std::vector<float> mean, var;
};
std::map<int, RunningStats> initial_running_stats(const model::Model& m,
                                                  const std::string& weights);
// "<layer>.running_mean" and "<layer>.running_var" of every batch-norm
// layer, as a weights file holds them.
std::map<std::string, host::Tensor> running_stats_tensors(
    const model::Model& m, const std::map<int, RunningStats>& stats);

// The device, precision and optimizer of `options` against a description:
// the part of supports() every backend shares. "cuda" matches any cuda:N.
Support supports_options(const Description& d, const Options& options);

// The first layer of `m` that `b` does not support, then its shape gaps;
// else yes.
Support supports_model(const Backend& b, const model::Model& m,
                       const Options& options);

}  // namespace nnbench::backend
