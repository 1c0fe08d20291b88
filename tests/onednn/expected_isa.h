#pragma once
// What oneDNN dispatches to on this machine, computed here from the CPU's
// flags and the ONEDNN_MAX_CPU_ISA cap (oneDNN 2.6's names), independently
// of the engine, so that tests expect what the ISA at hand runs: int8
// weights on 127 levels with VNNI, 63 without; bf16 only with AVX512-BF16;
// fp32 Winograd 4x3 convolutions only on avx512_core and above.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

namespace nnbench::onednn_test {

struct ExpectedIsa {
  bool vnni = false, bf16 = false, amx = false;
  // The level the engine's matrix-vector loop (ops_gemv.cpp) runs at.
  std::string gemv_level = "x86-64 baseline";
  // oneDNN's avx512_core: its Winograd convolutions and brgemm matmul.
  bool avx512_core = false;
};

inline ExpectedIsa expected_isa() {
  std::ifstream in("/proc/cpuinfo");
  std::string flags;
  while (std::getline(in, flags) && flags.rfind("flags", 0) != 0) {
  }
  flags += " ";
  auto has = [&](const char* f) {
    return flags.find(" " + std::string(f) + " ") != std::string::npos;
  };
  const bool avx512 = has("avx512f") && has("avx512bw") && has("avx512vl");
  // x86-64-v3 and v4 as GCC defines them (v4: v3 and AVX-512 F, BW, CD,
  // DQ, VL).
  const bool v3 = has("avx2") && has("fma") && has("bmi1") && has("bmi2") &&
                  has("f16c") && has("movbe") && has("abm");
  const bool v4 = v3 && avx512 && has("avx512cd") && has("avx512dq");
  // oneDNN reads ONEDNN_MAX_CPU_ISA, else DNNL_MAX_CPU_ISA; a name it does
  // not take leaves it uncapped (Debian's 2.6 takes neither AVX512_MIC
  // name: `nnbench env` shows the native ISA under them).
  const char* env = std::getenv("ONEDNN_MAX_CPU_ISA");
  if (env == nullptr) env = std::getenv("DNNL_MAX_CPU_ISA");
  std::string cap = env == nullptr ? "ALL" : env;
  std::transform(cap.begin(), cap.end(), cap.begin(),
                 [](unsigned char c) { return std::toupper(c); });
  static const char* const kKnown[] = {"ALL",
                                       "SSE41",
                                       "AVX",
                                       "AVX2",
                                       "AVX2_VNNI",
                                       "AVX512_CORE",
                                       "AVX512_CORE_VNNI",
                                       "AVX512_CORE_BF16",
                                       "AVX512_CORE_AMX"};
  if (std::find(std::begin(kKnown), std::end(kKnown), cap) == std::end(kKnown))
    cap = "ALL";
  const bool avx512_cap = cap.rfind("AVX512_CORE", 0) == 0 || cap == "ALL";
  const bool avx2_cap = avx512_cap || cap.rfind("AVX2", 0) == 0;
  const std::string gemv = v4 && avx512_cap ? "x86-64-v4"
                           : v3 && avx2_cap ? "x86-64-v3"
                                            : "x86-64 baseline";
  // oneDNN 2.6's avx512_core: AVX-512 F, BW, VL and DQ.
  const bool wino = avx512 && has("avx512dq") && avx512_cap;
  ExpectedIsa cpu{(avx512 && has("avx512_vnni")) || has("avx_vnni"),
                  avx512 && has("avx512_bf16"),
                  has("amx_bf16") && has("amx_tile"), gemv, wino};
  if (cap == "ALL" || cap == "AVX512_CORE_AMX") return cpu;
  if (cap == "AVX512_CORE_BF16") return {cpu.vnni, cpu.bf16, false, gemv, wino};
  if (cap == "AVX512_CORE_VNNI")
    return {avx512 && has("avx512_vnni"), false, false, gemv, wino};
  if (cap == "AVX2_VNNI") return {has("avx_vnni"), false, false, gemv, wino};
  // SSE41, AVX, AVX2, AVX512_CORE: no VNNI, no bf16
  return {false, false, false, gemv, wino};
}

}  // namespace nnbench::onednn_test
