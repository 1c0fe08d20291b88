// The linears of a generation build's one-token step as plain
// matrix-vector products: at a few rows a decoding step reads every weight
// once, so its speed is the rate the weights stream from memory, and
// oneDNN 2.6's inner product reads them slower than a loop over the output
// rows does (docs/performance.md, "GPT-2 small generation"). At bf16 the
// weights stay bf16 (half the bytes to stream) and are widened to fp32 in
// the loop, the rows' inputs and outputs converted once around it, the
// sums fp32. At int8 the weights are s8 with one fp32 scale per output
// row, a quarter of the bytes. Widened like bf16's (weight-only: inputs,
// outputs and sums fp32), the loop is bound by its arithmetic, not by
// memory (docs/performance.md); with AVX512-VNNI each row's input is
// quantized too, per row, and the products summed in int32 by vpdpbusd,
// as ONNX Runtime's dynamic quantization and llama.cpp's Q8_0 dot
// products do; a prompt's many rows (int8_rows) take the same quantized
// inputs and weights through oneDNN's int8 matmul instead (gemm_s8_vnni).
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engines/onednn/bf16.h"
#include "engines/onednn/cpu_isa.h"
#include "engines/onednn/ops.h"
#include "engines/onednn/simd.h"
#include "util/huge_pages.h"

namespace nnbench::engines::onednn {
namespace {

// A weight as fp32: bf16 is fp32's upper half (from_bf16, written so that
// the compiler vectorizes it: a widening and a shift).
inline float widen(float w) { return w; }
inline float widen(uint16_t w) { return from_bf16(w); }
inline float widen(int8_t w) { return static_cast<float>(w); }

// GCC 12 warns of the undefined vector some AVX-512 intrinsics start from
// (_mm512_undefined_epi32 inside _mm512_cvtepu16_epi32,
// _mm512_cvtepi8_epi32 and _mm512_slli_epi32), a false positive: silenced
// for the widening loads.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

NNBENCH_V4 inline __m512 wide16(const float* w) { return _mm512_loadu_ps(w); }
NNBENCH_V4 inline __m512 wide16(const uint16_t* w) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(
      _mm512_cvtepu16_epi32(
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w))),
      16));
}
NNBENCH_V4 inline __m512 wide16(const int8_t* w) {
  return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(w))));
}
NNBENCH_V3 inline __m256 wide8(const float* w) { return _mm256_loadu_ps(w); }
NNBENCH_V3 inline __m256 wide8(const uint16_t* w) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(
      _mm256_cvtepu16_epi32(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(w))),
      16));
}
NNBENCH_V3 inline __m256 wide8(const int8_t* w) {
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(
      _mm_loadl_epi64(reinterpret_cast<const __m128i*>(w))));
}
#pragma GCC diagnostic pop

using simd::sum16;
using simd::sum8;

// x . w over n inputs, the weights widened to fp32: four independent
// sums a vector wide (a single one waits on each multiply-add's latency;
// docs/performance.md, "The matrix-vector loop's four sums"), then the
// tail.
template <typename W>
NNBENCH_V4 inline float dot_v4(const float* x, const W* w, int64_t n) {
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  int64_t k = 0;
  for (; k + 64 <= n; k += 64) {
    a0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + k), wide16(w + k), a0);
    a1 = _mm512_fmadd_ps(_mm512_loadu_ps(x + k + 16), wide16(w + k + 16), a1);
    a2 = _mm512_fmadd_ps(_mm512_loadu_ps(x + k + 32), wide16(w + k + 32), a2);
    a3 = _mm512_fmadd_ps(_mm512_loadu_ps(x + k + 48), wide16(w + k + 48), a3);
  }
  for (; k + 16 <= n; k += 16)
    a0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + k), wide16(w + k), a0);
  float dot =
      sum16(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
  for (; k < n; ++k) dot += x[k] * widen(w[k]);
  return dot;
}

