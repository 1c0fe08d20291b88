#include "backends/onednn/executable.h"

#include <cmath>
#include <string>

#include "backends/onednn/graph.h"
#include "backends/onednn/threads.h"
#include "model/analysis.h"
#include "model/params.h"
#include "util/error.h"

namespace nnbench::backends::onednn {
namespace {

using backend::Batch;
using backend::Options;

// oneDNN's allocation failures and unsupported cases become result states.
template <typename F>
auto translate_errors(F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc& e) {
    throw backend::OutOfMemory(e.what());
  } catch (const dnnl::error& e) {
    if (e.status == dnnl_out_of_memory) throw backend::OutOfMemory(e.what());
    if (e.status == dnnl_unimplemented) throw backend::Unimplemented(e.what());
    throw std::runtime_error(std::string("oneDNN: ") + e.what());
  }
}

class OnednnExecutable : public backend::Executable {
 public:
  OnednnExecutable(const model::Model& m, const Options& o, Dt dt)
      : model_(m), options_(o), dt_(dt), eng_(dnnl::engine::kind::cpu, 0) {
    for (auto& v : model::init_params(m, o.seed)) {
      const size_t n = v.data.size();
      params_[v.spec.name] = {v.spec.shape, std::move(v.data),
                              std::vector<float>(n, 0.f)};
    }
    state_.seed = o.seed;
    build(1);
  }

  void load_batches(const std::vector<Batch>& batches) override {
    translate_errors([&] {
      inputs_.clear();
      tokens_.clear();
      labels_.clear();
      if (batches.empty()) return 0;
      const int64_t n = batches[0].input.shape.at(0);
      if (n != batch_) build(n);
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
      graph_.net->stream().wait();
      bound_ = -1;
      return 0;
    });
  }

  void infer(int batch) override {
    bind(batch);
    graph_.net->run_forward(false);
  }

  void train_step(int batch) override {
    bind(batch);
    Net& net = *graph_.net;
    net.run_forward(true);
    loss_ = graph_.loss->loss_and_grad(labels_[batch]);
    net.run_backward();
    graph_.params->step(net.stream(),
                        static_cast<float>(options_.learning_rate),
                        static_cast<float>(options_.momentum));
    ++state_.steps;
    trained_ = true;
  }

  double last_loss() override { return loss_; }
  // The update's sum primitive is rebuilt when the rate changes: cheap next
  // to a step, and only schedules change it.
  void set_learning_rate(double lr) override { options_.learning_rate = lr; }

  void synchronize() override { graph_.net->stream().wait(); }

  backend::Tensor output() override {
    synchronize();
    graph_.loss->read_logits();
    return graph_.loss->output();
  }

  std::map<std::string, backend::Tensor> parameters() override {
    return graph_.params->values(graph_.net->stream());
  }

  std::map<std::string, backend::Tensor> gradients() override {
    if (!trained_) return {};
    return graph_.params->grads(graph_.net->stream());
  }

  std::map<std::string, std::string> effective() const override;

 private:
  void build(int64_t batch) {
    translate_errors([&] {
      if (graph_.params) graph_.params->save(graph_.net->stream());
      graph_ = build_graph(model_, batch, dt_, eng_, &params_, &state_);
      batch_ = batch;
      return 0;
    });
  }

  // A float batch in the layout the first layer reads.
  memory to_net(const backend::Tensor& t) {
    Net& net = *graph_.net;
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
      graph_.net->value(-1).mem.set_data_handle(
          inputs_.at(batch).get_data_handle());
    else
      state_.tokens = tokens_.at(batch).data();
    bound_ = batch;
  }

  model::Model model_;
  Options options_;
  Dt dt_;
  dnnl::engine eng_;
  ParamStates params_;
  RunState state_;
  Graph graph_;
  int64_t batch_ = 0;
  std::vector<memory> inputs_;
  std::vector<std::vector<int64_t>> tokens_;
  std::vector<backend::Tensor> labels_;
  int bound_ = -1;
  double loss_ = std::nan("");
  bool trained_ = false;
};

std::string note_or(const std::map<std::string, std::string>& notes,
                    const std::string& key, const std::string& fallback) {
  const auto it = notes.find(key);
  return it == notes.end() ? fallback : it->second;
}

std::map<std::string, std::string> OnednnExecutable::effective() const {
  const auto& notes = graph_.net->notes();
  const bool bf16 = dt_ == Dt::bf16;
  return {
      {"device", "cpu"},
      {"threads", std::to_string(max_threads())},
      {"precision", bf16 ? "bf16" : "fp32"},
      {"layout",
       "oneDNN blocked (format_tag::any), e.g. " +
           note_or(notes, "conv_layout",
                   note_or(notes, "linear_layout", "no conv or linear"))},
      {"conv_impl", note_or(notes, "conv_impl", "no convolution")},
      {"built_for_batch", std::to_string(batch_)},
      {"reference_kernels", note_or(notes, "ref_impls", "none")},
      {"optimizer", "SGD lr " + std::to_string(options_.learning_rate) +
                        " momentum " + std::to_string(options_.momentum) +
                        (bf16 ? ", fp32 master weights, bf16 copies" : "")},
      {"parameters", std::to_string(model::analyze(model_).params)},
  };
}

}  // namespace

std::unique_ptr<backend::Executable> make_executable(const model::Model& m,
                                                     const Options& o, Dt dt) {
  return std::make_unique<OnednnExecutable>(m, o, dt);
}

}  // namespace nnbench::backends::onednn
