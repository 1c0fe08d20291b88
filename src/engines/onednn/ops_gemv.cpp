// The linears of a generation build's one-token step as plain
// matrix-vector products: at a few rows a decoding step reads every weight
// once, so its speed is the rate the weights stream from memory, and
// oneDNN 2.6's inner product reads them slower than a loop over the output
// rows does (docs/performance.md, "GPT-2 small generation").
#include <algorithm>

#include "engines/onednn/ops.h"

namespace nnbench::engines::onednn {
namespace {

float* data(const memory& m) {
  return static_cast<float*>(m.get_data_handle());
}

// y[r, o] = (accumulate ? y[r, o] : 0) + x[r, :] . w[o, :] + b[o], each
// weight row read once for all rows; the output rows split over the
// threads. GCC builds it for three ISA levels and picks one by the CPU at
// load time.
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3",
                             "default"))) void
gemv_rows(const float* x, const float* w, const float* b, float* y,
          int64_t rows, int64_t in, int64_t out, bool accumulate, bool relu) {
#pragma omp parallel for schedule(static)
  for (int64_t o = 0; o < out; ++o) {
    const float* wo = w + o * in;
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = x + r * in;
      float dot = 0;
#pragma omp simd reduction(+ : dot)
      for (int64_t k = 0; k < in; ++k) dot += xr[k] * wo[k];
      float v = dot + (b ? b[o] : 0.f) + (accumulate ? y[r * out + o] : 0.f);
      y[r * out + o] = relu ? std::max(v, 0.f) : v;
    }
  }
}

}  // namespace

void gemv_step(Net& net, const Gemv& g) {
  if (net.dt() != Dt::f32)
    throw std::logic_error("gemv_step: a one-token step runs fp32");
  net.fwd(When::kAlways, [g] {
    gemv_rows(data(g.x), data(g.w), g.b ? data(g.b) : nullptr, data(g.y),
              g.rows, g.in, g.out, g.accumulate, g.relu);
  });
}

}  // namespace nnbench::engines::onednn
