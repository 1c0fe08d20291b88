#include "engines/onednn/executable.h"

#include <cmath>
#include <string>

#include "backend/optimizer.h"
#include "engines/onednn/cpu_isa.h"
#include "engines/onednn/errors.h"
#include "engines/onednn/graph.h"
#include "engines/onednn/threads.h"
#include "model/analysis.h"
#include "model/params.h"
#include "util/error.h"

namespace nnbench::engines::onednn {
namespace {

using backend::Options;
using host::Batch;

class OnednnExecutable : public backend::Executable {
 public:
  OnednnExecutable(const model::Model& m, const Options& o, Dt dt,
                   const backend::Shapes& shapes)
      : model_(m), rule_(o), dt_(dt), eng_(dnnl::engine::kind::cpu, 0) {
    for (auto& v : backend::initial_params(m, o.seed, o.weights))
      params_[v.spec.name] = {v.spec.shape, std::move(v.data), {}};
    state_.seed = o.seed;
    for (auto& [i, st] : backend::initial_running_stats(m, o.weights))
      state_.running[i] = {std::move(st.mean), std::move(st.var)};
    std::vector<int64_t> sizes = shapes.infer_batches;
    if (shapes.train_batch > 0) sizes.push_back(shapes.train_batch);
    if (sizes.empty())
      throw Error("oneDNN backend: compile needs the batch sizes it will run");
    const bool int8 = o.precision == "int8";
    if (int8 && shapes.train_batch > 0)
      throw backend::Unimplemented(
          "precision int8 on the oneDNN backend is inference only "
          "(post-training quantization; nothing trains in int8)");
    if (shapes.train_batch == 0) infer_ = &plan_;
    translate_errors([&] {
      if (int8) {
        plan_.int8 = true;
        plan_.vnni = cpu_has_vnni();
        plan_.ranges = calibrate(model_, o.calibration, eng_, &params_, &state_,
                                 &calibration_samples_, &plan_.inner);
      }
      for (int64_t n : sizes) {
        if (n <= 0) throw Error("oneDNN backend: batch size must be > 0");
        if (!graphs_.count(n)) graphs_[n] = build(n);
      }
      return 0;
    });
    train_batch_ = shapes.train_batch;
    active_ = sizes.back();
    holder_ = active_;
  }

  void load_batches(const std::vector<Batch>& batches) override {
    translate_errors([&] {
      inputs_.clear();
      tokens_.clear();
      labels_.clear();
      bound_ = -1;
      if (batches.empty()) return 0;
      activate(batches[0].input.shape.at(0));
      for (const auto& b : batches) {
        if (b.input.shape != batches[0].input.shape ||
            b.input.dtype != model_.input.dtype)
          throw Error(
              "oneDNN backend: batches must match the model input "
              "and each other");
        if (b.input.dtype == model::DType::kInt64)
          tokens_.push_back(b.input.i);
        else
          inputs_.push_back(to_net(b.input));
        labels_.push_back(b.labels);
      }
      graph().net->stream().wait();
      return 0;
    });
  }

  void infer(int batch) override {
    bind(batch);
    graph().net->run_forward(false);
  }

  void train_step(int batch) override {
    if (active_ != train_batch_)
      throw Error("oneDNN backend: train_step at batch " +
                  std::to_string(active_) + ", compiled for training at " +
                  std::to_string(train_batch_));
    bind(batch);
    Net& net = *graph().net;
    net.run_forward(true);
    loss_ = graph().loss->loss_and_grad(labels_[batch]);
    net.run_backward();
    if (reducer_) {
      net.stream().wait();
      reducer_->reduce({graph().params->flat_grad()});
    }
    rule_.begin_step();
    graph().params->step(net.stream(), rule_);
    ++state_.steps;
    trained_ = true;
  }

  double last_loss() override { return loss_; }
  void set_learning_rate(double lr) override { rule_.set_learning_rate(lr); }

  void synchronize() override { graph().net->stream().wait(); }
  void set_gradient_reducer(backend::GradientReducer* r) override {
    reducer_ = r;
  }

