// Adding a backend touches no shared file: this toy backend, registered
// from this file alone, runs only linear and relu layers and is picked up by
// the conformance suite (conformance_test.cpp), which checks it against the
// oracle where it runs and reports it unimplemented everywhere else. It
// delegates the arithmetic to the oracle: the point is the seam, not a
// second implementation.
#include <gtest/gtest.h>

#include <algorithm>

#include "backend/registry.h"
#include "cases.h"

namespace nnbench::conformance {
namespace {

class ToyBackend : public backend::Backend {
 public:
  std::string name() const override { return "toy"; }
  std::string version() const override { return "toy 1"; }
  backend::Description describe() const override {
    backend::Description d;
    d.name = name();
    d.devices = {"cpu"};
    d.precisions = {"fp32"};
    d.optimizers = {"sgd"};
    return d;
  }
  backend::Support supports(const model::Layer& l,
                            const backend::Options& o) const override {
    if (l.op != model::Op::kLinear && l.op != model::Op::kRelu)
      return backend::Support::no("layer '" + l.name + "' (" +
                                  std::string(model::op_name(l.op)) + ")");
    return backend::supports_options(describe(), o);
  }
  std::unique_ptr<backend::Executable> compile(
      const model::Model& m, const backend::Options& o,
      const backend::Shapes& shapes) override {
    for (const auto& l : m.layers)
      if (l.op != model::Op::kLinear && l.op != model::Op::kRelu)
        throw backend::Unimplemented("layer '" + l.name + "' (" +
                                     std::string(model::op_name(l.op)) + ")");
    if (o.optimizer != "sgd")
      throw backend::Unimplemented("optimizer '" + o.optimizer +
                                   "' (the toy runs sgd)");
    if (o.precision != "fp32")
      throw backend::Unimplemented("precision " + o.precision);
    return backend::make_backend(backend::kOracle)->compile(m, o, shapes);
  }
};

const bool registered = [] {
  backend::register_backend("toy", []() -> std::unique_ptr<backend::Backend> {
    return std::make_unique<ToyBackend>();
  });
  // Fewer cases than a real backend's floor, on purpose: the four layer
  // cases of linear and relu alone.
  expect_minimum("toy", {4, 0});
  return true;
}();

bool only_linear_and_relu(const model::Model& m) {
  return std::all_of(m.layers.begin(), m.layers.end(), [](const auto& l) {
    return l.op == model::Op::kLinear || l.op == model::Op::kRelu;
  });
}

TEST(ToyBackend, IsRegisteredAfterTheBuiltBackends) {
  ASSERT_TRUE(registered);
  const auto names = backend::backend_names();
  EXPECT_EQ(names.front(), backend::kOracle);
  EXPECT_EQ(names.back(), "toy");
  EXPECT_NE(backend::default_backend(), "toy");
}

// What the conformance suite sees for each layer case: a compiled
// executable exactly where the toy runs every layer, Unimplemented naming
// the first other layer everywhere else.
TEST(ToyBackend, RunsLinearAndReluAndRefusesTheRest) {
  auto toy = backend::make_backend("toy");
  backend::Options o;
  int runs = 0, refused = 0;
  for (const auto& c : layer_cases()) {
    EXPECT_EQ(bool(backend::supports_model(*toy, c.model, o)),
              only_linear_and_relu(c.model))
        << c.name;
    if (only_linear_and_relu(c.model)) {
      EXPECT_NO_THROW(toy->compile(c.model, o, backend::Shapes::train(2)))
          << c.name;
      ++runs;
    } else {
      EXPECT_THROW(toy->compile(c.model, o, backend::Shapes::train(2)),
                   backend::Unimplemented)
          << c.name;
      ++refused;
    }
  }
  EXPECT_GE(runs, 2);  // linear, linear_no_bias, relu
  EXPECT_GT(refused, runs);
}

}  // namespace
}  // namespace nnbench::conformance
