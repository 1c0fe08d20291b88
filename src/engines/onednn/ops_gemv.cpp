// The linears of a generation build's one-token step as plain
// matrix-vector products: at a few rows a decoding step reads every weight
// once, so its speed is the rate the weights stream from memory, and
// oneDNN 2.6's inner product reads them slower than a loop over the output
// rows does (docs/performance.md, "GPT-2 small generation").
#include <algorithm>

#include "engines/onednn/cpu_isa.h"
#include "engines/onednn/ops.h"

namespace nnbench::engines::onednn {
namespace {

float* data(const memory& m) {
  return static_cast<float*>(m.get_data_handle());
}

// y[r, o] = (accumulate ? y[r, o] : 0) + x[r, :] . w[o, :] + b[o], each
// weight row read once for all rows; the output rows split over the
// threads. Written once and built for three ISA levels (a macro, since
// OpenMP outlines the loop inside the function that holds the pragma).
#define NNBENCH_GEMV_BODY                                                     \
  _Pragma("omp parallel for schedule(static)") for (int64_t o = 0; o < out;   \
                                                    ++o) {                    \
    const float* wo = w + o * in;                                             \
    for (int64_t r = 0; r < rows; ++r) {                                      \
      const float* xr = x + r * in;                                           \
      float dot = 0;                                                          \
      _Pragma("omp simd reduction(+ : dot)") for (int64_t k = 0; k < in; ++k) \
          dot += xr[k] * wo[k];                                               \
      float v = dot + (b ? b[o] : 0.f) + (accumulate ? y[r * out + o] : 0.f); \
      y[r * out + o] = relu ? std::max(v, 0.f) : v;                           \
    }                                                                         \
  }

#define NNBENCH_GEMV_ARGS                                                 \
  const float *x, const float *w, const float *b, float *y, int64_t rows, \
      int64_t in, int64_t out, bool accumulate, bool relu

__attribute__((target("arch=x86-64-v4"))) void gemv_v4(NNBENCH_GEMV_ARGS) {
  NNBENCH_GEMV_BODY
}
__attribute__((target("arch=x86-64-v3"))) void gemv_v3(NNBENCH_GEMV_ARGS) {
  NNBENCH_GEMV_BODY
}
void gemv_baseline(NNBENCH_GEMV_ARGS) { NNBENCH_GEMV_BODY }

using GemvFn = void (*)(NNBENCH_GEMV_ARGS);

struct Level {
  GemvFn fn;
  const char* name;
};

// The level oneDNN's kernels run at too (its effective ISA, which
// ONEDNN_MAX_CPU_ISA caps), so that a capped run checks and times the
// AVX2 build on an AVX-512 machine; the CPU must have the whole level.
Level level() {
  static const Level l = [] {
    if (cpu_has_avx512() && __builtin_cpu_supports("x86-64-v4"))
      return Level{gemv_v4, "x86-64-v4"};
    if (cpu_has_avx2() && __builtin_cpu_supports("x86-64-v3"))
      return Level{gemv_v3, "x86-64-v3"};
    return Level{gemv_baseline, "x86-64 baseline"};
  }();
  return l;
}

}  // namespace

void gemv_step(Net& net, const Gemv& g) {
  if (net.dt() != Dt::f32)
    throw std::logic_error("gemv_step: a one-token step runs fp32");
  net.fwd(When::kAlways, [g] {
    level().fn(data(g.x), data(g.w), g.b ? data(g.b) : nullptr, data(g.y),
               g.rows, g.in, g.out, g.accumulate, g.relu);
  });
}

std::string gemv_level() { return level().name; }

}  // namespace nnbench::engines::onednn
