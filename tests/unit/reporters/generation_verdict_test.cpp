// The verdict under a suite's generation table, on hand-made records.
#include <gtest/gtest.h>

#include "reporters/tables.h"

namespace nnbench::reporters {
namespace {

results::GenerationRun run(const std::string& backend, double tpot, double lo,
                           double hi) {
  results::GenerationRun r;
  r.model = "gpt2-small";
  r.backend = backend;
  r.state = results::State::kOk;
  r.asked = {.batch = 1, .prompt = 512, .new_tokens = 128};
  r.requested.options.threads = 2;
  r.ttft.median = 0.5;
  r.tpot.n = 5;
  r.tpot.median = tpot;
  r.tpot.median_ci = {lo, hi, 0.94};
  return r;
}

TEST(GenerationVerdict, NamesTheFastestAndByHowMuch) {
  auto unimplemented = run("jax", 0, 0, 0);
  unimplemented.state = results::State::kUnimplemented;
  unimplemented.tpot = {};
  const std::string line =
      generation_verdict({run("torch", 0.044, 0.043, 0.046),
                          run("onednn", 0.020, 0.019, 0.021), unimplemented});
  EXPECT_EQ(line,
            "gpt2-small, batch 1, pp512/tg128, 2 threads: fastest per output "
            "token onednn 20 ms [19, 21], 2.20x ahead of torch 44 ms [43, "
            "46]; first token onednn 500 ms; no time: jax unimplemented\n");
}

TEST(GenerationVerdict, Bf16AndFp32AreCellsApart) {
  // A bf16 run 2x faster is not the fp32 cell's winner.
  auto bf16 = run("onednn", 0.010, 0.009, 0.011);
  bf16.requested.options.precision = "bf16";
  auto fp32 = run("onednn", 0.020, 0.019, 0.021);
  fp32.requested.options.precision = "fp32";
  auto torch = run("torch", 0.044, 0.043, 0.046);
  torch.requested.options.precision = "fp32";
  const std::string out = generation_verdict({fp32, bf16, torch});
  EXPECT_EQ(out,
            "gpt2-small, batch 1, pp512/tg128, 2 threads: fastest per output "
            "token onednn 20 ms [19, 21], 2.20x ahead of torch 44 ms [43, "
            "46]; first token onednn 500 ms\n"
            "gpt2-small, batch 1, pp512/tg128, bf16, 2 threads: fastest per "
            "output token onednn 10 ms [9, 11], the only engine timed; first "
            "token onednn 500 ms\n");
}

TEST(GenerationVerdict, OverlappingIntervalsAreATie) {
  const std::string line = generation_verdict(
      {run("torch", 0.044, 0.042, 0.046), run("pytorch", 0.045, 0.043, 0.047)});
  EXPECT_NE(line.find("fastest per output token torch 44 ms [42, 46], tied "
                      "with pytorch 45 ms [43, 47]"),
            std::string::npos)
      << line;
}

TEST(GenerationVerdict, OneRepetitionTellsNothingApart) {
  auto once = run("onednn", 0.020, 0.020, 0.020);
  once.tpot.median_ci.coverage = 0;  // a single sample
  const std::string line =
      generation_verdict({run("torch", 0.044, 0.043, 0.046), once});
  EXPECT_NE(line.find("fastest per output token onednn 20 ms [20, 20], not "
                      "told apart from torch 44 ms (too few repetitions"),
            std::string::npos)
      << line;
}

TEST(GenerationVerdict, AnInvalidRunHasNoTimeAndCellsStayApart) {
  auto contended = run("onednn", 0.010, 0.009, 0.011);
  contended.validity.add("contended", "load");
  auto other = run("torch", 0.030, 0.029, 0.031);
  other.requested.options.threads = 1;
  const std::string text =
      generation_verdict({run("torch", 0.044, 0.043, 0.046), contended, other});
  EXPECT_NE(text.find("2 threads: fastest per output token torch 44 ms [43, "
                      "46], the only engine timed; first token torch 500 ms; "
                      "no time: onednn invalid: contended\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("1 thread: fastest per output token torch 30 ms"),
            std::string::npos)
      << text;
  EXPECT_EQ(generation_verdict({contended}), "");
  // Every CPU asked: the cell is named by the threads that ran.
  auto all = run("torch", 0.044, 0.043, 0.046);
  all.requested.options.threads = 0;
  all.effective.threads = 4;
  EXPECT_EQ(generation_verdict({all}).rfind("gpt2-small, batch 1, pp512/tg128, "
                                            "4 threads: fastest",
                                            0),
            0u);
}

}  // namespace
}  // namespace nnbench::reporters
