// Numbers a run cannot be trusted with, and results a failed file write
// must not cost (issue 29, items 6, 8 and 12): weights with NaN in them or
// a negative running variance, outputs and losses that are not numbers,
// each a failed run naming the tensor; a --save-weights file lost after
// training keeps the measured run and exits 3 naming the file; a device a
// backend does not have is unimplemented on every backend; oneDNN's
// refusal says what this CPU runs; training's progress line shows on a
// terminal only.
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cli_util.h"

namespace nnbench_cli_test {
namespace {

using nlohmann::json;

// nnbench's tensor file, written here from its documented layout (an
// 8-byte little-endian header length, the JSON header, float32 data).
void write_tensors(const std::string& path,
                   const std::map<std::string, std::vector<float>>& tensors,
                   const std::map<std::string, std::vector<int64_t>>& shapes) {
  json list = json::array();
  std::string data;
  for (const auto& [name, v] : tensors) {
    list.push_back({{"name", name},
                    {"dtype", "float32"},
                    {"shape", shapes.at(name)},
                    {"offset", data.size()}});
    data.append(reinterpret_cast<const char*>(v.data()), v.size() * 4);
  }
  const std::string h = json{{"tensors", list}}.dump();
  const uint64_t n = h.size();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(&n), 8);
  out << h << data;
}

// A linear model on Fashion-MNIST's 784 pixels, with a batch norm after it
// when `bn`.
const char* kLinear = R"({"format_version": 1, "name": "linear",
  "input": {"dtype": "float32", "shape": [784], "vocab": 0},
  "layers": [{"name": "fc", "op": "linear", "out": 10, "bias": true}],
  "loss": "softmax_cross_entropy"})";
const char* kLinearBn = R"({"format_version": 1, "name": "linear-bn",
  "input": {"dtype": "float32", "shape": [784], "vocab": 0},
  "layers": [{"name": "fc", "op": "linear", "out": 10, "bias": true},
             {"name": "bn", "op": "batch_norm"}],
  "loss": "softmax_cross_entropy"})";

// A small Fashion-MNIST-shaped data set in IDX files (unpacked, as
// nnbench reads them), so that a whole training run takes a second or two:
// `train` images of noise, labels cycling 0..9, 256 test images.
void write_idx_set(const std::string& dir, int train) {
  const auto be32 = [](std::string& s, uint32_t v) {
    for (int k = 3; k >= 0; --k) s.push_back(static_cast<char>(v >> (8 * k)));
  };
  uint32_t x = 12345;
  for (const auto& [prefix, n] : {std::pair{"train", train}, {"t10k", 256}}) {
    std::string images, labels;
    be32(images, 0x803), be32(images, n), be32(images, 28), be32(images, 28);
    be32(labels, 0x801), be32(labels, n);
    for (int i = 0; i < n; ++i) {
      labels.push_back(static_cast<char>(i % 10));
      for (int p = 0; p < 784; ++p)
        images.push_back(static_cast<char>((x = x * 1103515245 + 12345) >> 24));
    }
    std::ofstream(dir + "/" + prefix + "-images-idx3-ubyte", std::ios::binary)
        << images;
    std::ofstream(dir + "/" + prefix + "-labels-idx1-ubyte", std::ios::binary)
        << labels;
  }
}

class NonFinite : public Cli {
 protected:
  // fc's weights all `w` (one of them `odd`), its bias 0.
  void linear_weights(const std::string& name, float w, float odd,
                      bool bn = false, float var = 1) {
    std::vector<float> weight(7840, w);
    weight[1234] = odd;
    std::map<std::string, std::vector<float>> t = {
        {"fc.weight", weight}, {"fc.bias", std::vector<float>(10, 0.0f)}};
    std::map<std::string, std::vector<int64_t>> s = {{"fc.weight", {10, 784}},
                                                     {"fc.bias", {10}}};
    if (bn) {
      std::vector<float> v(10, 1.0f);
      v[7] = var;
      t["bn.weight"] = std::vector<float>(10, 1.0f);
      t["bn.bias"] = std::vector<float>(10, 0.0f);
      t["bn.running_mean"] = std::vector<float>(10, 0.0f);
      t["bn.running_var"] = v;
      for (const char* k :
           {"bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"})
        s[k] = {10};
    }
    write_tensors(path(name), t, s);
  }

