#include "backend/backend.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

#include "host/tensor_file.h"
#include "model/analysis.h"
#include "util/error.h"

namespace nnbench::backend {

std::string mode_name(Mode mode) {
  return mode == Mode::kTrain ? "train" : "infer";
}

Mode mode_from_name(const std::string& name) {
  if (name == "train") return Mode::kTrain;
  if (name == "infer") return Mode::kInfer;
  throw Error("unknown mode '" + name + "'; known: train, infer");
}

namespace {

bool listed(const std::vector<std::string>& names, const std::string& x) {
  for (const auto& n : names)
    if (n == x || (x == "cuda" && n.rfind("cuda:", 0) == 0)) return true;
  return false;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

bool Description::trains_at(const std::string& precision) const {
  return can.training && !listed(inference_only, precision);
}

Support supports_options(const Description& d, const Options& o) {
  if (!listed(d.devices, o.device))
    return Support::no("device " + o.device + " (" + d.name +
                       " has: " + joined(d.devices) + ")");
  if (!listed(d.precisions, o.precision))
    return Support::no("precision " + o.precision + " (" + d.name +
                       " runs: " + joined(d.precisions) + ")");
  // An inference engine runs no optimizer (its training is refused).
  if (d.can.training && !listed(d.optimizers, o.optimizer))
    return Support::no("optimizer '" + o.optimizer + "' (" + d.name +
                       " runs: " + joined(d.optimizers) + ")");
  return Support::yes();
}

Support supports_model(const Backend& b, const model::Model& m,
                       const Options& o) {
  for (const auto& l : m.layers)
    if (Support s = b.supports(l, o); !s) return s;
  return b.supports_shapes(m, o);
}

// One flat object, the typed settings beside the backend's extras; what a
// backend did not report (a run that never compiled) is left out.
nlohmann::json to_json(const backend::Effective& e) {
  nlohmann::json j = e.extras;
  if (e.threads > 0) j["threads"] = e.threads;
  for (const auto& [k, v] : {std::pair{"device", &e.device},
                             {"precision", &e.precision},
                             {"optimizer", &e.optimizer}})
    if (!v->empty()) j[k] = *v;
  return j;
}

// Before the typed fields every value was a string ("threads": "2").
backend::Effective effective_from_json(const nlohmann::json& j) {
  backend::Effective e;
  for (const auto& [k, v] : j.items()) {
    const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
    if (k == "threads")
      e.threads = v.is_number() ? v.get<int>() : std::atoi(text.c_str());
    else if (k == "device")
      e.device = text;
    else if (k == "precision")
      e.precision = text;
    else if (k == "optimizer")
      e.optimizer = text;
    else
      e.extras[k] = text;
  }
  return e;
}

void check_finite(const std::string& what, const float* p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(p[i]))
      throw BadValues(
          fmt::format("{} holds {} (element {} of {}): not a "
                      "number a run can use",
                      what, p[i], i, n));
}

namespace {

const char* const kStatNames[] = {".running_mean", ".running_var"};

// Takes a batch norm's statistic out of `tensors`, checked.
std::vector<float> take_stat(std::map<std::string, host::Tensor>& tensors,
                             const std::string& weights, const model::Layer& l,
                             int64_t channels, const char* suffix) {
  const std::string name = l.name + suffix;
  const auto it = tensors.find(name);
  if (it == tensors.end())
    throw Error(weights + ": no " + name + " (batch norm's running " +
                "statistics, which trained weights carry; a file written "
                "before they were saved cannot be used)");
  if (it->second.shape != model::Shape{channels} ||
      it->second.dtype != model::DType::kFloat32)
    throw Error(weights + ": " + name + " has another shape or type than [" +
                std::to_string(channels) + "] float32");
  std::vector<float> v = std::move(it->second.f);
  tensors.erase(it);
  check_finite(weights + ": " + name, v.data(), v.size());
  if (std::string(suffix) == kStatNames[1])
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i] < 0)
        throw BadValues(
            fmt::format("{}: {} holds {} (element {} of {}): a "
                        "variance cannot be negative",
                        weights, name, v[i], i, v.size()));
  return v;
}

// Every batch norm's statistics out of `tensors`, by layer index.
std::map<int, RunningStats> take_stats(
    const model::Model& m, std::map<std::string, host::Tensor>& tensors,
    const std::string& weights) {
  std::map<int, RunningStats> out;
  const auto shapes = model::infer_shapes(m);
  for (int i = 0; i < static_cast<int>(m.layers.size()); ++i) {
    const model::Layer& l = m.layers[i];
    if (l.op != model::Op::kBatchNorm) continue;
    const int64_t c = shapes[i].at(0);
    RunningStats& st = out[i];
    st.mean = take_stat(tensors, weights, l, c, kStatNames[0]);
    st.var = take_stat(tensors, weights, l, c, kStatNames[1]);
  }
  return out;
}

}  // namespace

std::vector<model::ParamValue> initial_params(const model::Model& m,
                                              uint64_t seed,
                                              const std::string& weights) {
  if (weights.empty()) return model::init_params(m, seed);
  auto tensors = host::read_tensors(weights);
  std::vector<model::ParamValue> out;
  for (const auto& spec : model::param_specs(m)) {
    const auto it = tensors.find(spec.name);
    if (it == tensors.end())
      throw Error(weights + ": no parameter " + spec.name + " (the model has " +
                  std::to_string(model::param_specs(m).size()) + ")");
    if (it->second.shape != spec.shape ||
        it->second.dtype != model::DType::kFloat32)
      throw Error(weights + ": parameter " + spec.name +
                  " has another shape or type than the model's");
    check_finite(weights + ": parameter " + spec.name, it->second.f.data(),
                 it->second.f.size());
    out.push_back({spec, std::move(it->second.f)});
    tensors.erase(it);
  }
  take_stats(m, tensors, weights);
  if (!tensors.empty())
    throw Error(weights + ": " + tensors.begin()->first +
                " is not a parameter of this model (weights of another one?)");
  return out;
}

std::map<int, RunningStats> initial_running_stats(const model::Model& m,
                                                  const std::string& weights) {
  if (weights.empty()) return {};
  auto tensors = host::read_tensors(weights);
  return take_stats(m, tensors, weights);
}

std::map<std::string, host::Tensor> running_stats_tensors(
    const model::Model& m, const std::map<int, RunningStats>& stats) {
  std::map<std::string, host::Tensor> out;
  for (const auto& [i, st] : stats) {
    const std::string& name = m.layers.at(i).name;
    const std::vector<float>* values[] = {&st.mean, &st.var};
    for (int k = 0; k < 2; ++k) {
      host::Tensor& t = out[name + kStatNames[k]];
      t.shape = {static_cast<int64_t>(values[k]->size())};
      t.f = *values[k];
    }
  }
  return out;
}

std::vector<int> worker_processes(Executable& e) {
  const SelfTimed* s = e.self_timed();
  return s ? s->processes() : std::vector<int>{};
}

}  // namespace nnbench::backend
