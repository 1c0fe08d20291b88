// All-reduce time against message size over either engine, and the ring
// model's link fitted to it (docs/performance.md). Run with 2 ranks:
//   tests/distributed/run_ranks.sh 2 build/release/bin/allreduce_bandwidth mpi
//   tests/distributed/run_ranks.sh 2 build/release/bin/allreduce_bandwidth gloo
// (or ranks started in network namespaces, docs/distributed.md). Sizes
// 1 KiB to 64 MiB (x4), fp32 sums through distributed::Group, the path training
// takes; per size at least 10 all-reduces and 0.2 s after 3 untimed ones;
// each time is the slowest rank's (a max-reduce before as a barrier, the
// maximum over ranks after). Prints one line per size and the fit on rank
// 0. With NNBENCH_SYSTEM_MALLOC=1, glibc's defaults.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench/statistics.h"
#include "distributed/comm_engines.h"
#include "machine/env_fixes.h"
#include "scaling/ring_model.h"

int main(int argc, char** argv) {
  // nnbench's environment fixes, the malloc one above all: Open MPI's
  // temporary buffers for large all-reduces are freed and mapped again
  // every call otherwise (64 MiB: 277 ms instead of about 20).
  nnbench::machine::apply_environment_fixes(argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s mpi|gloo [max-bytes]\n", argv[0]);
    return 2;
  }
  const long max_bytes = argc > 2 ? std::atol(argv[2]) : (64L << 20);
  auto g = nnbench::distributed::make_group(argv[1], {});
  const int rank = g->rank(), size = g->size();
  std::vector<nnbench::scaling::Sample> samples;
  if (rank == 0)
    std::printf("%s, ranks %d\n%12s %8s %12s %12s %14s\n",
                g->engine_version().c_str(), size, "bytes", "n", "median us",
                "p90 us", "bus GB/s");
  for (long bytes = 1024; bytes <= max_bytes; bytes *= 4) {
    const long count = bytes / 4;
    std::vector<float> data(count);
    std::vector<double> times;
    double spent = 0;
    for (int i = 0; i < 3 || times.size() < 10 || spent < 0.2; ++i) {
      std::fill(data.begin(), data.end(), 1.0f);
      double barrier = 0;
      g->allreduce_max(&barrier, 1);
      const auto t0 = std::chrono::steady_clock::now();
      g->allreduce_sum(data.data(), count);
      double t =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
              .count();
      g->allreduce_max(&t, 1);
      if (data[0] != static_cast<float>(size)) {
        std::fprintf(stderr, "wrong sum %g on rank %d\n", data[0], rank);
        return 1;
      }
      if (i < 3) continue;  // untimed
      times.push_back(t);
      spent += t;
      if (times.size() >= 10000) break;
    }
    const double med = nnbench::bench::median(times);
    samples.push_back({static_cast<double>(bytes), med});
    // Bus bandwidth as nccl-tests define it: bytes x 2 (P - 1) / P / time.
    const double bus = bytes * 2.0 * (size - 1) / size / med / 1e9;
    if (rank == 0)
      std::printf("%12ld %8zu %12.2f %12.2f %14.3f\n", bytes, times.size(),
                  med * 1e6, nnbench::bench::quantile(times, 0.9) * 1e6, bus);
  }
  if (rank == 0 && size == 2) {
    const auto link = nnbench::scaling::fit_two_rank(samples);
    std::printf(
        "ring model fit: alpha %.2f us per step, beta %.4f ns per "
        "byte (%.2f GB/s)\n",
        link.alpha * 1e6, link.beta * 1e9, 1e-9 / link.beta);
    for (const auto& s : samples)
      std::printf(
          "  %12.0f bytes: model %.2f us, measured %.2f us (%+.1f %%)\n",
          s.bytes, nnbench::scaling::allreduce_seconds(link, 2, s.bytes) * 1e6,
          s.seconds * 1e6,
          nnbench::scaling::error_percent(
              nnbench::scaling::allreduce_seconds(link, 2, s.bytes),
              s.seconds));
  }
  return 0;
}
