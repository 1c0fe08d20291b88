#include "machine/bandwidth.h"

#include <fmt/core.h>

#include <algorithm>
#include <memory>
#include <thread>
#include <vector>

#include "util/clock.h"
#include "util/error.h"
#include "util/huge_pages.h"

namespace nnbench::machine {
namespace {

// Runs f(t, begin, end) for each thread t's contiguous part of [0, n).
template <typename F>
void in_numbered_parts(int64_t n, int threads, F f) {
  if (threads <= 1) {
    f(0, int64_t{0}, n);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (int t = 0; t < threads; ++t) {
    const int64_t begin = n * t / threads, end = n * (t + 1) / threads;
    pool.emplace_back([=] { f(t, begin, end); });
  }
  for (auto& th : pool) th.join();
}

template <typename F>
void in_parts(int64_t n, int threads, F f) {
  in_numbered_parts(n, threads,
                    [&f](int, int64_t begin, int64_t end) { f(begin, end); });
}

void check_bounds(int threads, int64_t array_bytes, int passes) {
  if (array_bytes < (int64_t{1} << 20) || array_bytes > kMaxArrayBytes)
    throw Error(fmt::format(
        "memory bandwidth: an array of {} bytes is outside 1 MiB to {} MiB",
        array_bytes, kMaxArrayBytes >> 20));
  if (passes < 1 || passes > 100)
    throw Error(
        fmt::format("memory bandwidth: {} passes is outside 1 to 100", passes));
  if (threads < 1 || threads > 1024)
    throw Error(fmt::format("memory bandwidth: {} threads is outside 1 to 1024",
                            threads));
}

}  // namespace

int64_t stream_array_bytes(const Cpu& cpu, double available_bytes) {
  std::string last;  // the last level: "L3", else "L2"
  for (const auto& c : cpu.caches)
    if (c.name.size() == 2 && c.name[0] == 'L') last = std::max(last, c.name);
  int64_t llc = 0;
  for (const auto& c : cpu.caches)
    if (c.name == last) llc += c.size_bytes * std::max(c.instances, 1);
  int64_t bytes = std::clamp(4 * llc, kMinArrayBytes, kMaxArrayBytes);
  if (available_bytes > 0)
    bytes = std::min(bytes, static_cast<int64_t>(available_bytes / 8));
  return bytes / (int64_t{1} << 20) * (int64_t{1} << 20);
}

void stream_copy(double* a, const double* b, int64_t n, int threads) {
  in_parts(n, threads, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) a[i] = b[i];
  });
}

void stream_triad(double* a, const double* b, const double* c, double s,
                  int64_t n, int threads) {
  in_parts(n, threads, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) a[i] = b[i] + s * c[i];
  });
}

namespace {

// Sixteen independent sums, vectorised by the ISA level GCC picks at load
// time (as the decoding step's matrix-vector loop is): the adds' latency
// must not bound the loop below the memory's rate.
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3",
                             "default"))) double
sum_part(const double* a, int64_t begin, int64_t end) {
  double s[16] = {};
  int64_t i = begin;
  for (; i + 16 <= end; i += 16)
    for (int k = 0; k < 16; ++k) s[k] += a[i + k];
  for (; i < end; ++i) s[0] += a[i];
  double total = 0;
  for (double x : s) total += x;
  return total;
}

}  // namespace

double stream_read(const double* a, int64_t n, int threads) {
  std::vector<double> part(std::max(threads, 1), 0.0);
  in_numbered_parts(n, threads, [&, a](int t, int64_t begin, int64_t end) {
    part[t] = sum_part(a, begin, end);
  });
  double total = 0;
  for (double p : part) total += p;
  return total;
}