template <typename W>
NNBENCH_V3 inline float dot_v3(const float* x, const W* w, int64_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  int64_t k = 0;
  for (; k + 32 <= n; k += 32) {
    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + k), wide8(w + k), a0);
    a1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + k + 8), wide8(w + k + 8), a1);
    a2 = _mm256_fmadd_ps(_mm256_loadu_ps(x + k + 16), wide8(w + k + 16), a2);
    a3 = _mm256_fmadd_ps(_mm256_loadu_ps(x + k + 24), wide8(w + k + 24), a3);
  }
  for (; k + 8 <= n; k += 8)
    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + k), wide8(w + k), a0);
  float dot = sum8(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
  for (; k < n; ++k) dot += x[k] * widen(w[k]);
  return dot;
}

template <typename W>
inline float dot_baseline(const float* x, const W* w, int64_t n) {
  float dot = 0;
#pragma omp simd reduction(+ : dot)
  for (int64_t k = 0; k < n; ++k) dot += x[k] * widen(w[k]);
  return dot;
}

// y[r, o] = (accumulate ? y[r, o] : 0) + s[o] x[r, :] . w[o, :] + b[o] (s,
// the rows' scales, for s8 weights only), each weight row read once for
// all rows; the output rows split over the threads. Written once and built
// for three ISA levels (a macro, since OpenMP outlines the loop inside the
// function that holds the pragma).
#define NNBENCH_GEMV_BODY(DOT)                                              \
  _Pragma("omp parallel for schedule(static)") for (int64_t o = 0; o < out; \
                                                    ++o) {                  \
    const W* wo = w + o * in;                                               \
    for (int64_t r = 0; r < rows; ++r) {                                    \
      const float dot = DOT(x + r * in, wo, in);                            \
      float v = dot * (s ? s[o] : 1.f) + (b ? b[o] : 0.f) +                 \
                (accumulate ? y[r * out + o] : 0.f);                        \
      y[r * out + o] = relu ? std::max(v, 0.f) : v;                         \
    }                                                                       \
  }

#define NNBENCH_GEMV_ARGS                                               \
  const float *x, const W *w, const float *s, const float *b, float *y, \
      int64_t rows, int64_t in, int64_t out, bool accumulate, bool relu

template <typename W>
NNBENCH_V4 void gemv_v4(NNBENCH_GEMV_ARGS) {
  NNBENCH_GEMV_BODY(dot_v4)
}
template <typename W>
NNBENCH_V3 void gemv_v3(NNBENCH_GEMV_ARGS) {
  NNBENCH_GEMV_BODY(dot_v3)
}
template <typename W>
void gemv_baseline(NNBENCH_GEMV_ARGS) {
  NNBENCH_GEMV_BODY(dot_baseline)
}

template <typename W>
using GemvFn = void (*)(NNBENCH_GEMV_ARGS);

// The rows' inputs for VNNI's u8 x s8 products: per row r, symmetric,
// xs[r] = max |x| / 127 and xq = round(x / xs) + 128 (unsigned, as
// vpdpbusd reads its first operand). A row too small for a normal scale
// reads as zeros (128s with scale 0: its outputs are the biases); a row
// with a NaN or an infinity gets a NaN scale, so that its outputs are NaN
// as the fp32 loop's would be.
__attribute__((target("arch=x86-64-v4"))) void quantize_inputs(
    const float* x, uint8_t* xq, float* xs, int64_t rows, int64_t in) {
#pragma omp parallel for schedule(static) if (rows > 1)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * in;
    uint8_t* qr = xq + r * in;
    float reach = 0;
    bool finite = true;
    for (int64_t k = 0; k < in; ++k) {
      finite = finite && std::isfinite(xr[k]);
      reach = std::max(reach, std::abs(xr[k]));
    }
    const float scale = reach / 127.f;
    if (!finite || !(scale >= std::numeric_limits<float>::min())) {
      xs[r] = finite ? 0.f : std::numeric_limits<float>::quiet_NaN();
      std::fill(qr, qr + in, uint8_t{128});
      continue;
    }
    xs[r] = scale;
    for (int64_t k = 0; k < in; ++k)
      qr[k] = static_cast<uint8_t>(
          std::clamp(std::nearbyint(xr[k] / scale), -127.f, 127.f) + 128.f);
  }
}

