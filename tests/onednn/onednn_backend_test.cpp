// The oneDNN backend's behaviour: what it refuses and how, what it reports,
// and that its primitives and memory are reused across steps and batches.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>

#include "backend/registry.h"
#include "data/synthetic.h"
#include "expected_isa.h"
#include "model/zoo/builder.h"
#include "model/zoo/zoo.h"
#include "util/error.h"

namespace nnbench {
namespace {

backend::Options small_options() {
  backend::Options o;
  o.threads = 2;
  return o;
}

std::string unimplemented_message(const model::Model& m,
                                  const backend::Options& o) {
  try {
    backend::make_backend("onednn")->compile(m, o, backend::Shapes::train(2));
  } catch (const backend::Unimplemented& e) {
    return e.what();
  }
  return "(compiled)";
}

TEST(OnednnBackend, NameAndVersion) {
  auto b = backend::make_backend("onednn");
  EXPECT_EQ(b->name(), "onednn");
  EXPECT_EQ(b->version().rfind("oneDNN 2.", 0), 0u) << b->version();
  // The ISA oneDNN dispatches to, as `nnbench env` lists it: under an AVX2
  // cap, avx2 (the cap is how tests check that path on AVX-512 CPUs).
  const std::string isa = b->describe().libraries.at("oneDNN ISA");
  const char* cap = std::getenv("ONEDNN_MAX_CPU_ISA");
  if (cap != nullptr && std::string(cap) == "AVX2") {
    EXPECT_EQ(isa, "avx2");
  }
  const auto exe = b->compile(model::zoo::get("mnist-mlp"), small_options(),
                              backend::Shapes::infer(2));
  EXPECT_EQ(isa, exe->effective().extras.at("cpu_isa"));
}

// An even LRN window: oneDNN centres it unlike torch.
TEST(OnednnBackend, UnimplementedLayersAreNamed) {
  model::Model m;
  m.name = "even-lrn";
  m.input.shape = {4, 5, 5};
  model::zoo::Builder b(m);
  b.linear(b.flatten(b.lrn(-1, 4, 1e-4, 0.75)), 3, "head");
  const auto msg = unimplemented_message(m, small_options());
  EXPECT_NE(msg.find("' (lrn): "), std::string::npos) << msg;
}

// The zoo's LSTM models build for training and for inference only, and
// the record names the LSTM kernels; oneDNN 2.6 has only its reference
// implementation for some (fp32 training): reference_kernels lists those.
TEST(OnednnBackend, LstmZooModelsBuildAndNameTheirKernels) {
  for (const char* name : {"imdb-bilstm", "lstm-text-gen", "lstm-ptb"}) {
    const model::Model m = model::zoo::get(name);
    auto b = backend::make_backend("onednn");
    for (const auto& shapes :
         {backend::Shapes::train(2), backend::Shapes::infer(2)}) {
      auto exe = b->compile(m, small_options(), shapes);
      exe->load_batches({data::synthetic_batch(m, 2, 3)});
      if (shapes.train_batch > 0) {
        exe->train_step(0);
        exe->synchronize();
        EXPECT_TRUE(std::isfinite(exe->last_loss())) << name;
      } else {
        exe->infer(0);
      }
      const auto eff = exe->effective();
      const std::string impl = eff.extras.at("lstm_impl");
      EXPECT_NE(impl.find("lstm: fwd "), std::string::npos) << name;
      if (impl.find(" ref") != std::string::npos) {
        EXPECT_NE(eff.extras.at("reference_kernels").find("lstm "),
                  std::string::npos)
            << name << ": " << impl;
      }
    }
  }
}

// [T, F] runs (lstm_test.cpp); more dims do not.
TEST(OnednnBackend, LinearOnImagesIsUnimplemented) {
  model::Model m;
  m.name = "image-linear";
  m.input.shape = {2, 3, 5};
  model::zoo::Builder(m).linear(-1, 4, "proj");
  const auto msg = unimplemented_message(m, small_options());
  EXPECT_NE(msg.find("layer 'proj' (linear)"), std::string::npos) << msg;
}

TEST(OnednnBackend, UnknownPrecisionIsUnimplemented) {
  backend::Options o = small_options();
  o.precision = "fp16";
  EXPECT_NE(unimplemented_message(model::zoo::get("mnist-mlp"), o).find("fp16"),
            std::string::npos);
}

// A device it does not have is a gap, as on every backend
// (docs/backends.md): unimplemented, naming it.
TEST(OnednnBackend, NonCpuDeviceIsUnimplemented) {
  backend::Options o = small_options();
  o.device = "cuda";
  try {
    backend::make_backend("onednn")->compile(model::zoo::get("mnist-mlp"), o,
                                             backend::Shapes::train(2));
    FAIL() << "compiled for cuda";
  } catch (const backend::Unimplemented& e) {
    EXPECT_NE(std::string(e.what()).find("cuda"), std::string::npos);
  }
}

TEST(OnednnBackend, EffectiveSettings) {
  auto exe = backend::make_backend("onednn")->compile(
      model::zoo::get("mnist-cnn"), small_options(), backend::Shapes::train(2));
  const auto eff = exe->effective();
  EXPECT_EQ(eff.device, "cpu");
  EXPECT_EQ(eff.threads, 2);
  EXPECT_EQ(eff.precision, "fp32");
  // Counted from the backend's tensors; by hand from the Keras example:
  // conv 1->32 3x3: 32*9+32 = 320; conv 32->64 3x3: 64*32*9+64 = 18496;
  // dense 12*12*64=9216 -> 128: 9216*128+128 = 1179776; dense 128->10:
  // 1290. Sum: 1199882.
  EXPECT_EQ(eff.extras.at("parameters"), "1199882");
  EXPECT_EQ(eff.optimizer, "SGD lr 0.01 momentum 0.9");
  EXPECT_NE(eff.extras.at("layout").find("conv weights"), std::string::npos);
  EXPECT_NE(eff.extras.at("conv_impl").find("conv2d_1"), std::string::npos);
  EXPECT_EQ(eff.extras.at("conv_impl").find("ref:"), std::string::npos)
      << eff.extras.at("conv_impl");
}

// Winograd 4x3 for the 3x3 stride-1 convolutions reading 32 channels or
// more, all three passes, even at a batch where oneDNN's
// `auto` keeps them direct; never where oneDNN 2.6 has no such kernel
// (below avx512_core, e.g. under ONEDNN_MAX_CPU_ISA=AVX2). Counted by hand
// from ResNet-56: stages of 9 blocks of two 3x3 convolutions at 16, 32 and
// 64 channels; in stages 2 and 3 all but the first (stride 2, reading the
// previous stage's channels) read 32 or 64: 2 x 17 = 34 layers.
TEST(OnednnBackend, TrainingConvolutionsRunWinogradWhereOnednnHasIt) {
  const auto exe = backend::make_backend("onednn")->compile(
      model::zoo::get("resnet-56"), small_options(), backend::Shapes::train(2));
  const std::string impl = exe->effective().extras.at("conv_impl");
  if (onednn_test::expected_isa().avx512_core) {
    EXPECT_NE(impl.find("fwd jit_wino_4x3:avx512_core, bwd data "
                        "jit_wino_4x3:avx512_core, bwd weights "
                        "jit_wino_4x3:avx512_core in 34 layers"),
              std::string::npos)
        << impl;
  } else {
    EXPECT_EQ(impl.find("wino"), std::string::npos) << impl;
  }
}

// The bf16 path is read from oneDNN, and must agree with the CPU flags read
// here from /proc/cpuinfo (and oneDNN's ISA cap, if one is set): AMX where
// amx_bf16 is present, else AVX-512 BF16.
TEST(OnednnBackend, EffectiveNamesTheBf16Path) {
  const auto isa = onednn_test::expected_isa();
  backend::Options o = small_options();
  auto b = backend::make_backend("onednn");
  const auto fp32 =
      b->compile(model::zoo::get("mnist-mlp"), o, backend::Shapes::train(2))
          ->effective();
  EXPECT_EQ(fp32.extras.at("bf16_path"), "not used (fp32)");
  EXPECT_FALSE(fp32.extras.at("cpu_isa").empty());
  if (!isa.bf16) {
    // Refused, naming the ISA, on a CPU (or cap) without bf16.
    o.precision = "bf16";
    EXPECT_NE(unimplemented_message(model::zoo::get("mnist-mlp"), o)
                  .find("AVX512-BF16"),
              std::string::npos);
    return;
  }
  o.precision = "bf16";
  const auto eff =
      b->compile(model::zoo::get("mnist-mlp"), o, backend::Shapes::train(2))
          ->effective();
  EXPECT_EQ(
      eff.extras.at("bf16_path"),
      isa.amx ? "AMX (avx512_core_amx)" : "AVX-512 BF16 (avx512_core_bf16)");
  EXPECT_EQ(eff.extras.at("cpu_isa"),
            isa.amx ? "avx512_core_amx" : "avx512_core_bf16");
}

std::vector<double> losses(const model::Model& m, int steps) {
  auto exe = backend::make_backend("onednn")->compile(
      m, small_options(), backend::Shapes::train(16));
  exe->load_batches({data::synthetic_batch(m, 16, 3)});
  std::vector<double> out;
  for (int i = 0; i < steps; ++i) {
    exe->train_step(0);
    exe->synchronize();
    out.push_back(exe->last_loss());
  }
  return out;
}

// Steps re-run the same primitives on the same memory: on a fixed batch
// the loss keeps falling.
TEST(OnednnBackend, RepeatedStepsLowerTheLoss) {
  model::Model m = model::zoo::get("mnist-cnn");
  for (auto& l : m.layers) l.p = 0;  // dropout off: monotone
  const auto loss = losses(m, 4);
  for (size_t i = 0; i < loss.size(); ++i) {
    ASSERT_TRUE(std::isfinite(loss[i])) << "step " << i;
    if (i > 0) {
      EXPECT_LT(loss[i], loss[i - 1]) << "step " << i;
    }
  }
}

// With dropout each step draws new masks; the trend still goes down.
TEST(OnednnBackend, StepsWithDropoutLowerTheLoss) {
  const auto loss = losses(model::zoo::get("mnist-cnn"), 8);
  EXPECT_LT(loss.back(), loss.front());
  EXPECT_NE(loss[1], loss[0]);
}

// Every batch size is built in compile: switching sizes keeps the trained
// weights and builds nothing, and a size not compiled is refused.
TEST(OnednnBackend, CompiledBatchSizesKeepWeightsWithoutRebuilds) {
  const model::Model m = model::zoo::get("resnet-56");
  auto exe =
      backend::make_backend("onednn")->compile(m, small_options(), {2, {3}});
  EXPECT_EQ(exe->effective().extras.at("graph_builds"), "2");
  exe->load_batches({data::synthetic_batch(m, 2, 3)});
  exe->train_step(0);
  const auto before = exe->parameters();
  exe->load_batches(
      {data::synthetic_batch(m, 3, 4), data::synthetic_batch(m, 3, 5)});
  EXPECT_EQ(exe->parameters().at("fc.weight").f, before.at("fc.weight").f);
  exe->infer(1);
  EXPECT_EQ(exe->output().shape, (std::vector<int64_t>{3, 10}));
  EXPECT_THROW(exe->train_step(0), Error);  // 3 was compiled for inference
  exe->load_batches({data::synthetic_batch(m, 2, 6)});
  exe->train_step(0);
  EXPECT_TRUE(std::isfinite(exe->last_loss()));
  EXPECT_NE(exe->parameters().at("fc.weight").f, before.at("fc.weight").f);
  EXPECT_THROW(exe->load_batches({data::synthetic_batch(m, 5, 7)}), Error);
  EXPECT_EQ(exe->effective().extras.at("graph_builds"), "2");
}

}  // namespace
}  // namespace nnbench
