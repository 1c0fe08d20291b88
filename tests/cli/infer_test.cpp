// `nnbench infer` as a user runs it: LoadGen's verdict in the record, the
// accuracy of a model whose answers this test computes itself, and usage
// errors that name the option.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <vector>

#include "cli_util.h"

namespace nnbench_cli_test {
namespace {

using nlohmann::json;

// Fashion-MNIST's test split, raw: 10,000 images of 784 bytes and labels.
struct Raw {
  std::vector<uint8_t> images, labels;
};

Raw read_test_split(const Cli& c, const std::string& dir) {
  const std::string src = "/usr/share/datasets/fashion-mnist/";
  Raw r;
  for (auto [name, out, skip] :
       {std::tuple{"t10k-images-idx3-ubyte", &r.images, 16},
        std::tuple{"t10k-labels-idx1-ubyte", &r.labels, 8}}) {
    const std::string raw = dir + "/" + name;
    EXPECT_EQ(shell("zcat " + src + name + ".gz > " + raw).code, 0);
    const std::string bytes = slurp(raw);
    out->assign(bytes.begin() + skip, bytes.end());
  }
  return r;
}

// nnbench's tensor file, written here from its documented layout (an
// 8-byte header length, the JSON header, the float32 data).
void write_weights(const std::string& path, const std::vector<float>& w,
                   const std::vector<float>& b) {
  const json head = {{"tensors",
                      {{{"name", "fc.bias"},
                        {"dtype", "float32"},
                        {"shape", {b.size()}},
                        {"offset", 0}},
                       {{"name", "fc.weight"},
                        {"dtype", "float32"},
                        {"shape", {10, 784}},
                        {"offset", b.size() * 4}}}}};
  const std::string h = head.dump();
  const uint64_t n = h.size();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(&n), 8);
  out << h;
  out.write(reinterpret_cast<const char*>(b.data()), b.size() * 4);
  out.write(reinterpret_cast<const char*>(w.data()), w.size() * 4);
}

// A linear model that reads one pixel per class: output c is pixel p_c
// (after nnbench's standardisation, the same increasing map for every
// pixel), so its answer is the class whose pixel is brightest, the first
// on a tie. The pixels are those that tell each class apart best on the
// test split itself; what matters is that this test knows every answer.
TEST_F(Cli, AccuracyModeScoresEverySampleOfAModelWhoseAnswersAreKnown) {
  const Raw t = read_test_split(*this, dir_.string());
  ASSERT_EQ(t.images.size(), 10000u * 784);
  ASSERT_EQ(t.labels.size(), 10000u);
  std::vector<double> mean(10 * 784, 0), all(784, 0);
  for (size_t i = 0; i < 10000; ++i)
    for (size_t p = 0; p < 784; ++p) {
      mean[t.labels[i] * 784 + p] += t.images[i * 784 + p] / 1000.0;
      all[p] += t.images[i * 784 + p] / 10000.0;
    }
  std::vector<int> pixel(10);
  for (int c = 0; c < 10; ++c) {
    double best = -1e9;
    for (int p = 0; p < 784; ++p)
      if (mean[c * 784 + p] - all[p] > best)
        best = mean[c * 784 + p] - all[p], pixel[c] = p;
  }
  int correct = 0;
  for (size_t i = 0; i < 10000; ++i) {
    int answer = 0;
    for (int c = 1; c < 10; ++c)
      if (t.images[i * 784 + pixel[c]] > t.images[i * 784 + pixel[answer]])
        answer = c;
    correct += answer == t.labels[i];
  }
  std::vector<float> w(10 * 784, 0.0f), b(10, 0.0f);
  for (int c = 0; c < 10; ++c) w[c * 784 + pixel[c]] = 1.0f;
  write_weights(path("w.bin"), w, b);
  write("m.json",
        R"({"format_version": 1, "name": "one-pixel",
            "input": {"dtype": "float32", "shape": [784], "vocab": 0},
            "layers": [{"name": "fc", "op": "linear", "out": 10,
                        "bias": true}],
            "loss": "softmax_cross_entropy"})");
  for (const char* backend : {"reference", "onednn"}) {
    const auto o = nnbench(
        "infer --model-file " + path("m.json") + " --backend " + backend +
        " --threads 2 --accuracy --data fashion-mnist"
        " --weights " +
        path("w.bin") + " --out " + path("a.json") + kNoContention);
    ASSERT_EQ(o.code, 0) << o.output;
    const json r = json::parse(slurp(path("a.json")))["results"][0];
    EXPECT_EQ(r["kind"], "single-stream");
    EXPECT_EQ(r["mode"], "accuracy");
    EXPECT_EQ(r["accuracy"]["samples"], 10000);
    EXPECT_DOUBLE_EQ(r["accuracy"]["top1"].get<double>(), correct / 10000.0)
        << backend;
  }
  // Weights of another model are refused before the run, naming the
  // parameter: a usage error (docs/inference.md).
  write_weights(path("bad.bin"), std::vector<float>(10 * 784), {0.0f});
  const auto bad = nnbench("infer --model-file " + path("m.json") +
                           " --backend reference --accuracy --data "
                           "fashion-mnist --weights " +
                           path("bad.bin"));
  EXPECT_EQ(bad.code, 2) << bad.output;
  EXPECT_NE(bad.output.find("fc.bias has another shape"), std::string::npos)
      << bad.output;
}

