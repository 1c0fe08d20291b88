"""What this CPU offers int8 kernels, read from /proc/cpuinfo, never assumed.

Without VNNI, the u8 x s8 instructions ONNX Runtime's and OpenVINO's int8
kernels fall back to add pairs of products in 16-bit sums, which saturate
with full-range weights; both projects recommend 7-bit weights there
(ONNX Runtime's reduce_range, NNCF's overflow fix). NNBENCH_ASSUME_NO_VNNI=1
takes that path on a VNNI CPU too, so that it can be tested anywhere.
"""
from __future__ import annotations

import os


def cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def has_vnni() -> bool:
    if os.environ.get("NNBENCH_ASSUME_NO_VNNI") == "1":
        return False
    flags = cpu_flags()
    return "avx512_vnni" in flags or "avx_vnni" in flags or "amx_int8" in flags


def int8_weights_text() -> str:
    """How the quantizers are told to size int8 weights on this CPU."""
    if has_vnni():
        return "8-bit weights (VNNI)"
    return "7-bit weights (no VNNI: reduced range against 16-bit saturation)"


def onednn_avx512_problem() -> str:
    """Why oneDNN runs below AVX-512 here ("": it does not): the CPU has no
    AVX-512 (avx512f and avx512bw), or ONEDNN_MAX_CPU_ISA (or its old name
    DNNL_MAX_CPU_ISA) caps it below AVX512_CORE."""
    flags = cpu_flags()
    if not {"avx512f", "avx512bw"} <= flags:
        return "the CPU has no AVX-512 (avx512f, avx512bw)"
    cap = (os.environ.get("ONEDNN_MAX_CPU_ISA") or os.environ.get("DNNL_MAX_CPU_ISA")
           or "ALL").upper()
    if cap != "ALL" and not cap.startswith(("AVX512", "AVX10", "AMX")):
        return f"oneDNN is capped to {cap} (ONEDNN_MAX_CPU_ISA)"
    return ""