#define NNBENCH_VNNI __attribute__((target("arch=x86-64-v4,avx512vnni")))

// The 16 lanes' sum (GCC 12's _mm512_reduce_add_epi32 warns of an
// uninitialized value inside it).
NNBENCH_VNNI inline int32_t lanes_sum(__m512i acc) {
  __m256i h8 = _mm256_add_epi32(_mm512_extracti32x8_epi32(acc, 0),
                                _mm512_extracti32x8_epi32(acc, 1));
  __m128i h4 = _mm_add_epi32(_mm256_castsi256_si128(h8),
                             _mm256_extracti128_si256(h8, 1));
  h4 = _mm_add_epi32(h4, _mm_shuffle_epi32(h4, 0x4E));
  h4 = _mm_add_epi32(h4, _mm_shuffle_epi32(h4, 0xB1));
  return _mm_cvtsi128_si32(h4);
}

// What the int8 loop's sums are asked for: y[r, o] = (accumulate ? y : 0)
// + xs[r] s[o] (xq[r, :] . w[o, :] - 128 wsum[o]) + b[o], the dot product
// of u8 inputs and s8 weights in int32 (at most 255 x 127 x in: within
// int32 up to 66,000 inputs), less the 128 added to every input times the
// row's weight sum.
struct S8Gemv {
  const uint8_t* xq;
  const float* xs;
  const int8_t* w;
  const int32_t* wsum;
  const float *s, *b;
  float* y;
  int64_t rows, in, out;
  bool accumulate, relu;

  // Output o of row r from its dot product's k-loop sum `dot` and the
  // inputs from k on (the tail).
  NNBENCH_VNNI void finish(int64_t r, int64_t o, int32_t dot, int64_t k) const {
    const uint8_t* xr = xq + r * in;
    const int8_t* wo = w + o * in;
    for (; k < in; ++k)
      dot += static_cast<int32_t>(xr[k]) * static_cast<int32_t>(wo[k]);
    store(r, o, dot);
  }
  // Output o of row r from its whole dot product.
  NNBENCH_VNNI void store(int64_t r, int64_t o, int32_t dot) const {
    dot -= 128 * wsum[o];
    float v = static_cast<float>(dot) * xs[r] * s[o] + (b ? b[o] : 0.f) +
              (accumulate ? y[r * out + o] : 0.f);
    y[r * out + o] = relu ? std::max(v, 0.f) : v;
  }
  // Output o for every row, 64 products at a time by vpdpbusd.
  NNBENCH_VNNI void one(int64_t o) const {
    const int8_t* wo = w + o * in;
    for (int64_t r = 0; r < rows; ++r) {
      const uint8_t* xr = xq + r * in;
      __m512i acc = _mm512_setzero_si512();
      int64_t k = 0;
      for (; k + 64 <= in; k += 64)
        acc = _mm512_dpbusd_epi32(acc, _mm512_loadu_si512(xr + k),
                                  _mm512_loadu_si512(wo + k));
      finish(r, o, lanes_sum(acc), k);
    }
  }
  // Outputs o to o + 3 for every row: each input read once for the four
  // (a few rows; from kGemmRows on, gemm_s8_vnni runs instead).
  NNBENCH_VNNI void four(int64_t o) const {
    const int8_t* w0 = w + o * in;
    for (int64_t r = 0; r < rows; ++r) {
      const uint8_t* xr = xq + r * in;
      __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
      int64_t k = 0;
      for (; k + 64 <= in; k += 64) {
        const __m512i x = _mm512_loadu_si512(xr + k);
        a0 = _mm512_dpbusd_epi32(a0, x, _mm512_loadu_si512(w0 + k));
        a1 = _mm512_dpbusd_epi32(a1, x, _mm512_loadu_si512(w0 + in + k));
        a2 = _mm512_dpbusd_epi32(a2, x, _mm512_loadu_si512(w0 + 2 * in + k));
        a3 = _mm512_dpbusd_epi32(a3, x, _mm512_loadu_si512(w0 + 3 * in + k));
      }
      finish(r, o, lanes_sum(a0), k);
      finish(r, o + 1, lanes_sum(a1), k);
      finish(r, o + 2, lanes_sum(a2), k);
      finish(r, o + 3, lanes_sum(a3), k);
    }
  }
};

