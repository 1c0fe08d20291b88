// The verdict under a suite's LoadGen table, on hand-made records.
#include <gtest/gtest.h>

#include "reporters/tables.h"

namespace nnbench::reporters {
namespace {

results::InferenceRun run(const std::string& backend, double p90, double lo,
                          double hi, const std::string& precision = "int8") {
  results::InferenceRun r;
  r.kind = "single-stream";
  r.model = "bert-base";
  r.backend = backend;
  r.state = results::State::kOk;
  r.loadgen_valid = true;
  r.requested.options.precision = precision;
  r.requested.options.threads = 2;
  r.percentile = 0.9;
  r.percentile_latency = p90;
  r.latency_samples = 200;
  r.percentile_ci = {lo, hi, 0.956};
  r.samples_per_second = 1 / p90;
  return r;
}

TEST(LoadgenVerdict, NamesTheFastestTheFarBehindAndTheUnmeasured) {
  auto unimplemented = run("torch", NAN, 0, 0);
  unimplemented.state = results::State::kUnimplemented;
  auto invalid = run("jax", 0.030, 0.029, 0.031);
  invalid.loadgen_valid = false;
  EXPECT_EQ(loadgen_verdict({run("tensorflow", 0.300, 0.290, 0.310),
                             run("onednn", 0.020, 0.019, 0.021),
                             run("pytorch", 0.040, 0.039, 0.042), unimplemented,
                             invalid}),
            "bert-base single-stream, int8, 1 x 2 threads: fastest p90 onednn "
            "20 ms [19, 21], 2.00x ahead of pytorch 40 ms [39, 42]; more than "
            "2x behind: tensorflow 15.00x; no figure: torch unimplemented, jax "
            "LoadGen INVALID\n");
}

TEST(LoadgenVerdict, OverlappingIntervalsTieAndPrecisionsAreCellsApart) {
  const std::string out =
      loadgen_verdict({run("onednn", 0.0187, 0.0185, 0.0202),
                       run("openvino", 0.0194, 0.0193, 0.0199),
                       run("onednn", 0.0568, 0.0558, 0.0572, "fp32")});
  EXPECT_EQ(out,
            "bert-base single-stream, int8, 1 x 2 threads: fastest p90 onednn "
            "18.7 ms [18.5, 20.2], tied with openvino 19.4 ms [19.3, 19.9]\n"
            "bert-base single-stream, fp32, 1 x 2 threads: fastest p90 onednn "
            "56.8 ms [55.8, 57.2], the only engine measured\n");
}

TEST(LoadgenVerdict, OfflineHasAThroughputAndNoInterval) {
  auto a = run("onednn", NAN, 0, 0), b = run("openvino", NAN, 0, 0);
  for (auto* r : {&a, &b}) {
    r->kind = "offline";
    r->latency_samples = 0;
  }
  a.samples_per_second = 94.1;
  b.samples_per_second = 101.9;
  EXPECT_EQ(loadgen_verdict({a, b}),
            "bert-base offline, int8, 1 x 2 threads: most samples/s openvino "
            "101.9 samples/s, 1.08x ahead of onednn 94.1 samples/s (one "
            "LoadGen run each: no interval)\n");
}

TEST(LoadgenVerdict, NoFigureNoLine) {
  auto r = run("onednn", 0.02, 0.019, 0.021);
  r.state = results::State::kFailed;
  EXPECT_EQ(loadgen_verdict({r}), "");
  auto scored = run("onednn", 0.02, 0.019, 0.021);
  scored.mode = "accuracy";
  EXPECT_EQ(loadgen_verdict({scored}), "");
}

}  // namespace
}  // namespace nnbench::reporters
