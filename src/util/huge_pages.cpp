#include "util/huge_pages.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <new>

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

void FreeBuffer::operator()(void* p) const { std::free(p); }

HugeBuffer huge_buffer(size_t bytes) {
  constexpr size_t kPage = size_t{2} << 20;
  HugeBuffer out;
  out.bytes = (std::max<size_t>(bytes, 1) + kPage - 1) / kPage * kPage;
  void* p = std::aligned_alloc(kPage, out.bytes);
  if (p == nullptr) throw std::bad_alloc();
  out.data.reset(p);
  const std::string thp = transparent_huge_pages();
  out.huge = madvise(p, out.bytes, MADV_HUGEPAGE) == 0 &&
             (thp == "always" || thp == "madvise");
  out.pages = std::string(out.huge ? "2 MiB pages asked for" : "4 KiB pages") +
              " (transparent huge pages: " + (thp.empty() ? "unknown" : thp) +
              ")";
  return out;
}

}  // namespace nnbench::util
