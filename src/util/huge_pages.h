#pragma once
// Buffers on 2 MiB pages where the kernel gives them. A read streamed
// faster from 2 MiB pages than from 4 KiB ones on a 2-vCPU Zen 5
// (docs/performance.md, its huge pages section): the bandwidth ceiling's
// arrays ask for them, and so do nnbench's own engine's weights.
#include <cstddef>
#include <string>

namespace nnbench::util {

// The kernel's transparent huge pages mode, the bracketed word of
// /sys/kernel/mm/transparent_hugepage/enabled ("always", "madvise",
// "never"), or "" where it cannot be read.
std::string transparent_huge_pages();

// The largest buffer asked for: 1 TiB.
inline constexpr size_t kMaxHugeBufferBytes = size_t{1} << 40;

// `bytes` (1 to kMaxHugeBufferBytes, else nnbench::Error before mapping)
// rounded up to whole 2 MiB, fresh anonymous memory aligned to 2 MiB (never
// reused 4 KiB pages), advised onto huge pages (madvise), not touched.
// Throws std::bad_alloc when the memory is not there. Move-only; unmapped
// when destroyed.
class HugeBuffer {
 public:
  HugeBuffer() = default;
  explicit HugeBuffer(size_t bytes);
  HugeBuffer(HugeBuffer&& o) noexcept;
  HugeBuffer& operator=(HugeBuffer&& o) noexcept;
  HugeBuffer(const HugeBuffer&) = delete;
  HugeBuffer& operator=(const HugeBuffer&) = delete;
  ~HugeBuffer();

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  // Advised, and the kernel's mode lets it give them (it may still give
  // 4 KiB pages where it has no 2 MiB free).
  bool huge() const { return huge_; }
  // Which pages were asked for, and the mode, for a record.
  const std::string& pages() const { return pages_; }

 private:
  void release();
  void* map_ = nullptr;  // the mapping, alignment slack included
  size_t map_bytes_ = 0;
  void* data_ = nullptr;
  size_t bytes_ = 0;
  bool huge_ = false;
  std::string pages_;
};

}  // namespace nnbench::util
