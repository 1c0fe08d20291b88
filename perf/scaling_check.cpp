// The ring model's prediction against measured data-parallel runs
// (docs/performance.md, perf/data_parallel.sh):
//   scaling_check ALPHA_US BETA_NS_PER_BYTE ONE.json RANKS.json...
// ONE.json: one process, one thread per rank's share of the CPUs, the
// global batch (its median step is the 1-rank compute time); RANKS.json:
// data-parallel runs of the same model, backend and global batch (strong
// scaling). Prints, per run, the predicted and measured step time and
// speed-up with the error in %, then predictions at 4 to 64 ranks.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "results/result.h"
#include "scaling/ring_model.h"

namespace {

// The first result of a results file; exits 2 naming the file when it
// cannot be read (a run that wrote nothing).
nnbench::results::RunResult load(const char* path) {
  std::ifstream in(path);
  const bool opened = in.is_open();
  const auto j = nlohmann::json::parse(in, nullptr, false);
  if (!opened || j.is_discarded() || !j.contains("results") ||
      j["results"].empty()) {
    std::fprintf(stderr, "%s: no results to read\n", path);
    std::exit(2);
  }
  return nnbench::results::report_from_json(j).results.at(0);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace nnbench::scaling;
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s ALPHA_US BETA_NS ONE.json RANKS.json...\n",
                 argv[0]);
    return 2;
  }
  const Link link{std::atof(argv[1]) * 1e-6, std::atof(argv[2]) * 1e-9};
  const auto one = load(argv[3]);
  for (int i = 4; i < argc; ++i) {
    const auto run = load(argv[i]);
    if (!run.distributed) {
      std::fprintf(stderr, "%s: not a data-parallel run\n", argv[i]);
      return 2;
    }
    const auto& d = *run.distributed;
    Workload w;
    w.compute_seconds = one.stats.median;
    w.gradient_bytes = static_cast<double>(d.gradient_bytes);
    w.batch = static_cast<double>(d.global_batch);
    const Prediction p = predict(w, link, Scaling::kStrong, d.ranks);
    const double speedup = one.stats.median / run.stats.median;
    std::printf(
        "%s %s %s %d ranks: step predicted %.1f ms, measured %.1f ms (%+.1f "
        "%%); speed-up predicted %.2f, measured %.2f; all-reduce of %.2f MB "
        "predicted %.2f ms, measured %.2f ms (%+.1f %%)\n",
        run.model.c_str(), run.backend.c_str(), d.engine.c_str(), d.ranks,
        p.step_seconds * 1e3, run.stats.median * 1e3,
        error_percent(p.step_seconds, run.stats.median), p.speedup, speedup,
        w.gradient_bytes / 1e6,
        allreduce_seconds(link, d.ranks, w.gradient_bytes) * 1e3,
        d.allreduce_seconds * 1e3,
        error_percent(allreduce_seconds(link, d.ranks, w.gradient_bytes),
                      d.allreduce_seconds));
    if (i + 1 < argc) continue;
    std::printf("  predicted (same link, ring all-reduce, strong scaling):");
    for (int r : {4, 8, 16, 32, 64}) {
      const Prediction q = predict(w, link, Scaling::kStrong, r);
      std::printf(" %d: %.1f ms %.0f%%", r, q.step_seconds * 1e3,
                  q.efficiency * 100);
    }
    std::printf("\n");
  }
  return 0;
}
