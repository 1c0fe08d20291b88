#include "engines/onednn/cpu_isa.h"

#include <dnnl.hpp>

namespace nnbench::engines::onednn {
namespace {

std::string name_of(dnnl::cpu_isa isa) {
  using I = dnnl::cpu_isa;
  switch (isa) {
    case I::sse41:
      return "sse41";
    case I::avx:
      return "avx";
    case I::avx2:
      return "avx2";
    case I::avx2_vnni:
      return "avx2_vnni";
    case I::avx512_mic:
      return "avx512_mic";
    case I::avx512_mic_4ops:
      return "avx512_mic_4ops";
    case I::avx512_core:
      return "avx512_core";
    case I::avx512_core_vnni:
      return "avx512_core_vnni";
    case I::avx512_core_bf16:
      return "avx512_core_bf16";
    case I::avx512_core_amx:
      return "avx512_core_amx";
    default:
      return "unknown";
  }
}

// The ISA values are bit sets (avx2_vnni > avx512_core_bf16 numerically
// but has no bf16), so test the bits, not the order.
bool has_all_bits(dnnl::cpu_isa need) {
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  return (isa & static_cast<unsigned>(need)) == static_cast<unsigned>(need);
}

}  // namespace

std::string cpu_isa_name() { return name_of(dnnl::get_effective_cpu_isa()); }

bool cpu_has_avx512() { return has_all_bits(dnnl::cpu_isa::avx512_core); }

bool cpu_has_avx2() { return has_all_bits(dnnl::cpu_isa::avx2); }

bool cpu_has_bf16() { return has_all_bits(dnnl::cpu_isa::avx512_core_bf16); }

bool cpu_has_vnni() {
  return has_all_bits(dnnl::cpu_isa::avx512_core_vnni) ||
         has_all_bits(dnnl::cpu_isa::avx2_vnni);
}

std::string bf16_path() {
  if (has_all_bits(dnnl::cpu_isa::avx512_core_amx))
    return "AMX (avx512_core_amx)";
  if (cpu_has_bf16()) return "AVX-512 BF16 (avx512_core_bf16)";
  return "none";
}

}  // namespace nnbench::engines::onednn
