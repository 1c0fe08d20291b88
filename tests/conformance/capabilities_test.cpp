// What a backend's description says it can do beyond layers, held against
// what its executables do: a capability it claims must work (the harness
// trusts the description and refuses the others before compiling).
#include <gtest/gtest.h>

#include "backend/registry.h"
#include "data/synthetic.h"
#include "model/zoo/zoo.h"

namespace nnbench::conformance {
namespace {

// Counts what a backend hands it; leaves the gradients as they are (one
// process: the mean over one rank is the gradient).
class CountingReducer : public backend::GradientReducer {
 public:
  explicit CountingReducer(bool overlap) : overlap_(overlap) {}
  bool wants_overlap() const override { return overlap_; }
  void reduce(const std::vector<backend::GradientBuffer>& b) override {
    ++reduces;
    for (const auto& x : b) floats += x.count;
  }
  void begin(const std::vector<int64_t>& counts) override {
    ++begins;
    for (int64_t c : counts) floats += c;
    buffers = counts.size();
  }
  void ready(int, const float*) override { ++readies; }
  void finish(const std::vector<backend::GradientBuffer>&) override {
    ++finishes;
  }
  int reduces = 0, begins = 0, readies = 0, finishes = 0;
  size_t buffers = 0;
  int64_t floats = 0;  // gradient elements handed over

 private:
  bool overlap_;
};

std::unique_ptr<backend::Executable> compiled(backend::Backend& b,
                                              const model::Model& m) {
  backend::Options o;
  o.threads = 1;
  auto exe = b.compile(m, o, backend::Shapes::train(2));
  exe->load_batches({data::synthetic_batch(m, 2, 1)});
  return exe;
}

TEST(Capabilities, WhatADescriptionClaimsWorks) {
  const model::Model m = model::zoo::get("mnist-mlp");
  for (const auto& name : backend::backend_names()) {
    SCOPED_TRACE(name);
    auto b = backend::make_backend(name);
    const backend::Capabilities can = b->describe().can;
    if (can.lr_schedules) {
      auto exe = compiled(*b, m);
      EXPECT_NO_THROW(exe->set_learning_rate(0.5));
      EXPECT_NO_THROW(exe->train_step(0));
    }
    if (can.data_parallel) {
      auto exe = compiled(*b, m);
      CountingReducer r(false);
      exe->set_gradient_reducer(&r);
      exe->train_step(0);
      EXPECT_EQ(r.reduces, 1);
      // Every gradient, in whatever buffers and layout the backend keeps
      // them (oneDNN's blocked layouts pad): at least the MLP's 784x512 +
      // 512x512 + 512x10 weights and their biases.
      EXPECT_GE(r.floats, 784 * 512 + 512 + 512 * 512 + 512 + 512 * 10 + 10);
    }
    if (can.overlap) {
      EXPECT_TRUE(can.data_parallel);
      auto exe = compiled(*b, m);
      CountingReducer r(true);
      exe->set_gradient_reducer(&r);
      exe->train_step(0);
      EXPECT_EQ(r.reduces, 0);
      EXPECT_EQ(r.begins, 1);
      EXPECT_EQ(r.buffers, 6u);  // one per tensor: the hooks see each
      EXPECT_EQ(r.readies, 6);
      EXPECT_EQ(r.finishes, 1);
      EXPECT_EQ(r.floats, 784 * 512 + 512 + 512 * 512 + 512 + 512 * 10 + 10);
    }
  }
}

}  // namespace
}  // namespace nnbench::conformance