  host::Tensor output() override {
    synchronize();
    graph().loss->read_logits();
    return graph().loss->output();
  }

  std::map<std::string, host::Tensor> parameters() override {
    if (infer_ == nullptr) return graph().params->values(graph().net->stream());
    // Folded and quantized layers keep no parameter of their own: the
    // values they were prepared from, which nothing changes.
    std::map<std::string, host::Tensor> out;
    for (const auto& [name, st] : params_)
      out[name] = {st.shape, model::DType::kFloat32, st.value, {}};
    return out;
  }

  // Batch norm's statistics (mean 0, variance 1 where none ran yet).
  std::map<std::string, host::Tensor> running_stats() override {
    const auto shapes = model::infer_shapes(model_);
    std::map<int, backend::RunningStats> stats;
    for (int i = 0; i < static_cast<int>(model_.layers.size()); ++i) {
      if (model_.layers[i].op != model::Op::kBatchNorm) continue;
      const auto& r = onednn::running_stats(state_, i, shapes[i].at(0));
      stats[i] = {r.mean, r.var};
    }
    return backend::running_stats_tensors(model_, stats);
  }

  std::map<std::string, host::Tensor> gradients() override {
    if (!trained_) return {};
    return graph().params->grads(graph().net->stream());
  }

  backend::Effective effective() const override;

 private:
  Graph& graph() { return graphs_.at(active_); }
  const Graph& graph() const { return graphs_.at(active_); }

  Graph build(int64_t batch) {
    ++builds_;
    return build_graph(model_, batch, dt_, eng_, &params_, &state_,
                       rule_.state_arrays(), infer_);
  }

  // Makes the graph of batch size n current. Graphs are built in compile
  // only; one that trained hands its values to the next through params_.
  void activate(int64_t n) {
    if (n == active_) return;
    if (!graphs_.count(n)) {
      std::string sizes;
      for (const auto& [size, g] : graphs_)
        sizes += (sizes.empty() ? "" : ", ") + std::to_string(size);
      throw Error("oneDNN backend: batch size " + std::to_string(n) +
                  " was not compiled (compiled: " + sizes +
                  "); pass it in compile's shapes");
    }
    if (n != holder_) {
      Graph& from = graphs_.at(holder_);
      from.params->save(from.net->stream());
      Graph& to = graphs_.at(n);
      to.params->load(to.net->stream());
      holder_ = n;
    }
    active_ = n;
  }

  // A float batch in the layout the first layer reads.
  memory to_net(const host::Tensor& t) {
    Net& net = *graph().net;
    const memory host(net.plain(-1, Dt::f32), eng_,
                      const_cast<float*>(t.f.data()));
    memory in(net.value(-1).md, eng_);
    make_reorder(host, in).execute(net.stream(),
                                   {{DNNL_ARG_FROM, host}, {DNNL_ARG_TO, in}});
    return in;
  }

  void bind(int batch) {
    if (batch == bound_) return;
    if (tokens_.empty())
      graph().net->value(-1).mem.set_data_handle(
          inputs_.at(batch).get_data_handle());
    else
      state_.tokens = tokens_.at(batch).data();
    bound_ = batch;
  }