  // `nnbench infer` of a model file in accuracy mode on Fashion-MNIST;
  // the record.
  json infer(const std::string& model, const std::string& weights,
             const std::string& backend, Outcome* o) {
    *o =
        nnbench("infer --model-file " + path(model) + " --backend " + backend +
                " --threads 2 --accuracy --data fashion-mnist" + " --weights " +
                path(weights) + " --out " + path("r.json") + kNoContention);
    return json::parse(slurp(path("r.json")))["results"][0];
  }
};

// Was: ok, valid, exit 0, about 10 % accuracy.
TEST_F(NonFinite, NanInAWeightFailsTheRunNamingTheTensor) {
  write("m.json", kLinear);
  linear_weights("nan.w", 0.01f, std::numeric_limits<float>::quiet_NaN());
  for (const char* backend : {"reference", "onednn"}) {
    Outcome o;
    const json r = infer("m.json", "nan.w", backend, &o);
    EXPECT_EQ(o.code, 1) << backend << o.output;
    EXPECT_EQ(r["state"], "failed") << backend << o.output;
    EXPECT_NE(r["message"].get<std::string>().find(
                  "parameter fc.weight holds nan (element 1234 of 7840)"),
              std::string::npos)
        << r["message"];
  }
}

TEST_F(NonFinite, ANegativeRunningVarianceFailsTheRunNamingIt) {
  write("m.json", kLinearBn);
  linear_weights("var.w", 0.01f, 0.01f, true, -2.0f);
  Outcome o;
  const json r = infer("m.json", "var.w", "reference", &o);
  EXPECT_EQ(o.code, 1) << o.output;
  EXPECT_EQ(r["state"], "failed") << o.output;
  EXPECT_NE(r["message"].get<std::string>().find(
                "bn.running_var holds -2 (element 7 of 10): a variance "
                "cannot be negative"),
            std::string::npos)
      << r["message"];
}

// Finite weights whose sums overflow: 784 pixels times 3e38 is no float.
TEST_F(NonFinite, AnOutputThatIsNotANumberFailsTheRunNamingTheSample) {
  write("m.json", kLinear);
  linear_weights("big.w", 3e38f, 3e38f);
  Outcome o;
  const json r = infer("m.json", "big.w", "reference", &o);
  EXPECT_EQ(o.code, 1) << o.output;
  EXPECT_EQ(r["state"], "failed") << o.output;
  EXPECT_NE(r["message"].get<std::string>().find("the output for sample "),
            std::string::npos)
      << r["message"];
}

// Plain SGD at a learning rate of 1000 (the bound of --lr) on the MNIST
// MLP: the loss leaves the floats within a few steps.
TEST_F(NonFinite, ALossThatIsNotANumberFailsTheRunNamingTheLoss) {
  const Outcome o =
      nnbench("run --model mnist-mlp --backend reference --batch 32 --lr 1000" +
              std::string(kFast) + kNoContention + " --out " + path("r.json"));
  EXPECT_EQ(o.code, 1) << o.output;
  const json r = json::parse(slurp(path("r.json")))["results"][0];
  EXPECT_EQ(r["state"], "failed") << o.output;
  EXPECT_EQ(r["message"].get<std::string>().rfind("loss is ", 0), 0u)
      << r["message"];
}

