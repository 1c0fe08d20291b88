// LibTorch loads only in the processes that use it (docs/design.md): its
// static initialisers cost every process that maps it 0.4 s. The dynamic
// loader's own trace (LD_DEBUG=files) says which processes loaded
// libtorch_cpu; a binary without its module lists torch as unavailable.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_util.h"

namespace {

using namespace nnbench_cli_test;
namespace fs = std::filesystem;

#ifdef NNBENCH_TORCH_MODULE

bool loads_libtorch(const std::string& loader_trace) {
  return loader_trace.find("libtorch_cpu") != std::string::npos;
}

TEST_F(Cli, LightCommandsDoNotLoadLibTorch) {
  const Outcome models = shell("LD_DEBUG=files " NNBENCH_EXE " models");
  ASSERT_EQ(models.code, 0) << models.output;
  // The trace is there (it names the binary's own libraries) ...
  EXPECT_NE(models.output.find("libstdc++"), std::string::npos);
  // ... and LibTorch is not in it.
  EXPECT_FALSE(loads_libtorch(models.output));
  // Describing the backends loads it, which the same trace shows.
  const Outcome env = shell("LD_DEBUG=files " NNBENCH_EXE " env --no-peak");
  ASSERT_EQ(env.code, 0) << env.output;
  EXPECT_TRUE(loads_libtorch(env.output));
  EXPECT_NE(env.output.find("LibTorch: "), std::string::npos) << env.output;
}

// The suite process describes every backend (for "all"); a case on another
// engine runs in a child process that never loads LibTorch.
TEST_F(Cli, SuiteCasesOnOtherEnginesDoNotLoadLibTorch) {
  write("s.toml", std::string(R"(
[grid]
models = ["mnist-mlp"]
backends = ["onednn", "reference"]
modes = ["infer"]
batches = [8]
threads = [1]
)") + kFastRules);
  fs::create_directories(path("trace"));
  const Outcome o = shell("LD_DEBUG=files LD_DEBUG_OUTPUT=" + path("trace/ld") +
                          " " + NNBENCH_EXE + " suite " + path("s.toml") +
                          " --no-store" + kNoContention);
  ASSERT_EQ(o.code, 0) << o.output;
  EXPECT_NE(o.output.find("mnist-mlp onednn fp32 infer b8 t1 r1: ok"),
            std::string::npos)
      << o.output;
  // One trace per process image: the suite's and its two cases' at least.
  int traces = 0, with_torch = 0;
  for (const auto& e : fs::directory_iterator(path("trace"))) {
    ++traces;
    with_torch += loads_libtorch(slurp(e.path().string()));
  }
  EXPECT_GE(traces, 3);
  EXPECT_LE(with_torch, 1) << "only the suite's own process may load it";
}

TEST_F(Cli, TorchRunsFromItsModule) {
  const Outcome o = nnbench("run --model mnist-mlp --backend torch --batch 8" +
                            std::string(kFast) + kNoContention);
  ASSERT_EQ(o.code, 0) << o.output;
  EXPECT_NE(o.output.find("torch"), std::string::npos) << o.output;
}

// A copy of the binary with no module beside it, then with a broken one:
// torch is listed, unavailable with the loader's reason, and refused as a
// usage error; everything else still runs.
TEST_F(Cli, AModuleThatDoesNotLoadMakesTorchUnavailable) {
  fs::create_directories(path("bin"));
  const std::string exe = path("bin/nnbench");
  fs::copy_file(NNBENCH_EXE, exe);
  const auto torch_why = [&] {
    const Outcome o = shell(exe + " env --json --no-peak");
    EXPECT_EQ(o.code, 0) << o.output;
    const auto j = nlohmann::json::parse(o.output.substr(o.output.find('{')));
    const auto& backends = j["environment"]["backends"];
    EXPECT_TRUE(backends.contains("torch")) << o.output;
    return backends.value("torch", nlohmann::json::object())
        .value("unavailable", std::string());
  };
  const std::string missing = torch_why();
  EXPECT_NE(missing.find("nnbench_torch.so"), std::string::npos) << missing;
  EXPECT_NE(missing.find("No such file"), std::string::npos) << missing;
  expect_usage_error(
      shell(exe + " run --model mnist-mlp --backend torch" + kFast),
      "cannot run here");
  const Outcome other =
      shell(exe + " run --model mnist-mlp --backend reference" + kFast +
            kNoContention);
  EXPECT_EQ(other.code, 0) << other.output;

  fs::create_directories(path("lib/nnbench"));
  write("lib/nnbench/nnbench_torch.so", "not an ELF file");
  const std::string broken = torch_why();
  EXPECT_NE(broken.find("nnbench_torch.so"), std::string::npos) << broken;
  EXPECT_EQ(broken.find("No such file"), std::string::npos) << broken;
}

#endif

}  // namespace
