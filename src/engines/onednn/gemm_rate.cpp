#include "engines/onednn/gemm_rate.h"

#include <algorithm>
#include <dnnl.hpp>
#include <limits>
#include <string>

#include "engines/onednn/cpu_isa.h"
#include "engines/onednn/threads.h"
#include "util/clock.h"

namespace nnbench::engines::onednn {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

// Varied values, as the OpenBLAS calibration uses (machine/peak.cpp).
void fill(memory& m, int64_t count, int seed) {
  auto* p = static_cast<float*>(m.get_data_handle());
  for (int64_t i = 0; i < count; ++i)
    p[i] = static_cast<float>((i * 7919 + seed) % 1009) / 1009.0f - 0.5f;
}

// C (fp32, M x N) = A (M x K) B (K x N) with A and B in `dt`; B in the
// layout matmul prefers (prepacked once, untimed, as weights are). Best of
// `reps` after a warm-up call.
backend::GemmRate time_one(memory::data_type dt, const std::string& precision,
                           int64_t m, int64_t n, int64_t k, int reps,
                           int threads) {
  const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream s(eng);
  const memory::desc a_md({m, k}, dt, Tag::ab), b_any({k, n}, dt, Tag::any),
      c_md({m, n}, memory::data_type::f32, Tag::ab);
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_any, c_md),
                                        eng);
  memory a32({{m, k}, memory::data_type::f32, Tag::ab}, eng),
      b32({{k, n}, memory::data_type::f32, Tag::ab}, eng),
      a(pd.src_desc(), eng), b(pd.weights_desc(), eng), c(pd.dst_desc(), eng);
  fill(a32, m * k, 1);
  fill(b32, k * n, 2);
  dnnl::reorder(a32, a).execute(s, a32, a);
  dnnl::reorder(b32, b).execute(s, b32, b);
  const dnnl::matmul mm(pd);
  const auto run = [&] {
    const auto t0 = util::Clock::now();
    mm.execute(s,
               {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
    s.wait();
    return util::seconds_since(t0);
  };
  run();  // warm-up: threads, page faults, caches
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < reps; ++i) best = std::min(best, run());
  const dnnl_version_t* v = dnnl_version();
  return {precision,
          "oneDNN " + std::to_string(v->major) + "." +
              std::to_string(v->minor) + "." + std::to_string(v->patch) +
              " matmul",
          std::string(pd.impl_info_str()) + ", " + std::to_string(m) + "x" +
              std::to_string(n) + "x" + std::to_string(k),
          threads,
          2.0 * m * n * static_cast<double>(k) / std::max(best, 1e-9) / 1e9};
}

}  // namespace

std::vector<backend::GemmRate> time_matmuls(int threads, int n) {
  const int before = max_threads();
  set_threads(threads);
  std::vector<backend::GemmRate> out;
  // Square, and the tall, thin shape of a convolution's GEMM (many output
  // pixels, few channels): on a Zen 5 EPYC the second ran 512-519 GFLOP/s
  // fp32 on 2 threads against 420-490 for 2048^3 (docs/performance.md),
  // and convolutions do reach it.
  const int64_t shapes[][3] = {{n, n, n}, {4 * n, n / 4, n / 4}};
  for (const auto& [m, nn, k] : shapes) {
    if (m < 1 || nn < 1 || k < 1) continue;
    try {
      out.push_back(
          time_one(memory::data_type::f32, "fp32", m, nn, k, 5, threads));
      if (cpu_has_bf16())
        out.push_back(
            time_one(memory::data_type::bf16, "bf16", m, nn, k, 5, threads));
    } catch (const dnnl::error&) {
      // No matmul for this shape or type here: the other GEMMs stand.
    }
  }
  set_threads(before);
  return out;
}

}  // namespace nnbench::engines::onednn