// Was: state failed, exit 1, the measured epoch lost. The folder of the
// --save-weights file is removed once training has begun (after the
// dataset is loaded, which is printed): the run stands, --out holds it,
// and the exit is 3 naming the file.
TEST_F(NonFinite, ALostSaveWeightsFileKeepsTheRunAndExitsThree) {
  fs::create_directories(path("sub"));
  const std::string w = path("sub") + "/w.bin";
  fs::create_directories(path("data"));
  write_idx_set(path("data"), 2048);  // 16 steps
  const Outcome o = shell(
      std::string(NNBENCH_EXE) +
      " train --task fashion-mnist-mlp --backend reference --threads 2"
      " --epochs 1 --on-contention warn --data " +
      path("data") + " --save-weights " + w + " --out " + path("t.json") +
      " > " + path("log") + " 2>&1 & pid=$!; while ! grep -q 'loaded in' " +
      path("log") + "; do sleep 0.05; done; rm -r " + path("sub") +
      "; wait $pid; echo exit=$?; cat " + path("log"));
  EXPECT_NE(o.output.find("exit=3"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("--save-weights " + w), std::string::npos)
      << o.output;
  const json r = json::parse(slurp(path("t.json")))["runs"][0];
  EXPECT_EQ(r["state"], "completed") << o.output;
  EXPECT_EQ(r["epochs"].size(), 1u);
  EXPECT_FALSE(r["effective"].contains("saved_weights"));
  // Its stderr went to a file: no progress line in it.
  const std::string log = slurp(path("log"));
  EXPECT_EQ(log.find("steps/s"), std::string::npos) << log;
  EXPECT_EQ(log.find('\r'), std::string::npos) << log;
}

// docs/backends.md: a device a backend does not have is unimplemented,
// naming it; torch said invalid_args where pytorch said unimplemented.
TEST_F(NonFinite, ADeviceTheBackendLacksIsUnimplementedOnEveryBackend) {
  for (const char* backend : {"torch", "pytorch", "onednn", "reference"}) {
    const Outcome o =
        nnbench("run --model mnist-mlp --backend " + std::string(backend) +
                " --device cuda:7" + kFast + " --out " + path("r.json"));
    EXPECT_EQ(o.code, 1) << backend << o.output;
    const json r = json::parse(slurp(path("r.json")))["results"][0];
    EXPECT_EQ(r["state"], "unimplemented") << backend << o.output;
    EXPECT_NE(r["message"].get<std::string>().find("cuda:7"), std::string::npos)
        << r["message"];
  }
}

// OpenVINO's int8 recorded inference_precision "<Type: 'float32'>" (the
// hint, as a Python object's repr) while NNCF's quantized layers ran u8
// kernels: the record says what the compiled model runs, as plain text.
TEST_F(NonFinite, OpenvinoRecordsThePrecisionItsKernelsRun) {
  std::map<std::string, json> effective;
  for (const char* precision : {"fp32", "int8"}) {
    const Outcome o = nnbench(
        "infer --model mnist-cnn --backend openvino --threads 2 --precision " +
        std::string(precision) + " --min-duration-s 0 --min-queries 8" +
        kNoContention + " --out " + path("r.json"));
    const json r = json::parse(slurp(path("r.json")))["results"][0];
    EXPECT_EQ(r["state"], "ok") << o.output;
    effective[precision] = r["effective"];
  }
  EXPECT_EQ(effective["fp32"]["inference_precision"], "f32");
  const std::string int8 = effective["int8"]["inference_precision"];
  EXPECT_EQ(int8.find("<Type"), std::string::npos) << int8;
  // mnist-cnn's two convolutions and two linear layers, all quantized.
  EXPECT_EQ(int8.find(" in 4 of 4 conv and linear layers, f32 elsewhere"), 2u)
      << int8;
}

// oneDNN limited to AVX2 (its ONEDNN_MAX_CPU_ISA) has no bf16: its refusal
// of fp16 must not say it runs bf16 here.
TEST_F(NonFinite, OnednnSaysWhatThisCpuRuns) {
  const Outcome o =
      shell("ONEDNN_MAX_CPU_ISA=AVX2 " + std::string(NNBENCH_EXE) +
            " run --model mnist-mlp --backend onednn --mode "
            "infer --precision fp16" +
            kFast + " --out " + path("r.json"));
  EXPECT_EQ(o.code, 1) << o.output;
  const json r = json::parse(slurp(path("r.json")))["results"][0];
  const std::string m = r["message"];
  EXPECT_EQ(r["state"], "unimplemented") << m;
  EXPECT_NE(m.find("precision fp16"), std::string::npos) << m;
  EXPECT_NE(m.find("runs fp32 and int8 inference on this CPU; bf16 needs "
                   "AVX512-BF16, which its oneDNN ISA avx2 lacks"),
            std::string::npos)
      << m;
}

// Training shows where it is on a terminal (a pseudo-terminal through
// script(1)); captured output gets none of it (the test above).
TEST_F(NonFinite, TrainingProgressShowsOnATerminal) {
  fs::create_directories(path("data"));
  write_idx_set(path("data"), 2048);  // 16 steps
  const std::string args =
      " train --task fashion-mnist-mlp --backend reference --threads 2"
      " --epochs 1 --on-contention warn --data " +
      path("data");
  const Outcome tty =
      shell("script -qec '" + std::string(NNBENCH_EXE) + args + "' /dev/null");
  EXPECT_EQ(tty.code, 0) << tty.output;
  // The first line shows at once ("epoch 1/1: evaluating" if the steps
  // took less than the quarter second between lines); the step lines'
  // wording is the unit test's (tests/unit/train/train_faults_test.cpp).
  EXPECT_NE(tty.output.find("\repoch 1/1: "), std::string::npos) << tty.output;
  // Erased before the results table.
  EXPECT_NE(tty.output.find("\r\033[K"), std::string::npos) << tty.output;
}

}  // namespace
}  // namespace nnbench_cli_test
