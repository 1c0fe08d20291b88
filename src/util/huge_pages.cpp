#include "util/huge_pages.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <new>
#include <utility>

#include "util/error.h"

namespace nnbench::util {

std::string transparent_huge_pages() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  std::getline(in, line);
  const auto open = line.find('['), close = line.find(']');
  if (open == std::string::npos || close == std::string::npos || close < open)
    return "";
  return line.substr(open + 1, close - open - 1);
}

HugeBuffer::HugeBuffer(size_t bytes) {
  constexpr size_t kPage = size_t{2} << 20;
  if (bytes < 1 || bytes > kMaxHugeBufferBytes)
    throw Error("a buffer of " + std::to_string(bytes) +
                " bytes is outside 1 to 1 TiB");
  bytes_ = (bytes + kPage - 1) / kPage * kPage;
  // A fresh mapping with a page of slack to align within: memory the
  // allocator reuses may already sit on 4 KiB pages.
  map_bytes_ = bytes_ + kPage;
  map_ = mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE,
              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    throw std::bad_alloc();
  }
  const auto at = reinterpret_cast<uintptr_t>(map_);
  data_ = reinterpret_cast<void*>((at + kPage - 1) / kPage * kPage);
  const std::string thp = transparent_huge_pages();
  huge_ = madvise(data_, bytes_, MADV_HUGEPAGE) == 0 &&
          (thp == "always" || thp == "madvise");
  pages_ = std::string(huge_ ? "2 MiB pages asked for" : "4 KiB pages") +
           " (transparent huge pages: " + (thp.empty() ? "unknown" : thp) + ")";
}

HugeBuffer::HugeBuffer(HugeBuffer&& o) noexcept { *this = std::move(o); }

HugeBuffer& HugeBuffer::operator=(HugeBuffer&& o) noexcept {
  if (this != &o) {
    release();
    map_ = std::exchange(o.map_, nullptr);
    map_bytes_ = std::exchange(o.map_bytes_, 0);
    data_ = std::exchange(o.data_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    huge_ = std::exchange(o.huge_, false);
    pages_ = std::move(o.pages_);
  }
  return *this;
}

HugeBuffer::~HugeBuffer() { release(); }

void HugeBuffer::release() {
  if (map_ != nullptr) munmap(map_, map_bytes_);
  map_ = data_ = nullptr;
  map_bytes_ = bytes_ = 0;
}

void* HugeArena::take(size_t bytes) {
  if (bytes < 1 || bytes > kMaxHugeBufferBytes)
    throw Error("a buffer of " + std::to_string(bytes) +
                " bytes is outside 1 to 1 TiB");
  constexpr size_t kAlign = 64;
  const size_t n = (bytes + kAlign - 1) / kAlign * kAlign;
  if (chunks_.empty() || n > chunks_.back().bytes() - used_) {
    chunks_.emplace_back(std::max(n, kChunkBytes));
    used_ = 0;
  }
  void* at = static_cast<char*>(chunks_.back().data()) + used_;
  used_ += n;
  taken_ += bytes;
  return at;
}

size_t HugeArena::mapped() const {
  size_t n = 0;
  for (const auto& c : chunks_) n += c.bytes();
  return n;
}

}  // namespace nnbench::util
