// util::HugeArena: buffers packed into 2 MiB pages without overlapping.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "util/error.h"
#include "util/huge_pages.h"

namespace nnbench {
namespace {

uintptr_t address(const void* p) { return reinterpret_cast<uintptr_t>(p); }

TEST(HugeArena, SmallBuffersShareAChunkAlignedAndApart) {
  util::HugeArena a;
  char* x = static_cast<char*>(a.take(100));
  char* y = static_cast<char*>(a.take(4096));
  char* z = static_cast<char*>(a.take(1));
  // 100 rounds up to 128 and 4096 stays: y 128 bytes after x, z 4096 after y.
  EXPECT_EQ(address(y) - address(x), 128u);
  EXPECT_EQ(address(z) - address(y), 4096u);
  EXPECT_EQ(address(x) % (size_t{2} << 20), 0u);  // a chunk's first byte
  EXPECT_EQ(a.taken(), 100u + 4096u + 1u);
  EXPECT_EQ(a.mapped(), util::HugeArena::kChunkBytes);
  // Written whole, none overwrites another.
  std::memset(x, 1, 100);
  std::memset(y, 2, 4096);
  std::memset(z, 3, 1);
  EXPECT_EQ(x[99], 1);
  EXPECT_EQ(y[0], 2);
  EXPECT_EQ(y[4095], 2);
  EXPECT_EQ(z[0], 3);
}

TEST(HugeArena, ABufferThatDoesNotFitTakesAChunkOfItsOwn) {
  util::HugeArena a;
  a.take(1000);
  const size_t big = util::HugeArena::kChunkBytes + 1;
  char* b = static_cast<char*>(a.take(big));
  EXPECT_EQ(address(b) % (size_t{2} << 20), 0u);
  // The second chunk: the request rounded up to whole 2 MiB pages.
  EXPECT_EQ(a.mapped(), util::HugeArena::kChunkBytes +
                            util::HugeArena::kChunkBytes + (size_t{2} << 20));
  b[0] = 1;
  b[big - 1] = 2;
  EXPECT_EQ(b[big - 1], 2);
}

TEST(HugeArena, BoundsAreCheckedBeforeMapping) {
  util::HugeArena a;
  EXPECT_THROW(a.take(0), Error);
  EXPECT_THROW(a.take(util::kMaxHugeBufferBytes + 1), Error);
  EXPECT_EQ(a.mapped(), 0u);
}

}  // namespace
}  // namespace nnbench