  model::Model model_;
  backend::HostOptimizer rule_;
  Dt dt_;
  dnnl::engine eng_;
  ParamStates params_;
  RunState state_;
  InferPlan plan_;
  const InferPlan* infer_ = nullptr;  // set in an inference-only compile
  int64_t calibration_samples_ = 0;
  std::map<int64_t, Graph> graphs_;  // by batch size, built in compile
  int64_t train_batch_ = 0, active_ = 0;
  int64_t holder_ = 0;  // the graph holding the newest parameter values
  int builds_ = 0;
  backend::GradientReducer* reducer_ = nullptr;
  std::vector<memory> inputs_;
  std::vector<std::vector<int64_t>> tokens_;
  std::vector<host::Tensor> labels_;
  int bound_ = -1;
  double loss_ = std::nan("");
  bool trained_ = false;
};

std::string note_or(const std::map<std::string, std::string>& notes,
                    const std::string& key, const std::string& fallback) {
  const auto it = notes.find(key);
  return it == notes.end() ? fallback : it->second;
}

// The layers an int8 build runs in fp32 though they have weights (an
// LSTM, an attention's core), from their notes.
std::string not_quantized(const std::map<std::string, std::string>& notes) {
  std::string out;
  for (const auto& [key, text] : notes)
    if (key.rfind("fp32_in_int8 ", 0) == 0)
      out += (out.empty() ? "" : ", ") + text;
  return out.empty() ? "" : "; not quantized (fp32): " + out;
}

// How many matrix products an int8 build runs quantized, from their notes.
int quantized_products(const std::map<std::string, std::string>& notes) {
  int n = 0;
  for (const auto& [key, text] : notes) n += key.rfind("int8_product ", 0) == 0;
  return n;
}

backend::Effective OnednnExecutable::effective() const {
  const auto& notes = graph().net->notes();
  const bool bf16 = dt_ == Dt::bf16;
  const bool int8 = plan_.int8;
  std::string built;
  for (const auto& [size, g] : graphs_)
    built += (built.empty() ? "" : ", ") + std::to_string(size) +
             (size == train_batch_ ? " (train)" : "");
  int64_t count = 0;
  for (const auto& [name, st] : params_) count += st.value.size();
  backend::Effective e{
      max_threads(),
      "cpu",
      int8 ? "int8" : (bf16 ? "bf16" : "fp32"),
      backend::describe_optimizer(rule_.options()) +
          (bf16 ? ", fp32 master weights, bf16 copies" : ""),
      {{"cpu_isa", cpu_isa_name()},
       {"bf16_path", bf16 ? bf16_path() : "not used (fp32)"},
       {"layout",
        "oneDNN blocked (format_tag::any), e.g. " +
            note_or(notes, "conv_layout",
                    note_or(notes, "linear_layout", "no conv or linear"))},
       {"conv_impl", note_or(notes, "conv_impl", "no convolution")},
       {"built_for_batches", built},
       {"graph_builds", std::to_string(builds_)},
       {"kernels", graph().net->kernels()},
       {"reference_kernels", graph().net->reference_kernels()},
       {"parameters", std::to_string(count)}}};
  if (notes.count("lstm_impl") > 0)
    e.extras["lstm_impl"] = notes.at("lstm_impl");
  if (infer_ != nullptr) {
    e.extras["inference_only"] =
        "constant weights; " + std::to_string(graph().folded_norms) +
        " batch norms folded into the conv or linear before them, " +
        std::to_string(graph().fused_adds) +
        " adds fused into them (oneDNN sum post-op), " +
        std::to_string(graph().fused_gelus) +
        " GELUs fused into the linear before them (eltwise post-op)";
    e.extras["linear_impl"] = note_or(notes, "linear_impl", "no linear");
  }
  if (int8)
    e.extras["int8"] =
        std::string(
            "conv and linear (an attention's projections, a tied output "
            "head; " +
            std::to_string(quantized_products(notes)) +
            " quantized here): s8 weights (per output channel, ") +
        (plan_.vnni ? "127 levels each side"
                    : "63 levels each side: no VNNI; 126 where oneDNN's "
                      "reorder halves them, a conv with s8 inputs") +
        "), u8/s8 inputs (per tensor, MinMax over " +
        std::to_string(calibration_samples_) +
        " calibration samples); between two of them int8 (" +
        std::to_string(graph().int8_values) +
        " values), elsewhere fp32; VNNI: " + (cpu_has_vnni() ? "yes" : "no") +
        not_quantized(notes);
  return e;
}

}  // namespace

std::unique_ptr<backend::Executable> make_executable(
    const model::Model& m, const Options& o, Dt dt,
    const backend::Shapes& shapes) {
  return std::make_unique<OnednnExecutable>(m, o, dt, shapes);
}

}  // namespace nnbench::engines::onednn
