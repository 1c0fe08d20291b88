#pragma once
// bfloat16 <-> float for the few values hand-written steps produce.
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace nnbench::engines::onednn {

// Round to nearest even, as oneDNN's conversions do (no NaN inputs here).
inline uint16_t to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

inline float from_bf16(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Element i of a float or bf16 buffer as float, and back: hand-written
// steps serve both precisions with one template.
inline float load(const float* p, size_t i) { return p[i]; }
inline float load(const uint16_t* p, size_t i) { return from_bf16(p[i]); }
inline void store(float* p, size_t i, float v) { p[i] = v; }
inline void store(uint16_t* p, size_t i, float v) { p[i] = to_bf16(v); }

// `count` values of a bf16 buffer as floats, and back: the hand-written
// bf16 steps widen around loops that sum in fp32.
inline void widen_all(const uint16_t* from, float* to, size_t count) {
  for (size_t i = 0; i < count; ++i) to[i] = from_bf16(from[i]);
}
inline void narrow_all(const float* from, uint16_t* to, size_t count) {
  for (size_t i = 0; i < count; ++i) to[i] = to_bf16(from[i]);
}

}  // namespace nnbench::engines::onednn
