#pragma once
// Vector helpers for the hand-written loops of a token's step (the
// matrix-vector loop), built for two ISA levels by target attributes: the
// caller picks the level at run time.
#include <immintrin.h>

#define NNBENCH_V4 __attribute__((target("arch=x86-64-v4")))
#define NNBENCH_V3 __attribute__((target("arch=x86-64-v3")))

namespace nnbench::engines::onednn::simd {

// The lanes' sum, in registers (GCC's `omp simd` reduction went through
// the stack, one scalar add a lane).
NNBENCH_V3 inline float sum8(__m256 v) {
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  h = _mm_add_ss(h, _mm_movehdup_ps(h));
  return _mm_cvtss_f32(h);
}
// GCC 12 warns of the undefined vector that _mm512_castps512_ps256 and
// the extracts start from inside its headers, a false positive.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
NNBENCH_V4 inline float sum16(__m512 v) {
  return sum8(_mm256_add_ps(
      _mm512_castps512_ps256(v),
      _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))));
}
#pragma GCC diagnostic pop

}  // namespace nnbench::engines::onednn::simd
