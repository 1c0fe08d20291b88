#include "bench/parallel.h"

#include <fmt/core.h>
#include <sched.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "bench/cpu_usage.h"
#include "bench/statistics.h"
#include "distributed/check.h"
#include "distributed/shard.h"
#include "model/model_file.h"

namespace nnbench::bench {

using results::RunError;
using results::State;

Parallel::Parallel(distributed::Group* g, const results::RunRequest& r)
    : group_(g), request_(r), global_(r.batch), per_rank_(r.batch) {
  if (!g && !r.distributed.engine.empty())
    throw RunError(State::kInvalidArgs,
                   "a data-parallel request (" + r.distributed.engine +
                       ") in a process that is not one of its ranks: suites "
                       "run such cases isolated, not --in-process");
  if (!g) return;
  if (r.distributed.engine.empty())
    throw RunError(State::kInvalidArgs,
                   "a communication group without a distributed request");
  const int p = g->size();
  if (r.distributed.scaling == "weak") {
    global_ = r.batch * p;
  } else if (r.distributed.scaling == "strong") {
    if (r.batch % p != 0)
      throw RunError(State::kInvalidArgs,
                     "strong scaling splits the global batch " +
                         std::to_string(r.batch) + " over " +
                         std::to_string(p) +
                         " ranks: it must be a multiple of the rank count");
    per_rank_ = r.batch / p;
  } else {
    throw RunError(State::kInvalidArgs, "scaling '" + r.distributed.scaling +
                                            "': expected strong or weak");
  }
  local_ranks_ = distributed::local_ranks(*g);
  host_ = distributed::host_hash();
}

void Parallel::check_config(const backend::Backend& b,
                            const model::Model& m) const {
  if (!group_) return;
  const auto& r = request_;
  const auto& o = r.options;
  distributed::check_same_config(
      *group_, {{"model", model::model_hash(m)},
                {"backend", b.name() + " " + b.version()},
                {"mode", backend::mode_name(r.mode)},
                {"precision", o.precision},
                {"batch", std::to_string(r.batch)},
                {"scaling", r.distributed.scaling},
                {"seed", std::to_string(o.seed)},
                {"threads", std::to_string(o.threads)},
                {"device", o.device},
                {"optimizer", results::optimizer_json(o).dump()},
                {"distinct_batches", std::to_string(r.distinct_batches)},
                {"engine", group_->engine()},
                {"overlap", r.distributed.overlap ? "yes" : "no"},
                {"bucket_bytes", std::to_string(r.distributed.bucket_bytes)}});
}

std::vector<host::Batch> Parallel::shard(
    const std::vector<host::Batch>& global) const {
  if (!group_) return global;
  std::vector<host::Batch> mine;
  for (const auto& b : global)
    mine.push_back(distributed::shard(b, group_->rank(), group_->size()));
  return mine;
}

void Parallel::attach(backend::Executable& exe) {
  if (!group_ || request_.mode != backend::Mode::kTrain) return;
  reducer_ = std::make_unique<distributed::MeanReducer>(
      *group_, request_.distributed.overlap, request_.distributed.bucket_bytes);
  exe.set_gradient_reducer(reducer_.get());
}

void Parallel::ready(bool failed) const {
  if (!group_ || ready_) return;
  ready_ = true;
  const int first = distributed::first_failed_rank(*group_, failed);
  if (!failed && first >= 0)
    throw RunError(State::kFailed, "rank " + std::to_string(first) +
                                       " failed before measuring (see its "
                                       "output)");
}

// Fault injection for the tests of a dying rank: NNBENCH_FAULT_KILL=R:S
// kills rank R with SIGKILL after its S-th measured step.
void maybe_die(int rank, size_t steps) {
  static const char* spec = std::getenv("NNBENCH_FAULT_KILL");
  int r = -1, s = -1;
  if (spec && std::sscanf(spec, "%d:%d", &r, &s) == 2 && r == rank &&
      static_cast<size_t>(s) == steps)
    std::raise(SIGKILL);
}

void Parallel::agree(double* seconds, bool* done, bool measured) {
  if (!group_) return;
  if (measured) {
    maybe_die(group_->rank(), own_steps_.size() + 1);
    own_steps_.push_back(*seconds);
    allreduce_.push_back(reducer_ ? reducer_->last_allreduce_seconds() : 0);
  }
  double v[2] = {*seconds, *done ? 1.0 : 0.0};
  group_->allreduce_max(v, 2);
  *seconds = v[0];
  *done = v[1] > 0;
}

namespace {

// This process's CPU affinity mask as 32-bit words, exact in doubles, so
// that it travels through allgather.
constexpr int kMaskWords = CPU_SETSIZE / 32;
std::vector<double> mask_words() {
  cpu_set_t set;
  std::vector<double> w(kMaskWords, 0.0);
  if (!process_cpus(&set)) return w;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) w[c / 32] += static_cast<double>(1u << (c % 32));
  return w;
}

int bits(const std::vector<uint32_t>& words) {
  int n = 0;
  for (uint32_t x : words) n += __builtin_popcount(x);
  return n;
}

}  // namespace

