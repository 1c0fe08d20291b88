#include "engines/onednn/generator.h"

#include <algorithm>
#include <map>
#include <string>

#include "engines/onednn/bf16.h"
#include "engines/onednn/cpu_isa.h"
#include "engines/onednn/errors.h"
#include "engines/onednn/graph.h"
#include "engines/onednn/threads.h"
#include "model/generation.h"
#include "model/params.h"
#include "util/error.h"

namespace nnbench::engines::onednn {
namespace {

class OnednnGenerator : public backend::Generator {
 public:
  OnednnGenerator(const model::Model& m, const backend::Options& o,
                  const backend::GenerationShape& shape, Dt dt)
      : model_(m),
        shape_(shape),
        dt_(dt),
        int8_(o.precision == "int8"),
        eng_(dnnl::engine::kind::cpu, 0) {
    for (auto& v : backend::initial_params(m, o.seed, o.weights))
      params_[v.spec.name] = {v.spec.shape, std::move(v.data), {}};
    plan_.kv_capacity = shape.prompt + shape.new_tokens;

    // Both builds now, none inside a timed generation (a prompt shorter
    // than the shape's gets a build of its own, with its own weights, when
    // first seen).
    // int8's s8 weights in the token's build; in a prompt's (of any
    // length, later ones too) where the loop has VNNI (int8_rows), else a
    // prompt's build stays fp32 throughout.
    plan_.int8_weights = int8_;
    step_ = build(1);
    plan_.int8_weights = int8_ && gemv_int8_vnni();
    prompt(shape.prompt);
    // The logits widened at bf16: sized now, not inside a generation.
    wide_.reserve(static_cast<size_t>(shape.batch * m.input.vocab));
  }

  std::vector<int64_t> prefill(
      const std::vector<std::vector<int64_t>>& prompts) override {
    last_ = nullptr;  // a call that fails leaves no logits
    const int64_t t = backend::check_prompts(prompts, shape_);
    ids_.clear();
    for (const auto& row : prompts)
      ids_.insert(ids_.end(), row.begin(), row.end());
    length_ = 0;  // a prefill that fails leaves nothing to decode on
    return translate_errors([&] {
      state_.position = 0;
      auto next = run(prompt(t));
      length_ = t;
      return next;
    });
  }

  std::vector<int64_t> decode(const std::vector<int64_t>& tokens) override {
    last_ = nullptr;  // a call that fails leaves no logits
    backend::check_decode(tokens, shape_);
    if (length_ == 0 || length_ >= plan_.kv_capacity)
      throw Error("generation: decode " +
                  std::string(length_ == 0 ? "before a prefill"
                                           : "past the cache's " +
                                                 std::to_string(length_) +
                                                 " positions"));
    ids_ = tokens;
    return translate_errors([&] {
      state_.position = length_;
      auto next = run(step_);
      ++length_;
      return next;
    });
  }

  // The last build's output, which nothing writes until the next call.
  std::optional<std::vector<float>> last_logits() override {
    if (last_ == nullptr) return std::nullopt;
    std::vector<float> rows;
    const Logits l = logits_of(*last_);
    for (int64_t b = 0; b < shape_.batch; ++b)
      rows.insert(rows.end(), l.row(b), l.row(b) + l.vocab);
    return rows;
  }

