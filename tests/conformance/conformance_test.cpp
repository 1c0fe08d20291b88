// Every built backend against the reference, on the same seeded weights and
// batch: outputs, loss, gradients after one step and parameters after the
// update, for every layer type and for small zoo models. A backend that
// cannot run a case is reported as skipped with its reason, never as passed.
#include <gtest/gtest.h>

#include <optional>

#include "backend/registry.h"
#include "cases.h"
#include "engines/worker/zygote.h"
#include "model/zoo/zoo.h"
#include "verify/verify.h"

namespace nnbench::conformance {
namespace {

struct Param {
  std::string backend, precision, name;
  model::Model model;
  int64_t batch = 3;
};

// ctest lists a case by its printed parameter: the case, not its bytes.
void PrintTo(const Param& p, std::ostream* os) {
  *os << p.backend << " " << p.precision << " " << p.name << " batch "
      << p.batch;
}

// Every registered backend but the oracle, at every precision it states.
std::vector<Param> params() {
  std::vector<Param> out;
  for (const auto& b : backend::backend_names()) {
    if (b == backend::kOracle) continue;
    for (const auto& p : backend::make_backend(b)->describe().precisions) {
      for (auto& c : layer_cases()) out.push_back({b, p, c.name, c.model});
      for (const auto& z : zoo_cases())
        // Batch 8: with 2-3 samples, batch norm in deep ReLU nets puts
        // units within rounding noise of the kink (docs/backends.md).
        out.push_back({b, p, "zoo_" + z, model::zoo::get(z), 8});
    }
  }
  return out;
}

class Conformance : public ::testing::TestWithParam<Param> {};

// A case's workers (the shape check's and the one verified) fork from one
// zygote per engine, as a suite's do: the framework imported once per
// case, not twice.
class ForkedWorkers : public ::testing::Environment {
 public:
  void SetUp() override { zygotes_.emplace(); }
  void TearDown() override { zygotes_.reset(); }

 private:
  std::optional<engines::worker::zygote::Zygotes> zygotes_;
};
[[maybe_unused]] auto* const forked_workers =
    ::testing::AddGlobalTestEnvironment(new ForkedWorkers);

TEST_P(Conformance, MatchesTheReference) {
  const Param& p = GetParam();
  if (p.precision == "bf16" && p.name == "zoo_resnet-56")
    GTEST_SKIP() << "known gap: bf16 gradients of some batch-norm weights "
                    "of resnet-56 differ from the fp32 reference by ~100 % "
                    "normwise (docs/backends.md); not yet explained";
  auto oracle = backend::make_backend(backend::kOracle);
  auto candidate = backend::make_backend(p.backend);
  verify::VerifyOptions o;
  o.batch = p.batch;
  o.threads = 2;
  o.precision = p.precision;
  backend::Options bo;
  bo.precision = p.precision;
  bo.threads = o.threads;  // the shape check's worker shares the zygote
  const backend::Support s = backend::supports_model(*candidate, p.model, bo);
  const auto v = verify::verify(*oracle, *candidate, p.model, o);
  // The answer is honest both ways: what supports() refuses, compile
  // refuses too (a skip, with the reason); what it accepts must run and
  // match. Before, an Unimplemented was a skip whatever supports() said, so
  // a backend that regressed to unimplemented everywhere stayed green.
  if (!s) {
    EXPECT_EQ(v.verdict, verify::Verdict::kUnimplemented)
        << "supports() said no (" << s.why << ") but it ran";
    GTEST_SKIP() << p.backend << " " << p.precision << ": " << s.why;
  }
  EXPECT_EQ(v.verdict, verify::Verdict::kPass)
      << "supports() said yes: " << v.message;
  // Outputs, loss, gradients and parameters; an inference engine, or a
  // precision it infers at only (int8, post-training quantization), has its
  // output only; a model that
  // generates adds the generation checks (greedy tokens, and logits where
  // the engine gives them) on an engine that generates.
  size_t tensors = 0;
  for (const auto& c : v.checks) tensors += c.what.rfind("generation", 0) != 0;
  if (candidate->describe().trains_at(p.precision))
    EXPECT_GT(tensors, 3u);
  else
    EXPECT_EQ(tensors, 1u);
}

// Each backend supports a fair share of the cases at every precision it
// states (minimum_for: half of the layer cases, a third at int8, and two zoo
// models unless a test's toy says otherwise); every case it supports must
// then pass, above.
// A backend that said no to everything would otherwise pass by skipping.
TEST(ConformanceCoverage, EveryBackendSupportsAMinimumOfCases) {
  for (const auto& b : backend::backend_names()) {
    if (b == backend::kOracle) continue;
    auto candidate = backend::make_backend(b);
    // A framework engine that scripts/setup makes must be ready (else it
    // would leave this suite unnoticed); only those that cannot be
    // installed here at all are listed without cases.
    if (const auto why = candidate->describe().unavailable; !why.empty()) {
      EXPECT_EQ(why.rfind("cannot be installed here: ", 0), 0u)
          << b << " is not set up: " << why;
      continue;
    }
    for (const auto& precision : candidate->describe().precisions) {
      const Minimum want = minimum_for(b, precision);
      backend::Options o;
      o.precision = precision;
      size_t layers = 0, zoo = 0;
      for (const auto& c : layer_cases())
        layers += backend::supports_model(*candidate, c.model, o) ? 1 : 0;
      for (const auto& z : zoo_cases())
        zoo +=
            backend::supports_model(*candidate, model::zoo::get(z), o) ? 1 : 0;
      EXPECT_GE(layers, want.layers) << b << " " << precision;
      EXPECT_GE(zoo, want.zoo) << b << " " << precision;
    }
  }
}

std::string name_of(const ::testing::TestParamInfo<Param>& info) {
  std::string n =
      info.param.backend + "_" + info.param.precision + "_" + info.param.name;
  for (char& c : n)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(AllBackends, Conformance,
                         ::testing::ValuesIn(params()), name_of);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Conformance);

}  // namespace
}  // namespace nnbench::conformance