// LoadGen's tests below assert VALID, a verdict on latencies: they serve
// with one thread, so that no OpenMP thread of theirs waits for a core
// that a test beside them (ctest -j2) holds. With two (the second thread
// spinning between queries: docs/inference.md), one local CI run read a
// p90 of 9.7 ms against 0.06 ms for mnist-mlp, and LoadGen's INVALID.
TEST_F(Cli, InferRecordsLoadGensVerdictAndFigures) {
  const auto o = nnbench(
      "infer --model mnist-mlp --backend onednn --threads 1 --scenario "
      "multi-stream --min-duration-s 0.3 --min-queries 700" +
      std::string(kNoContention) + " --out " + path("m.json"));
  ASSERT_EQ(o.code, 0) << o.output;
  const json r = json::parse(slurp(path("m.json")))["results"][0];
  EXPECT_EQ(r["kind"], "multi-stream");
  EXPECT_EQ(r["state"], "ok");
  EXPECT_TRUE(r["loadgen"]["valid"].get<bool>());
  EXPECT_EQ(r["loadgen"]["version"], "6.0.17");
  EXPECT_EQ(r["loadgen"]["settings"]["samples_per_query"], 8);
  EXPECT_GE(r["figures"]["query_count"].get<int>(), 700);
  EXPECT_EQ(r["figures"]["sample_count"].get<int>(),
            8 * r["figures"]["query_count"].get<int>());
  EXPECT_EQ(r["effective"]["step_batch"], "8");
  EXPECT_NE(
      r["loadgen"]["summary"].get<std::string>().find("Result is : VALID"),
      std::string::npos);
  const double p99 = r["figures"]["percentile_latency_seconds"];
  EXPECT_LE(r["percentile_interval"]["low_seconds"].get<double>(), p99);
  EXPECT_GE(r["percentile_interval"]["high_seconds"].get<double>(), p99);
}

TEST_F(Cli, InferUsageErrorsNameTheOption) {
  expect_usage_error(nnbench("infer --model mnist-mlp --scenario streaming"),
                     "unknown LoadGen scenario 'streaming'");
  expect_usage_error(nnbench("infer --model mnist-mlp --scenario server"),
                     "needs target_qps");
  expect_usage_error(
      nnbench("infer --model mnist-mlp --scenario server --target-qps fast"),
      "--target-qps: setting target_qps = 'fast': not a number");
  expect_usage_error(nnbench("infer --model mnist-mlp --find-peak"),
                     "find_peak searches the server scenario");
  expect_usage_error(nnbench("infer --model mnist-mlp --accuracy"),
                     "accuracy mode needs a data set");
  expect_usage_error(nnbench("train --task fashion-mnist-mlp --seeds 2 "
                             "--save-weights " +
                             path("w.bin")),
                     "--save-weights writes one run's parameters");
}

// A suite of a LoadGen scenario: its settings checked before anything
// runs (FILE:LINE:COLUMN naming the setting), its cases stored as records of
// the scenario's kind and shown in the suite's table.
TEST_F(Cli, ASuiteOfALoadGenScenarioRunsAndChecksItsSettings) {
  write("bad.toml",
        "scenario = \"server\"\n[grid]\nmodels = [\"mnist-mlp\"]\n"
        "[settings]\ntarget_qps = 100\nlatency_bound_ms = \"soon\"\n");
  expect_usage_error(nnbench("suite " + path("bad.toml") + " --check"),
                     "bad.toml:6:20: [settings] setting latency_bound_ms = "
                     "'soon': not a number");
  write("s.toml",
        "scenario = \"single-stream\"\n[grid]\nmodels = [\"mnist-mlp\"]\n"
        "backends = [\"onednn\", \"reference\"]\nthreads = [1]\n"
        "[settings]\nmin_duration_s = 0.2\nmin_queries = 100\n");
  const auto o = nnbench("suite " + path("s.toml") + kNoContention +
                         " --no-store --out " + path("r.json"));
  ASSERT_EQ(o.code, 0) << o.output;
  EXPECT_NE(o.output.find("LoadGen"), std::string::npos) << o.output;
  const json runs = json::parse(slurp(path("r.json")))["results"];
  ASSERT_EQ(runs.size(), 2u);
  for (const auto& r : runs) {
    EXPECT_EQ(r["kind"], "single-stream");
    EXPECT_EQ(r["state"], "ok") << r["message"];
    EXPECT_TRUE(r["loadgen"]["valid"].get<bool>());
    EXPECT_GE(r["figures"]["query_count"].get<int>(), 100);
  }
}

}  // namespace
}  // namespace nnbench_cli_test