void Parallel::exclude_other_ranks(results::CpuUsage& u,
                                   results::Validity& v) const {
  if (!group_) {
    if (u.cpus > 0 && u.threads > u.cpus)
      v.add("oversubscribed", std::to_string(u.threads) + " threads on the " +
                                  std::to_string(u.cpus) +
                                  " CPUs this process may use: they take "
                                  "turns on the cores");
    return;
  }
  std::vector<double> mine = {u.process_cpu_seconds, host_,
                              static_cast<double>(u.threads)};
  const auto words = mask_words();
  mine.insert(mine.end(), words.begin(), words.end());
  const auto all = group_->allgather(mine);
  double others = 0;
  // Per machine: every rank's threads against the CPUs of all their masks
  // (mpirun binds each rank to its own core by default), and each rank's
  // against its own mask.
  int threads = 0;
  std::vector<uint32_t> cpus(kMaskWords, 0);
  std::string crowded;
  for (int r = 0; r < group_->size(); ++r) {
    if (all[r][1] != host_) continue;
    if (r != group_->rank()) others += all[r][0];
    threads += static_cast<int>(all[r][2]);
    std::vector<uint32_t> own(kMaskWords);
    for (int i = 0; i < kMaskWords; ++i) {
      own[i] = static_cast<uint32_t>(all[r][3 + i]);
      cpus[i] |= own[i];
    }
    if (all[r][2] > bits(own) && crowded.empty())
      crowded = fmt::format("rank {}: {} threads on the {} CPUs of its mask", r,
                            all[r][2], bits(own));
  }
  if (u.other_cpu_seconds >= 0)
    u.other_cpu_seconds = std::max(0.0, u.other_cpu_seconds - others);
  if (!crowded.empty())
    v.add("oversubscribed", crowded);
  else if (threads > bits(cpus))
    v.add("oversubscribed", std::to_string(local_ranks_) + " ranks with " +
                                std::to_string(threads) +
                                " threads in all on the " +
                                std::to_string(bits(cpus)) +
                                " CPUs their masks allow on this machine");
}

void Parallel::finish(results::RunResult& res, int threads) const {
  if (!group_) return;
  results::DistributedRun d;
  d.engine = group_->engine();
  d.engine_version = group_->engine_version();
  d.scaling = request_.distributed.scaling;
  d.ranks = group_->size();
  d.local_ranks = local_ranks_;
  d.global_batch = global_;
  d.batch_per_rank = per_rank_;
  std::vector<double> compute;
  for (size_t i = 0; i < own_steps_.size(); ++i)
    compute.push_back(own_steps_[i] - allreduce_[i]);
  const auto all =
      group_->allgather({median(own_steps_), median(allreduce_),
                         median(compute), static_cast<double>(threads)});
  for (int r = 0; r < d.ranks; ++r)
    d.per_rank.push_back(
        {r, static_cast<int>(all[r][3]), all[r][0], all[r][1], all[r][2]});
  if (reducer_) {
    d.gradient_bytes = reducer_->bytes();
    d.allreduce_calls = reducer_->last_calls();
    d.bucket_bytes = request_.distributed.bucket_bytes;
    if (reducer_->overlapped())
      d.overlap =
          "bucketed during backward (gradient hooks); allreduce_seconds is "
          "the exposed wait after backward";
    else if (request_.distributed.overlap)
      d.overlap =
          "none: overlap asked, but this backend all-reduces after backward";
    for (const auto& r : d.per_rank)
      d.allreduce_seconds = std::max(d.allreduce_seconds, r.allreduce_seconds);
    if (d.allreduce_seconds > 0) {
      d.algorithm_gbytes_per_second =
          static_cast<double>(d.gradient_bytes) / d.allreduce_seconds / 1e9;
      d.bus_gbytes_per_second =
          d.algorithm_gbytes_per_second * 2.0 * (d.ranks - 1) / d.ranks;
    }
  } else {
    d.overlap = "none: inference exchanges nothing";
  }
  res.distributed = d;
  // The harness counted the requested batch (global under strong scaling,
  // per rank under weak); the run processed the global one, on every
  // rank's CPUs (each rank measured the same peak).
  const double scale =
      static_cast<double>(global_) / static_cast<double>(request_.batch);
  res.samples_per_second *= scale;
  res.gflops *= scale;
  res.peak_fraction *= scale / d.ranks;
  res.theoretical_fraction *= scale / d.ranks;
}

}  // namespace nnbench::bench
