#include "verify/verify.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "data/synthetic.h"
#include "host/tensor_file.h"
#include "machine/threads.h"
#include "model/params.h"
#include "util/error.h"
#include "util/temp_dir.h"
#include "verify/greedy.h"

namespace nnbench::verify {
namespace {

// Everything verification compares, from one backend.
struct Observed {
  host::Tensor infer_output, train_output;
  double loss = 0;
  std::map<std::string, host::Tensor> gradients, parameters;
};

// `train`: false for an inference engine (its output only).
Observed observe(backend::Backend& b, const model::Model& m,
                 const host::Batch& batch, const VerifyOptions& vo,
                 const std::string& precision, const std::string& device,
                 bool train = true) {
  backend::Options o;
  o.seed = vo.seed;
  o.threads = machine::resolve_threads(vo.threads);
  o.precision = precision;
  o.device = device;
  o.observe = true;  // the training step's gradients are read
  // int8: the engine's post-training quantization calibrates on the very
  // batch it is checked on (the ranges then cover it: the error left is
  // the quantization's own).
  std::optional<util::TempDir> dir;
  if (precision == "int8") {
    dir.emplace("nnbench-verify");
    o.calibration = dir->file("calibration");
    host::write_tensors(o.calibration, {{"input", batch.input}});
  }
  const int64_t n = batch.input.shape.at(0);
  auto exe = b.compile(
      m, o, train ? backend::Shapes::train(n) : backend::Shapes::infer(n));
  exe->load_batches({batch});
  Observed obs;
  exe->infer(0);
  exe->synchronize();
  obs.infer_output = exe->output();
  if (!train) return obs;
  exe->train_step(0);
  exe->synchronize();
  obs.loss = exe->last_loss();
  obs.train_output = exe->output();
  obs.gradients = exe->gradients();
  obs.parameters = exe->parameters();
  return obs;
}

void check(Verification& v, const std::string& what, double error,
           double tolerance) {
  v.checks.push_back({what, error, tolerance, error <= tolerance});
}

double norm(const host::Tensor& t) {
  double n = 0;
  for (float x : t.f) n += double(x) * x;
  return std::sqrt(n);
}

// `floor` keeps tensors that are zero in exact arithmetic (the bias of a
// layer followed by batch norm) from comparing rounding noise with noise.
void check_tensor(Verification& v, const std::string& what,
                  const host::Tensor* got, const host::Tensor& want,
                  double tolerance, double floor = 0) {
  if (got == nullptr || got->shape != want.shape) {
    check(v, what + (got ? " (shape differs)" : " (missing)"), INFINITY,
          tolerance);
    return;
  }
  const double n = norm(want);
  const double e = max_relative_error(*got, want);
  check(v, what, n >= floor || !std::isfinite(e) ? e : e * n / floor,
        tolerance);
}

// Gradients and parameters: each tensor's norm is floored at 1e-3 of the
// largest norm of its kind in the model.
void check_maps(Verification& v, const std::string& kind,
                const std::map<std::string, host::Tensor>& got,
                const std::map<std::string, host::Tensor>& want,
                double tolerance) {
  double largest = 0;
  for (const auto& [name, w] : want) largest = std::max(largest, norm(w));
  for (const auto& [name, w] : want) {
    const auto it = got.find(name);
    check_tensor(v, kind + " " + name, it == got.end() ? nullptr : &it->second,
                 w, tolerance, 1e-3 * largest);
  }
}

// Parameters after one step: the step's update inherits the gradient's
// error (a bias that starts at zero is nothing but its update), so each
// tensor's tolerance is the parameter tolerance plus the gradient
// tolerance scaled by the update's share of the tensor.
void check_parameters(Verification& v, const Tolerances& t,
                      const std::map<std::string, host::Tensor>& got,
                      const std::map<std::string, host::Tensor>& want,
                      const std::map<std::string, host::Tensor>& initial) {
  double largest = 0;
  for (const auto& [name, w] : want) largest = std::max(largest, norm(w));
  for (const auto& [name, w] : want) {
    const auto before = initial.find(name);
    const double tolerance =
        before == initial.end()
            ? t.parameter
            : parameter_tolerance(t, w, before->second, 1e-3 * largest);
    const auto it = got.find(name);
    check_tensor(v, "parameter " + name,
                 it == got.end() ? nullptr : &it->second, w, tolerance,
                 1e-3 * largest);
  }
}

void compare(Verification& v, const Observed& got, const Observed& want,
             const std::map<std::string, host::Tensor>& initial, bool train) {
  const Tolerances t = tolerances_for(v.precision);
  check_tensor(v, "output (infer)", &got.infer_output, want.infer_output,
               t.output);
  if (!train) return;  // an inference engine: its output is all it has
  check_tensor(v, "output (train)", &got.train_output, want.train_output,
               t.output);
  const double loss_error =
      std::isfinite(got.loss)
          ? std::abs(got.loss - want.loss) / std::max(std::abs(want.loss), 1e-6)
          : INFINITY;
  check(v, "loss", loss_error, t.loss);
  check_maps(v, "gradient", got.gradients, want.gradients, t.gradient);
  check_parameters(v, t, got.parameters, want.parameters, initial);
}

void conclude(Verification& v) {
  const TensorCheck* worst = nullptr;
  for (const auto& c : v.checks)
    if (!c.pass && (!worst || !(c.error <= worst->error))) worst = &c;
  v.verdict = worst ? Verdict::kFail : Verdict::kPass;
  if (worst)
    v.message = worst->what + ": error " + std::to_string(worst->error) +
                " > tolerance " + std::to_string(worst->tolerance);
}

}  // namespace

double parameter_tolerance(const Tolerances& t, const host::Tensor& after,
                           const host::Tensor& before, double floor) {
  if (before.f.size() != after.f.size()) return t.parameter;
  double update = 0;
  for (size_t i = 0; i < after.f.size(); ++i) {
    const double d = double(after.f[i]) - before.f[i];
    update += d * d;
  }
  return t.parameter +
         t.gradient * std::sqrt(update) / std::max(norm(after), floor);
}

double max_relative_error(const host::Tensor& got, const host::Tensor& want) {
  if (got.f.size() != want.f.size()) return INFINITY;
  double diff = 0, norm = 0;
  for (size_t i = 0; i < want.f.size(); ++i) {
    const double d = double(got.f[i]) - double(want.f[i]);
    if (std::isnan(d)) return INFINITY;
    diff += d * d;
    norm += double(want.f[i]) * double(want.f[i]);
  }
  return std::sqrt(diff) / std::max(std::sqrt(norm), 1e-6);
}

Tolerances tolerances_for(const std::string& precision) {
  if (precision == "bf16") return {5e-2, 5e-2, 2.5e-1, 5e-2};
  if (precision == "int8") return {3.5e-1, 0, 0, 0};  // inference only
  return {1e-4, 1e-4, 5e-2, 1e-3};
}

model::Model without_dropout(const model::Model& m) {
  model::Model out = m;
  for (auto& l : out.layers)
    if (l.op == model::Op::kDropout) l.p = 0;
  return out;
}

results::Agreement agreement_of(const host::Tensor& low,
                                const host::Tensor& fp32) {
  if (low.shape != fp32.shape || fp32.shape.empty())
    throw Error("agreement: outputs of different shapes");
  const auto classes = static_cast<size_t>(fp32.shape.back());
  const size_t rows = classes ? fp32.f.size() / classes : 0;
  // log-softmax of row r, in double.
  const auto log_p = [&](const std::vector<float>& x, size_t r) {
    const float* z = x.data() + r * classes;
    const double top = *std::max_element(z, z + classes);
    double sum = 0;
    for (size_t k = 0; k < classes; ++k) sum += std::exp(z[k] - top);
    std::vector<double> out(classes);
    for (size_t k = 0; k < classes; ++k) out[k] = z[k] - top - std::log(sum);
    return out;
  };
  results::Agreement a;
  a.rows = static_cast<int64_t>(rows);
  size_t same = 0;
  double kl = 0;
  for (size_t r = 0; r < rows; ++r) {
    const auto p = log_p(fp32.f, r), q = log_p(low.f, r);
    same += std::max_element(p.begin(), p.end()) - p.begin() ==
            std::max_element(q.begin(), q.end()) - q.begin();
    for (size_t k = 0; k < classes; ++k) kl += std::exp(p[k]) * (p[k] - q[k]);
  }
  a.top1 = rows ? static_cast<double>(same) / rows : NAN;
  a.kl = rows ? kl / rows : NAN;
  return a;
}

Verification verify(backend::Backend& oracle, backend::Backend& candidate,
                    const model::Model& m, const VerifyOptions& vo) {
  Verification v;
  v.model = m.name;
  v.oracle = oracle.name();
  v.candidate = candidate.name();
  v.precision = vo.precision;
  v.batch = vo.batch;
  const model::Model plain = without_dropout(m);
  const host::Batch batch = data::synthetic_batch(plain, vo.batch, vo.seed);
  Observed got;
  // int8 is post-training quantization: inference only on every engine;
  // a worker may infer at bf16 and train at fp32 only.
  const bool train = candidate.describe().trains_at(vo.precision);
  backend::Options o;
  o.seed = vo.seed;
  o.threads = machine::resolve_threads(vo.threads);
  o.precision = vo.precision;
  o.device = vo.device;
  try {
    got = observe(candidate, plain, batch, vo, vo.precision, vo.device, train);
  } catch (const backend::Unimplemented& e) {
    v.verdict = Verdict::kUnimplemented;
    v.message = e.what();
    // An engine may generate at a precision its steps do not run (LibTorch
    // at bf16): that much is checked and shown, but the verdict stays
    // unimplemented unless the generation fails (`run --verify` measures
    // only a PASS, and its steps were not checked). A generator that does
    // not start (a device it lacks) leaves it unimplemented too.
    auto generation = check_generation(oracle, candidate, plain, o);
    if (!generation.started) return v;
    v.checks = std::move(generation.checks);
    v.generation_agreement = generation.agreement;
    const std::string steps = v.message;
    conclude(v);
    if (v.verdict == Verdict::kPass) {
      v.verdict = Verdict::kUnimplemented;
      v.message = steps + "; its generation checked and passed";
    } else {
      v.message += "; its steps unimplemented: " + steps;
    }
    return v;
  } catch (const backend::Unavailable&) {
    throw;  // not this backend's answer: the command's usage error
  } catch (const std::exception& e) {
    // An engine that fails to build or run the model fails its
    // verification; the other backends are still checked.
    v.verdict = Verdict::kFail;
    v.message = std::string("it failed to run: ") + e.what();
    return v;
  }
  std::map<std::string, host::Tensor> initial;
  for (auto& p : model::init_params(plain, vo.seed)) {
    host::Tensor t;
    t.shape = p.spec.shape;
    t.f = std::move(p.data);
    initial[p.spec.name] = std::move(t);
  }
  const Observed want = observe(oracle, plain, batch, vo, "fp32", "cpu");
  compare(v, got, want, initial, train);
  if (vo.precision != "fp32" &&
      plain.loss == model::Loss::kSoftmaxCrossEntropy &&
      got.infer_output.shape == want.infer_output.shape)
    v.agreement = agreement_of(got.infer_output, want.infer_output);
  auto generation = check_generation(oracle, candidate, plain, o);
  for (auto& c : generation.checks) v.checks.push_back(c);
  v.generation_agreement = generation.agreement;
  conclude(v);
  return v;
}

}  // namespace nnbench::verify
