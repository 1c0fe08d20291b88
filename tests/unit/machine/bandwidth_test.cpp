// The memory bandwidth measurement: STREAM's kernels and the read kernel
// compute what they
// count, on any split of the arrays between threads; the array size
// follows the last-level caches within its bounds; bad bounds are refused
// before anything is allocated.
#include "machine/bandwidth.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "util/error.h"

namespace nnbench::machine {
namespace {

TEST(Bandwidth, KernelsComputeEveryElementOnAnySplit) {
  const int64_t n = 1001;  // splits unevenly between 3 and 7 threads
  for (int threads : {1, 3, 7}) {
    std::vector<double> a(n, -1), b(n), c(n);
    for (int64_t i = 0; i < n; ++i) {
      b[i] = static_cast<double>(i);
      c[i] = 2.0 * static_cast<double>(i);
    }
    stream_copy(a.data(), b.data(), n, threads);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(a[i], static_cast<double>(i)) << threads;
    stream_triad(a.data(), b.data(), c.data(), 3.0, n, threads);
    // i + 3 * 2i = 7i
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(a[i], 7.0 * static_cast<double>(i)) << threads;
    // 0 + 1 + ... + 1000, exact in doubles.
    EXPECT_EQ(stream_read(b.data(), n, threads), 1000.0 * 1001.0 / 2)
        << threads;
  }
}

Cache cache(const char* name, int64_t mib, int instances) {
  Cache c;
  c.name = name;
  c.size_bytes = mib << 20;
  c.instances = instances;
  return c;
}

TEST(Bandwidth, ArraysAreFourTimesTheLastLevelCachesWithinBounds) {
  Cpu cpu;
  // No cache known: the 64 MiB floor.
  EXPECT_EQ(stream_array_bytes(cpu, 0), int64_t{64} << 20);
  // Two L3s of 32 MiB: 4 x 64 MiB.
  cpu.caches = {cache("L1d", 0, 8), cache("L2", 1, 8), cache("L3", 32, 2)};
  EXPECT_EQ(stream_array_bytes(cpu, 0), int64_t{256} << 20);
  // An eighth of 1 GiB available: 128 MiB.
  EXPECT_EQ(stream_array_bytes(cpu, double(int64_t{1} << 30)),
            int64_t{128} << 20);
  // The L2 is the last level when there is no L3: 4 x 8 x 4 MiB.
  cpu.caches = {cache("L2", 4, 8)};
  EXPECT_EQ(stream_array_bytes(cpu, 0), int64_t{128} << 20);
  // A huge cache: the 1 GiB ceiling.
  cpu.caches = {cache("L3", 512, 2)};
  EXPECT_EQ(stream_array_bytes(cpu, 0), int64_t{1} << 30);
}

TEST(Bandwidth, BoundsAreCheckedBeforeAllocating) {
  EXPECT_THROW(measure_bandwidth(1, int64_t{2} << 30), Error);
  EXPECT_THROW(measure_bandwidth(1, 1000), Error);
  EXPECT_THROW(measure_bandwidth(1, int64_t{8} << 20, 0), Error);
  EXPECT_THROW(measure_bandwidth(0, int64_t{8} << 20), Error);
  EXPECT_THROW(measure_bandwidth(2000, int64_t{8} << 20), Error);
  EXPECT_THROW(ReadProbe(1, int64_t{2} << 30), Error);
  EXPECT_THROW(ReadProbe(0, int64_t{8} << 20), Error);
  ReadProbe probe(1, int64_t{1} << 20);
  EXPECT_THROW(probe.measure(0), Error);
  EXPECT_THROW(probe.measure(101), Error);
  EXPECT_THROW(probe.measure(3, -1), Error);
  EXPECT_THROW(probe.measure(3, 11), Error);
}

// The probe reads its one array again at each call: a figure each time,
// at its threads.
TEST(Bandwidth, AProbeReadsAgainAtEachCall) {
  ReadProbe probe(2, int64_t{8} << 20);
  EXPECT_EQ(probe.threads(), 2);
  for (int i = 0; i < 3; ++i) {
    const double gbs = probe.measure(2, 0.001);
    EXPECT_TRUE(std::isfinite(gbs) && gbs > 0) << gbs;
  }
}

TEST(Bandwidth, AMeasurementSaysWhatItRan) {
  const Bandwidth b = measure_bandwidth(2, int64_t{8} << 20, 3);
  EXPECT_TRUE(std::isfinite(b.copy_gbs) && b.copy_gbs > 0);
  EXPECT_TRUE(std::isfinite(b.triad_gbs) && b.triad_gbs > 0);
  EXPECT_TRUE(std::isfinite(b.read_gbs) && b.read_gbs > 0);
  EXPECT_EQ(b.array_bytes, int64_t{8} << 20);
  EXPECT_EQ(b.threads, 2);
  EXPECT_EQ(b.passes, 3);
  EXPECT_NE(b.method.find("3 x 8 MiB"), std::string::npos) << b.method;
  EXPECT_NE(b.method.find("best of 3 passes, 2 threads"), std::string::npos)
      << b.method;
  EXPECT_GT(b.seconds, 0);
  // Which pages it asked for, as the kernel's mode allows.
  const std::string thp = util::transparent_huge_pages();
  const bool huge = thp == "always" || thp == "madvise";
  EXPECT_NE(b.method.find(huge ? "; 2 MiB pages asked for" : "; 4 KiB pages"),
            std::string::npos)
      << b.method;
}

// Buffers start on a 2 MiB boundary (a huge page can back them from the
// first byte), are whole 2 MiB pages, say whether huge pages were asked
// for, and refuse sizes out of bounds before mapping anything.
TEST(Bandwidth, BuffersAreAlignedForHugePages) {
  const util::HugeBuffer a((size_t{3} << 20) + 1);
  ASSERT_NE(a.data(), nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % (uintptr_t{2} << 20), 0u);
  EXPECT_EQ(a.bytes(), size_t{4} << 20);
  static_cast<char*>(a.data())[a.bytes() - 1] = 1;  // all of it is mapped
  const std::string thp = util::transparent_huge_pages();
  EXPECT_EQ(a.huge(), thp == "always" || thp == "madvise") << thp;
  EXPECT_NE(a.pages().find("transparent huge pages: "), std::string::npos);
  EXPECT_THROW(util::HugeBuffer(0), Error);
  EXPECT_THROW(util::HugeBuffer(util::kMaxHugeBufferBytes + 1), Error);
  // Moved, the buffer stays one.
  util::HugeBuffer b((size_t{1} << 20));
  void* at = b.data();
  util::HugeBuffer c = std::move(b);
  EXPECT_EQ(c.data(), at);
  EXPECT_EQ(b.data(), nullptr);
}

}  // namespace
}  // namespace nnbench::machine
