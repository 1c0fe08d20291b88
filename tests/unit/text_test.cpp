// Counted words and sizes in messages.
#include "util/text.h"

#include <gtest/gtest.h>

namespace nnbench::util {
namespace {

TEST(Text, CountsAgreeWithTheirNumber) {
  EXPECT_EQ(count(1, "thread"), "1 thread");
  EXPECT_EQ(count(2, "thread"), "2 threads");
  EXPECT_EQ(count(0, "iteration"), "0 iterations");
  EXPECT_EQ(plural_of("loss"), "losses");
  EXPECT_EQ(plural_of("batch"), "batches");
  EXPECT_EQ(plural_of("weight"), "weights");
}

TEST(Text, SizesInBinaryUnits) {
  EXPECT_EQ(bytes_text(512), "512 B");
  EXPECT_EQ(bytes_text(1.5 * (1 << 30)), "1.50 GiB");
  EXPECT_EQ(bytes_text(1000.0 * (1 << 20)), "1000 MiB");
  // The message that read "28208524.274346 GiB".
  EXPECT_EQ(bytes_text(28208524.274346 * (1 << 30)), "26.9 PiB");
}

}  // namespace
}  // namespace nnbench::util
