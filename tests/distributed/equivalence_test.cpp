// Data parallelism is correct before it is fast: P ranks with global batch
// B must reach the parameters one process reaches with batch B. Every rank
// of this program (started by mpirun, see run_ranks.sh) trains the model
// twice: alone on the whole global batches, and as one rank of the group on
// its shards with distributed::MeanReducer; both must end at the same
// parameters. Models have dropout off (masks differ per process) and no batch
// norm (its statistics are per rank: not the same function; PyTorch DDP does
// not synchronise them either, short of SyncBatchNorm).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "backend/registry.h"
#include "data/synthetic.h"
#include "distributed/comm_engines.h"
#include "distributed/reducer.h"
#include "distributed/shard.h"
#include "model/zoo/zoo.h"

namespace nnbench {
namespace {

distributed::Group* group = nullptr;
constexpr int64_t kGlobalBatch = 8;
constexpr int kSteps = 3;

using Params = std::map<std::string, host::Tensor>;

backend::Options options() {
  backend::Options o;
  o.threads = 1;
  o.seed = 7;
  o.learning_rate = 0.05;
  o.momentum = 0.9;
  return o;
}

std::vector<host::Batch> global_batches(const model::Model& m) {
  std::vector<host::Batch> b;
  for (int i = 0; i < kSteps; ++i)
    b.push_back(data::synthetic_batch(m, kGlobalBatch, 100 + i));
  return b;
}

// Trains kSteps on `batches` (one per step); with a reducer, as a rank.
Params train(backend::Backend& b, const model::Model& m,
             const std::vector<host::Batch>& batches, int64_t batch,
             backend::GradientReducer* reducer) {
  auto exe = b.compile(m, options(), backend::Shapes::train(batch));
  if (reducer) exe->set_gradient_reducer(reducer);
  exe->load_batches(batches);
  for (int i = 0; i < kSteps; ++i) exe->train_step(i);
  exe->synchronize();
  return exe->parameters();
}

struct Diff {
  double max_abs = 0, max_moved = 0;
};

// Largest |a - b| over every parameter, and how far `a` moved from `init`.
Diff compare(const Params& a, const Params& b, const Params& init) {
  Diff d;
  for (const auto& [name, t] : a) {
    const auto& u = b.at(name).f;
    const auto& i0 = init.at(name).f;
    for (size_t k = 0; k < t.f.size(); ++k) {
      d.max_abs = std::max(d.max_abs, double(std::fabs(t.f[k] - u[k])));
      d.max_moved = std::max(d.max_moved, double(std::fabs(t.f[k] - i0[k])));
    }
  }
  return d;
}

void check_equivalent(const std::string& backend_name,
                      const std::string& model_name, bool overlap) {
  auto b = backend::make_backend(backend_name);
  model::Model m = model::zoo::get(model_name);
  for (auto& l : m.layers) l.p = 0;  // dropout off
  const int p = group->size();
  const auto global = global_batches(m);
  std::vector<host::Batch> mine;
  for (const auto& g : global)
    mine.push_back(distributed::shard(g, group->rank(), p));

  const Params init =
      b->compile(m, options(), backend::Shapes::train(kGlobalBatch / p))
          ->parameters();
  const Params alone = train(*b, m, global, kGlobalBatch, nullptr);
  // Small buckets (64 KiB): several per step, so the order in which ranks
  // start them is exercised.
  distributed::MeanReducer reducer(*group, overlap, 64 << 10);
  const Params ranked = train(*b, m, mine, kGlobalBatch / p, &reducer);
  // LibTorch overlaps when asked (gradient hooks); the others reduce
  // after backward whatever was asked.
  EXPECT_EQ(reducer.overlapped(), overlap && backend_name == "torch");
  // Negative control: the shards without averaging must differ, or this
  // test could not tell averaging from not reducing at all.
  const Params unreduced = train(*b, m, mine, kGlobalBatch / p, nullptr);

  const Diff d = compare(ranked, alone, init);
  const Diff control = compare(unreduced, alone, init);
  // fp32: the ranks' mean of half-batch means sums in another order than
  // the whole batch's mean; 3 steps of SGD kept that below 3e-8 here. The
  // tolerance is 100x below how far the parameters moved.
  const double tol = 1e-6;
  EXPECT_GT(d.max_moved, 100 * tol) << "the parameters barely moved";
  EXPECT_LE(d.max_abs, tol)
      << backend_name << " " << model_name << " rank " << group->rank();
  EXPECT_GT(control.max_abs, 10 * tol) << "unreduced shards matched too";
  std::printf(
      "%s %s rank %d/%d: max |ranked - alone| %.3g, moved %.3g, "
      "unreduced control %.3g\n",
      backend_name.c_str(), model_name.c_str(), group->rank(), p, d.max_abs,
      d.max_moved, control.max_abs);
  // Every rank holds the same parameters.
  double sum = 0;
  for (const auto& [name, t] : ranked)
    for (float v : t.f) sum += v;
  const auto all = group->allgather({sum});
  for (const auto& r : all) EXPECT_EQ(r[0], all[0][0]);
}

bool built(const std::string& name) {
  for (const auto& n : backend::backend_names())
    if (n == name) return true;
  return false;
}

class Equivalence : public ::testing::TestWithParam<
                        std::tuple<std::string, std::string, bool>> {};

TEST_P(Equivalence, RanksMatchOneProcessOnTheGlobalBatch) {
  const auto& [backend_name, model_name, overlap] = GetParam();
  if (!built(backend_name)) GTEST_SKIP() << backend_name << " not built";
  check_equivalent(backend_name, model_name, overlap);
}

INSTANTIATE_TEST_SUITE_P(
    Backends, Equivalence,
    ::testing::Combine(::testing::Values("reference", "torch", "onednn"),
                       ::testing::Values("mnist-mlp", "mnist-cnn"),
                       ::testing::Bool()),
    [](const auto& info) {
      std::string s = std::get<0>(info.param) + "_" + std::get<1>(info.param) +
                      (std::get<2>(info.param) ? "_overlap" : "");
      for (char& c : s)
        if (c == '-') c = '_';
      return s;
    });

}  // namespace
}  // namespace nnbench

// Usage: dist_tests ENGINE [gtest flags]; ranks and rendezvous from the
// environment (mpirun; NNBENCH_RENDEZVOUS for gloo).
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s mpi|gloo [gtest flags]\n", argv[0]);
    return 2;
  }
  nnbench::distributed::GroupOptions o;
  o.timeout_seconds = 120;
  std::unique_ptr<nnbench::distributed::Group> g;
  try {
    g = nnbench::distributed::make_group(argv[1], o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dist_tests: %s\n", e.what());
    return 1;
  }
  nnbench::group = g.get();
  // Only rank 0 prints gtest's report; every rank runs every test.
  if (g->rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int failed = RUN_ALL_TESTS();
  // A failure on any rank fails the test everywhere.
  const int any = nnbench::distributed::first_failed_rank(*g, failed != 0);
  return any >= 0 ? 1 : 0;
}