// One row (a token): an output per iteration, as the fp32 and bf16 loops
// (four at a time measured slower there; not measured for this one). A
// few rows (a batch's tokens; from kGemmRows on a matrix product runs):
// four outputs per iteration, the last few alone.
NNBENCH_VNNI void gemv_s8_vnni(const S8Gemv& g) {
  if (g.rows == 1) {
#pragma omp parallel for schedule(static)
    for (int64_t o = 0; o < g.out; ++o) g.one(o);
    return;
  }
  const int64_t blocks = g.out / 4;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < blocks; ++i) g.four(4 * i);
  for (int64_t o = 4 * blocks; o < g.out; ++o) g.one(o);
}

struct Level {
  GemvFn<float> f32;
  GemvFn<uint16_t> bf16;
  GemvFn<int8_t> s8;
  const char* name;
};

// The level oneDNN's kernels run at too (its effective ISA, which
// ONEDNN_MAX_CPU_ISA caps), so that a capped run checks and times the
// AVX2 build on an AVX-512 machine; the CPU must have the whole level.
Level level() {
  static const Level l = [] {
    if (cpu_has_avx512() && __builtin_cpu_supports("x86-64-v4"))
      return Level{gemv_v4<float>, gemv_v4<uint16_t>, gemv_v4<int8_t>,
                   "x86-64-v4"};
    if (cpu_has_avx2() && __builtin_cpu_supports("x86-64-v3"))
      return Level{gemv_v3<float>, gemv_v3<uint16_t>, gemv_v3<int8_t>,
                   "x86-64-v3"};
    return Level{gemv_baseline<float>, gemv_baseline<uint16_t>,
                 gemv_baseline<int8_t>, "x86-64 baseline"};
  }();
  return l;
}

template <typename T>
T* data(const memory& m) {
  return static_cast<T*>(m.get_data_handle());
}

bool is_bf16(const memory& m) { return m.get_desc().data_type() == Dt::bf16; }

// With VNNI, which the int8 step then takes: oneDNN's effective ISA has it
// (so ONEDNN_MAX_CPU_ISA caps it) and the loop runs at x86-64-v4.
bool int8_vnni() {
  static const bool v = std::string(level().name) == "x86-64-v4" &&
                        cpu_has_vnni() && __builtin_cpu_supports("avx512vnni");
  return v;
}

// A matrix's s8 weights: in the build's arena of 2 MiB pages
// (ParamStore::int8_pages), where a token's step streams them as it does
// the fp32 and bf16 weights, or on the heap where they are read once and
// let go (gemm_s8_vnni's reorder) or no arena is given.
struct RowsS8 {
  RowsS8(size_t n, util::HugeArena* pages) {
    if (pages != nullptr) {
      q = static_cast<int8_t*>(pages->take(n));
    } else {
      heap.resize(n);
      q = heap.data();
    }
  }
  void release_heap() {
    std::vector<int8_t>().swap(heap);
    q = nullptr;
  }
  int8_t* q = nullptr;
  std::vector<int8_t> heap;  // q's storage without an arena
  std::vector<float> scale;
  std::vector<int32_t> sum;
};

