#pragma once
// Buffers on 2 MiB pages where the kernel gives them. A stream over
// memory on 4 KiB pages ran 4-24 % slower than over the same memory on
// 2 MiB pages on a 2-vCPU Zen 5 (docs/generation.md): the bandwidth
// ceiling's arrays and nnbench's own engine's weights ask for them, so that
// neither is measured on pages the other does not use.
#include <cstddef>
#include <memory>
#include <string>

namespace nnbench::util {

// The kernel's transparent huge pages mode, the bracketed word of
// /sys/kernel/mm/transparent_hugepage/enabled ("always", "madvise",
// "never"), or "" where it cannot be read.
std::string transparent_huge_pages();

struct FreeBuffer {
  void operator()(void* p) const;
};

// `bytes` rounded up to whole 2 MiB, aligned to 2 MiB, advised onto huge
// pages (madvise), not touched. `huge`: advised, and the kernel's mode lets
// it give them (it may still give 4 KiB pages where it has no 2 MiB free).
// Throws std::bad_alloc when the memory is not there.
struct HugeBuffer {
  std::unique_ptr<void, FreeBuffer> data;
  size_t bytes = 0;
  bool huge = false;
  std::string pages;  // which pages were asked for, and the mode
};
HugeBuffer huge_buffer(size_t bytes);

}  // namespace nnbench::util