  backend::Effective effective() const override {
    const Graph& g = prompts_.at(shape_.prompt);
    const bool bf16 = dt_ == Dt::bf16, int8 = int8_;
    const std::string precision = bf16 ? "bf16" : int8 ? "int8" : "fp32";
    return {
        max_threads(),
        "cpu",
        precision,
        "",
        {{"cpu_isa", cpu_isa_name()},
         {"weights",
          !int8 ? precision
          : gemv_int8_vnni()
              ? "int8 in the prompt's and the token's linears (s8, one fp32 "
                "scale per output row, symmetric, max |w| / 127; each row's "
                "input quantized on the fly, u8, one scale per row, the "
                "products summed in int32 by AVX512-VNNI: below 16 rows by the "
                "matrix-vector loop, from 16 rows (a prompt's, or a batch's "
                "tokens) by oneDNN's int8 matmul); "
                "attention over the cache fp32"
              : "int8 in the token's build (s8, one fp32 scale per output "
                "row, symmetric, max |w| / 127; weight-only: activations "
                "and sums fp32), fp32 in the prompt's"},
         {"kv_cache", "[N, heads, " + std::to_string(plan_.kv_capacity) +
                          ", head width] per attention layer, fp32"},
         {"builds",
          std::string(int8 && gemv_int8_vnni()
                          ? "a prompt's and a token's, whose linears both "
                            "run the int8 loop on plain [out, in] weights "
                            "(ops_gemv.cpp)"
                          : "a prompt's (weights in the layouts its "
                            "primitives chose) and a token's, whose linears "
                            "are a matrix-vector loop over the output rows "
                            "on plain [out, in] weights (ops_gemv.cpp)") +
              (bf16 ? "; bf16 activations and weights, fp32 sums, the "
                      "attention over the cache in fp32"
                    : "")},
         {"gemv_level", gemv_level()},
         {"kernels", g.net->kernels() + "; one token: " + step_.net->kernels()},
         {"reference_kernels", g.net->reference_kernels() + "; one token: " +
                                   step_.net->reference_kernels()}}};
  }

 private:
  Graph build(int64_t tokens) {
    return translate_errors([&] {
      return build_graph(model::with_sequence(model_, tokens), shape_.batch,
                         dt_, eng_, &params_, &state_, 0, &plan_);
    });
  }

  Graph& prompt(int64_t t) {
    auto it = prompts_.find(t);
    if (it == prompts_.end()) it = prompts_.emplace(t, build(t)).first;
    return it->second;
  }

  // A build's output [N, T, vocab] (T = 1 where the tied head read the
  // last position only): each row's logits at its last position (at bf16,
  // widened into wide_ by run).
  struct Logits {
    const float* data;
    int64_t vocab, positions;
    const float* row(int64_t b) const {
      return data + (b * positions + positions - 1) * vocab;
    }
  };
  Logits logits_of(const Graph& g) const {
    const memory& out = output(g);
    const auto dims = out.get_desc().dims();
    return {dt_ == Dt::bf16 ? wide_.data()
                            : static_cast<const float*>(out.get_data_handle()),
            dims.back(), dims.at(1)};
  }
  const memory& output(const Graph& g) const {
    return g.net->value(static_cast<int>(model_.layers.size()) - 1).mem;
  }

  // Runs a build on the bound tokens; each row's argmax of its logits.
  std::vector<int64_t> run(Graph& g) {
    state_.tokens = ids_.data();
    Net& net = *g.net;
    net.run_forward(false);
    net.stream().wait();
    if (dt_ == Dt::bf16) {
      const memory& out = output(g);
      const size_t count = out.get_desc().get_size() / sizeof(uint16_t);
      wide_.resize(count);
      widen_all(static_cast<const uint16_t*>(out.get_data_handle()),
                wide_.data(), count);
    }
    last_ = &g;
    const Logits l = logits_of(g);
    std::vector<int64_t> next(shape_.batch);
    for (int64_t b = 0; b < shape_.batch; ++b)
      next[b] = std::max_element(l.row(b), l.row(b) + l.vocab) - l.row(b);
    return next;
  }

  model::Model model_;
  backend::GenerationShape shape_;
  Dt dt_;
  bool int8_;  // s8 weights in the token's build
  dnnl::engine eng_;
  ParamStates params_;
  RunState state_;
  InferPlan plan_;
  Graph step_;
  std::map<int64_t, Graph> prompts_;
  std::vector<int64_t> ids_;
  int64_t length_ = 0;           // positions in the cache
  const Graph* last_ = nullptr;  // the build whose logits are the last
  std::vector<float> wide_;      // the last output widened, at bf16
};

}  // namespace

std::unique_ptr<backend::Generator> make_generator(
    const model::Model& m, const backend::Options& o,
    const backend::GenerationShape& shape, Dt dt) {
  if (o.device != "cpu")
    throw backend::Unimplemented("device " + o.device + " (onednn has: cpu)");
  backend::check_generates(m, shape);
  if (o.threads > 0) set_threads(o.threads);
  return std::make_unique<OnednnGenerator>(m, o, shape, dt);
}

}  // namespace nnbench::engines::onednn
