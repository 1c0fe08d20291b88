#pragma once
// Buffers on 2 MiB pages where the kernel gives them. A read streamed
// faster from 2 MiB pages than from 4 KiB ones on a 2-vCPU Zen 5
// (docs/performance.md, its huge pages section): the bandwidth ceiling's
// arrays ask for them, and so do nnbench's own engine's weights.
#include <cstddef>
#include <string>
#include <vector>

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

// Many buffers packed into 2 MiB pages: each take() is aligned to 64 bytes
// inside chunks of at least kChunkBytes (one HugeBuffer each), so small
// buffers share pages instead of each rounding up to a whole one. Nothing
// is given back before the arena goes; move-only.
class HugeArena {
 public:
  static constexpr size_t kChunkBytes = size_t{32} << 20;
  // `bytes` (1 to kMaxHugeBufferBytes, else nnbench::Error before mapping),
  // not touched.
  void* take(size_t bytes);
  // What take() was asked for in all, and what the chunks map.
  size_t taken() const { return taken_; }
  size_t mapped() const;

 private:
  std::vector<HugeBuffer> chunks_;
  size_t used_ = 0;  // of the last chunk
  size_t taken_ = 0;
};

}  // namespace nnbench::util