// Symmetric, per output row: s = max |w| / 127, q = round(w / s); each
// row's sum of q for VNNI's unsigned inputs.
std::shared_ptr<RowsS8> quantize_rows(const std::vector<float>& w, int64_t out,
                                      int64_t in, util::HugeArena* pages) {
  if (static_cast<int64_t>(w.size()) != out * in)
    throw std::logic_error("gemv_step: int8 weights of another size");
  auto rows = std::make_shared<RowsS8>(w.size(), pages);
  RowsS8& r = *rows;
  int8_t* q = r.q;
  r.scale.resize(out);
  r.sum.assign(out, 0);
  for (int64_t o = 0; o < out; ++o) {
    const float* row = w.data() + o * in;
    float reach = 0;
    for (int64_t k = 0; k < in; ++k) reach = std::max(reach, std::abs(row[k]));
    // A row too small for its scale to be a normal float reads as zeros.
    const float s = reach / 127.f > 0 ? reach / 127.f : 1.f;
    r.scale[o] = s;
    for (int64_t k = 0; k < in; ++k) {
      q[o * in + k] = static_cast<int8_t>(
          std::clamp(std::nearbyint(row[k] / s), -127.f, 127.f));
      r.sum[o] += q[o * in + k];
    }
  }
  return rows;
}

// Every output from its dot product in sums [rows, out].
NNBENCH_VNNI void store_rows(const S8Gemv& g, const int32_t* sums) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < g.rows; ++r)
    for (int64_t o = 0; o < g.out; ++o) g.store(r, o, sums[r * g.out + o]);
}

// From this many rows on (a prompt's; a token's at a batch this large) the
// int8 products run as a matrix product: gemm_s8_vnni. Not tuned: only
// 1 row (a token) and 512 (pp512) were timed.
constexpr int64_t kGemmRows = 16;

// A prompt's rows, many at once: the loop's quantized inputs and weights,
// their products summed by oneDNN's int8 matmul (u8 x s8 -> s32), whose
// kernels tile rows and outputs so that a weight is read once per tile of
// rows where the loop reads it once per row; then the loop's finish on
// each sum (less 128 x the row's weight sum, the two scales, the bias, the
// residual, the ReLU).
void gemm_s8_vnni(Net& net, const Gemv& g, std::shared_ptr<RowsS8> w) {
  const Md src(Dims{g.rows, g.in}, Dt::u8, Tag::ab);
  const Md sums(Dims{g.rows, g.out}, Dt::s32, Tag::ab);
  const dnnl::matmul::primitive_desc pd(
      {src, Md(Dims{g.in, g.out}, Dt::s8, Tag::any), sums}, net.attr(),
      net.engine());
  // The [out, in] rows seen as [in, out] (ba), reordered once.
  const memory plain(Md(Dims{g.in, g.out}, Dt::s8, Tag::ba), net.engine(),
                     w->q);
  const memory weights = net.alloc(pd.weights_desc());
  make_reorder(plain, weights)
      .execute(net.stream(), {{DNNL_ARG_FROM, plain}, {DNNL_ARG_TO, weights}});
  net.stream().wait();
  w->release_heap();  // the matmul reads its own copy
  // Read only inside this step: one buffer for every linear's.
  const memory xq = net.temporary(src, 0), acc = net.temporary(sums, 1);
  auto xs = std::make_shared<std::vector<float>>(g.rows);
  net.fwd(When::kAlways, [g, xq, xs] {
    quantize_inputs(data<float>(g.x), data<uint8_t>(xq), xs->data(), g.rows,
                    g.in);
  });
  net.fwd(
      When::kAlways, dnnl::matmul(pd),
      {{DNNL_ARG_SRC, xq}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, acc}});
  net.fwd(When::kAlways, [g, w, xs, acc] {
    store_rows({nullptr, xs->data(), nullptr, w->sum.data(), w->scale.data(),
                g.b ? data<float>(g.b) : nullptr, data<float>(g.y), g.rows,
                g.in, g.out, g.accumulate, g.relu},
               data<int32_t>(acc));
  });
}

}  // namespace

