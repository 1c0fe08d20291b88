// MPI_Allreduce time against message size, and the ring model's link fitted
// to it (docs/performance.md). Run with 2 ranks:
//   mpirun -np 2 build/release/bin/allreduce_bandwidth
// Sizes 1 KiB to 64 MiB (x4), fp32 sums; per size at least 10 all-reduces
// and 0.2 s after 3 untimed ones; each time is the slowest rank's (a
// barrier before, the maximum over ranks after). Prints one line per size
// and the fit on rank 0. With NNBENCH_SYSTEM_MALLOC=1, glibc's defaults.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "bench/statistics.h"
#include "machine/env_fixes.h"
#include "scaling/ring_model.h"

int main(int argc, char** argv) {
  // nnbench's environment fixes, the malloc one above all: Open MPI's
  // temporary buffers for large all-reduces are freed and mapped again
  // every call otherwise (64 MiB: 277 ms instead of about 20).
  nnbench::machine::apply_environment_fixes(argv);
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<nnbench::scaling::Sample> samples;
  if (rank == 0)
    std::printf("ranks %d\n%12s %8s %12s %12s %14s\n", size, "bytes", "n",
                "median us", "p90 us", "bus GB/s");
  for (long bytes = 1024; bytes <= (64L << 20); bytes *= 4) {
    const long count = bytes / 4;
    std::vector<float> in(count, 1.0f), out(count);
    std::vector<double> times;
    double spent = 0;
    for (int i = 0; i < 3 || times.size() < 10 || spent < 0.2; ++i) {
      MPI_Barrier(MPI_COMM_WORLD);
      const auto t0 = std::chrono::steady_clock::now();
      MPI_Allreduce(in.data(), out.data(), static_cast<int>(count), MPI_FLOAT,
                    MPI_SUM, MPI_COMM_WORLD);
      double t =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
              .count();
      double slowest = 0;
      MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (i < 3) continue;  // untimed
      times.push_back(slowest);
      spent += slowest;
      if (times.size() >= 10000) break;
    }
    if (out[0] != static_cast<float>(size)) {
      std::fprintf(stderr, "wrong sum %g on rank %d\n", out[0], rank);
      MPI_Abort(MPI_COMM_WORLD, 1);
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
  MPI_Finalize();
  return 0;
}