Bandwidth measure_bandwidth(int threads, int64_t array_bytes, int passes) {
  check_bounds(threads, array_bytes, passes);
  const auto start = util::Clock::now();
  const int64_t n = array_bytes / static_cast<int64_t>(sizeof(double));
  // Not value-initialised: each thread's first touch places its pages.
  const size_t size = static_cast<size_t>(n) * sizeof(double);
  const util::HugeBuffer ha(size), hb(size), hc(size);
  auto* a = static_cast<double*>(ha.data());
  auto* b = static_cast<double*>(hb.data());
  auto* c = static_cast<double*>(hc.data());
  in_parts(n, threads, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      a[i] = 0;
      b[i] = 1;
      c[i] = 2;
    }
  });
  const auto best = [&](auto kernel) {
    kernel();  // untimed: the first pass after the touch
    double fastest = 0;
    for (int p = 0; p < passes; ++p) {
      const auto t0 = util::Clock::now();
      kernel();
      const double s = util::seconds_since(t0);
      if (p == 0 || s < fastest) fastest = s;
    }
    return fastest;
  };
  const double copy_s = best([&] { stream_copy(a, b, n, threads); });
  const double triad_s = best([&] { stream_triad(a, b, c, 3.0, n, threads); });
  volatile double sum = 0;
  const double read_s = best([&] { sum = sum + stream_read(c, n, threads); });
  // Read the result back, so that no pass is work the compiler may drop.
  volatile double sink = a[0] + a[n - 1];
  (void)sink;
  Bandwidth out;
  const double bytes = static_cast<double>(n) * sizeof(double);
  out.copy_gbs = 2 * bytes / copy_s / 1e9;
  out.triad_gbs = 3 * bytes / triad_s / 1e9;
  out.read_gbs = bytes / read_s / 1e9;
  out.threads = threads;
  out.array_bytes = n * static_cast<int64_t>(sizeof(double));
  out.passes = passes;
  out.method = fmt::format(
      "STREAM copy and triad over 3 x {} MiB float64 arrays, and a read "
      "(sum) of one, best of {} passes, {} thread{}; bytes counted as STREAM "
      "does, 16 per element copied, 24 per triad element, 8 per element "
      "read; {}",
      out.array_bytes >> 20, passes, threads, threads == 1 ? "" : "s",
      ha.pages());
  out.pages = ha.pages();
  out.seconds = util::seconds_since(start);
  return out;
}

ReadProbe::ReadProbe(int threads, int64_t array_bytes) : threads_(threads) {
  check_bounds(threads, array_bytes, 1);
  n_ = array_bytes / static_cast<int64_t>(sizeof(double));
  // Each thread's first touch places its pages.
  a_ = util::HugeBuffer(static_cast<size_t>(n_) * sizeof(double));
  auto* a = static_cast<double*>(a_.data());
  in_parts(n_, threads, [a](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) a[i] = 1;
  });
}

double ReadProbe::measure(int min_passes, double min_seconds) {
  check_bounds(threads_, n_ * static_cast<int64_t>(sizeof(double)), min_passes);
  if (!(min_seconds >= 0 && min_seconds <= 10))
    throw Error(fmt::format(
        "memory bandwidth: {} s of reads is outside 0 to 10", min_seconds));
  const auto* a = static_cast<const double*>(a_.data());
  volatile double sink = stream_read(a, n_, threads_);  // untimed
  double fastest = 0, spent = 0;
  for (int p = 0; p < 100 && (p < min_passes || spent < min_seconds); ++p) {
    const auto t0 = util::Clock::now();
    sink = sink + stream_read(a, n_, threads_);
    const double s = util::seconds_since(t0);
    spent += s;
    if (p == 0 || s < fastest) fastest = s;
  }
  if (!(fastest > 0)) return 0;  // a clock too coarse: no figure
  return static_cast<double>(n_) * sizeof(double) / fastest / 1e9;
}

nlohmann::json to_json(const Bandwidth& b) {
  return {{"copy_gbs", b.copy_gbs},
          {"triad_gbs", b.triad_gbs},
          {"read_gbs", b.read_gbs},
          {"threads", b.threads},
          {"array_bytes", b.array_bytes},
          {"passes", b.passes},
          {"method", b.method},
          {"seconds", b.seconds},
          {"pages", b.pages}};
}

}  // namespace nnbench::machine
