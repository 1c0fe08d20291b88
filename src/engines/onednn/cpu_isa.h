#pragma once
// The instruction set oneDNN's JIT kernels target on this CPU, recorded with
// every result: bf16 on AMX and on AVX-512 BF16 differ by an order of
// magnitude, and fp32 kernels differ between AVX2 and AVX-512.
#include <string>

namespace nnbench::engines::onednn {

// oneDNN's effective ISA, e.g. "avx512_core_bf16".
std::string cpu_isa_name();
// Whether the effective ISA includes AVX-512 (avx512_core) / AVX2.
bool cpu_has_avx512();
bool cpu_has_avx2();
// Whether the effective ISA includes AVX512-BF16 instructions.
bool cpu_has_bf16();
// Whether the effective ISA has VNNI (int8 dot products without 16-bit
// intermediate sums): avx512_core_vnni or avx2_vnni and later.
bool cpu_has_vnni();
// The bf16 path the kernels take: "AMX (avx512_core_amx)" or "AVX-512 BF16
// (avx512_core_bf16)"; "none" without bf16 instructions.
std::string bf16_path();

}  // namespace nnbench::engines::onednn
