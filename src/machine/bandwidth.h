#pragma once
// The machine's memory bandwidth: the ceiling of work that reads every
// byte once per step (generation at batch 1 reads every weight once per
// token), as the GEMM peak (peak.h) is the ceiling of compute. STREAM's
// kernels and its counting: copy a = b moves 2 arrays, triad a = b + s*c
// moves 3, of 8-byte doubles, each array at least four times the last-level
// caches so that the caches hold none of it; the write-allocate reads a
// store causes are not counted (STREAM's rule). Beside them a read kernel
// (a sum over one array, 8 bytes per element), as likwid-bench's `load`:
// a decoding step only reads its weights, and a machine streams a read
// faster than a triad's mix, so the read figure is the ceiling for it (a
// triad's can be exceeded).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "machine/cpu.h"
#include "util/huge_pages.h"

namespace nnbench::machine {

struct Bandwidth {
  double copy_gbs = 0, triad_gbs = 0, read_gbs = 0;  // best pass, 1e9 B/s
  int threads = 0;
  int64_t array_bytes = 0;  // each of the three arrays
  int passes = 0;           // timed passes of each kernel (best kept)
  std::string method;       // the kernels, arrays, passes and threads
  std::string pages;        // the arrays' pages (util::HugeBuffer::pages)
  double seconds = 0;       // the whole measurement, allocation included
};

// Bounds of one array: at least 64 MiB (STREAM's 4x the last-level caches
// of a small machine), at most 1 GiB and an eighth of the memory available.
inline constexpr int64_t kMinArrayBytes = int64_t{64} << 20;
inline constexpr int64_t kMaxArrayBytes = int64_t{1} << 30;

// The array size for a machine: 4x the sum of its last-level caches, within
// the bounds above; `available_bytes` 0: unknown (the memory bound is left
// out). Rounded down to whole MiB.
int64_t stream_array_bytes(const Cpu& cpu, double available_bytes);

// The kernels on `threads` threads, each thread touching its own contiguous
// part first (so that its pages sit on its node) and working on the same
// part: a = b (copy) and a = b + s * c (triad).
void stream_copy(double* a, const double* b, int64_t n, int threads);
void stream_triad(double* a, const double* b, const double* c, double s,
                  int64_t n, int threads);
// The sum of a[0..n) (each thread its part, the parts' sums added).
double stream_read(const double* a, int64_t n, int threads);

// Allocates three arrays of `array_bytes` (util::HugeBuffer), one untimed pass
// of each kernel, then `passes` timed passes of each; the best of each is the
// figure. Throws nnbench::Error for bounds outside [1 MiB, kMaxArrayBytes],
// passes outside [1, 100] or threads outside [1, 1024], before allocating.
Bandwidth measure_bandwidth(int threads, int64_t array_bytes, int passes = 5);

// The read kernel again and again on one array, allocated and touched
// once: the quick reads between a generation's repetitions, more chances
// to find the best the machine gives during the run (its bandwidth moves
// within minutes on a shared machine).
class ReadProbe {
 public:
  // Throws nnbench::Error for bounds as measure_bandwidth's, before
  // allocating.
  ReadProbe(int threads, int64_t array_bytes);
  // One untimed pass, then timed ones until `min_passes` (1 to 100) and
  // `min_seconds` (0 to 10) are both reached, at most 100; the best, in
  // 1e9 B/s. A few passes read low on a shared VM: its bandwidth takes
  // tens of milliseconds of streaming to show (docs/performance.md).
  double measure(int min_passes = 3, double min_seconds = 0.05);
  int threads() const { return threads_; }

 private:
  int threads_;
  int64_t n_;
  util::HugeBuffer a_;
};

nlohmann::json to_json(const Bandwidth& b);

}  // namespace nnbench::machine