const std::vector<float>* int8_weights_of(const LayerCtx& c,
                                          const std::string& name) {
  if (c.infer == nullptr || !c.infer->int8_weights) return nullptr;
  return &c.params.state(name).value;
}

void gemv_step(Net& net, const Gemv& g) {
  const bool bf16 = net.dt() == Dt::bf16;
  if (!bf16 && net.dt() != Dt::f32)
    throw std::logic_error("gemv_step: a one-token step runs fp32 or bf16");
  if (g.int8_from != nullptr) {
    if (bf16) throw std::logic_error("gemv_step: int8 weights in a bf16 step");
    const bool gemm = int8_vnni() && g.rows >= kGemmRows;
    auto w =
        quantize_rows(*g.int8_from, g.out, g.in, gemm ? nullptr : g.int8_pages);
    if (gemm) return gemm_s8_vnni(net, g, w);
    if (int8_vnni()) {
      // The rows' quantized inputs and scales, made at build time.
      struct Inputs {
        std::vector<uint8_t> q;
        std::vector<float> scale;
      };
      auto xi = std::make_shared<Inputs>();
      xi->q.resize(g.rows * g.in);
      xi->scale.resize(g.rows);
      net.fwd(When::kAlways, [g, w, xi] {
        quantize_inputs(data<float>(g.x), xi->q.data(), xi->scale.data(),
                        g.rows, g.in);
        gemv_s8_vnni({xi->q.data(), xi->scale.data(), w->q, w->sum.data(),
                      w->scale.data(), g.b ? data<float>(g.b) : nullptr,
                      data<float>(g.y), g.rows, g.in, g.out, g.accumulate,
                      g.relu});
      });
      return;
    }
    net.fwd(When::kAlways, [g, w] {
      level().s8(data<float>(g.x), w->q, w->scale.data(),
                 g.b ? data<float>(g.b) : nullptr, data<float>(g.y), g.rows,
                 g.in, g.out, g.accumulate, g.relu);
    });
    return;
  }
  if (!bf16) {
    net.fwd(When::kAlways, [g] {
      level().f32(data<float>(g.x), data<float>(g.w), nullptr,
                  g.b ? data<float>(g.b) : nullptr, data<float>(g.y), g.rows,
                  g.in, g.out, g.accumulate, g.relu);
    });
    return;
  }
  if (!is_bf16(g.x) || !is_bf16(g.w) || !is_bf16(g.y))
    throw std::logic_error("gemv_step: a bf16 step's x, w and y are bf16");
  // fp32 copies of the rows' inputs, outputs and the bias, made at build
  // time: the step allocates nothing.
  struct Scratch {
    std::vector<float> x, y, b;
  };
  auto s = std::make_shared<Scratch>();
  s->x.resize(g.rows * g.in);
  s->y.resize(g.rows * g.out);
  if (g.b) s->b.resize(g.out);
  net.fwd(When::kAlways, [g, s] {
    widen_all(data<uint16_t>(g.x), s->x.data(), g.rows * g.in);
    if (g.accumulate)
      widen_all(data<uint16_t>(g.y), s->y.data(), g.rows * g.out);
    const float* b = nullptr;
    if (g.b && is_bf16(g.b)) {
      widen_all(data<uint16_t>(g.b), s->b.data(), g.out);
      b = s->b.data();
    } else if (g.b) {
      b = data<float>(g.b);
    }
    level().bf16(s->x.data(), data<uint16_t>(g.w), nullptr, b, s->y.data(),
                 g.rows, g.in, g.out, g.accumulate, g.relu);
    narrow_all(s->y.data(), data<uint16_t>(g.y), g.rows * g.out);
  });
}

std::string gemv_level() { return level().name; }

bool gemv_int8_vnni() { return int8_vnni(); }

}  // namespace nnbench::engines::onednn
