// The verdict under a suite's LoadGen table: per cell (model, scenario,
// precision, copies, threads, target QPS: an int8 engine is not compared
// with an fp32 one), the engine with the lowest percentile latency (the
// scenario's own: p90 single-stream, p99 otherwise) and whether its 95 %
// interval clears the runner-up's; offline, which has a throughput only,
// the most samples/s, one LoadGen run each, so no interval. Engines more
// than twice the winner's figure are named, as are runs with no figure
// (not ok, INVALID, or not valid) with their state.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "reporters/tables.h"
#include "results/kinds.h"

namespace nnbench::reporters {
namespace {

using Run = results::InferenceRun;

std::string ms(double s) { return fmt::format("{:.4g} ms", s * 1e3); }

// Latency scenarios are judged on their percentile; offline on samples/s.
bool by_latency(const Run& r) {
  return results::traits_of(r.kind).query_latencies;
}

bool measured(const Run& r) {
  if (r.state != results::State::kOk || !r.validity.valid() ||
      !r.loadgen_valid || r.mode == "accuracy")
    return false;
  return by_latency(r) ? std::isfinite(r.percentile_latency)
                       : std::isfinite(r.samples_per_second);
}

// Lower is better: the latency, or the time a sample takes offline.
double cost(const Run& r) {
  return by_latency(r) ? r.percentile_latency : 1.0 / r.samples_per_second;
}

std::string figure(const Run& r) {
  if (!by_latency(r))
    return fmt::format("{:.1f} samples/s", r.samples_per_second);
  std::string f = ms(r.percentile_latency);
  if (r.latency_samples > 0)
    f += fmt::format(" [{:.4g}, {:.4g}]", r.percentile_ci.lo * 1e3,
                     r.percentile_ci.hi * 1e3);
  return f;
}

bool has_interval(const Run& r) {
  return by_latency(r) && r.latency_samples > 0 &&
         r.percentile_ci.coverage >= 0.9;
}

std::string cell_line(const std::string& cell,
                      const std::vector<const Run*>& runs) {
  std::vector<const Run*> ranked;
  std::string others;
  for (const auto* r : runs) {
    if (measured(*r)) {
      ranked.push_back(r);
      continue;
    }
    std::string state = results::state_name(r->state);
    if (r->state == results::State::kOk)
      state = !r->loadgen_valid ? "LoadGen INVALID" : r->validity.summary();
    others +=
        fmt::format("{}{} {}", others.empty() ? "" : ", ", r->backend, state);
  }
  if (ranked.empty()) return "";
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](auto* a, auto* b) { return cost(*a) < cost(*b); });
  const Run& first = *ranked[0];
  const int p = static_cast<int>(std::lround(first.percentile * 100));
  std::string line = by_latency(first)
                         ? fmt::format("{}: fastest p{} {} {}", cell, p,
                                       first.backend, figure(first))
                         : fmt::format("{}: most samples/s {} {}", cell,
                                       first.backend, figure(first));
  if (ranked.size() > 1) {
    const Run& second = *ranked[1];
    const double ratio = cost(second) / cost(first);
    if (!by_latency(first))
      line += fmt::format(
          ", {:.2f}x ahead of {} {} (one LoadGen run each: "
          "no interval)",
          ratio, second.backend, figure(second));
    else if (!has_interval(first) || !has_interval(second))
      line += fmt::format(", not told apart from {} {} (no 90 % interval)",
                          second.backend, figure(second));
    else if (first.percentile_ci.hi >= second.percentile_ci.lo)
      line += fmt::format(", tied with {} {}", second.backend, figure(second));
    else
      line += fmt::format(", {:.2f}x ahead of {} {}", ratio, second.backend,
                          figure(second));
  } else {
    line += ", the only engine measured";
  }
  std::string behind;
  for (const auto* r : ranked)
    if (cost(*r) > 2 * cost(first))
      behind += fmt::format("{}{} {:.2f}x", behind.empty() ? "" : ", ",
                            r->backend, cost(*r) / cost(first));
  if (!behind.empty()) line += "; more than 2x behind: " + behind;
  if (!others.empty()) line += "; no figure: " + others;
  return line + "\n";
}

}  // namespace

std::string loadgen_verdict(const std::vector<results::InferenceRun>& runs) {
  using Cell =
      std::tuple<std::string, std::string, std::string, int, int, double>;
  std::map<Cell, std::vector<const Run*>> cells;
  std::vector<Cell> order;
  for (const auto& r : runs) {
    if (r.mode == "accuracy") continue;  // scored, not timed
    const Cell c{r.model, r.kind, r.requested.options.precision, r.instances,
                 r.requested.options.threads,
                 // A NaN (a record read without one) would break the map's
                 // order: such runs share the "no target" cell.
                 results::traits_of(r.kind).paced && std::isfinite(r.target_qps)
                     ? r.target_qps
                     : 0.0};
    if (!cells.count(c)) order.push_back(c);
    cells[c].push_back(&r);
  }
  std::string out;
  for (const auto& c : order) {
    const auto& [model, kind, precision, copies, asked, qps] = c;
    int threads = asked;  // every CPU asked (0): named by what ran
    for (const auto* r : cells[c])
      if (threads == 0 && r->effective.threads > 0)
        threads = r->effective.threads;
    const std::string name = fmt::format(
        "{} {}{}, {}, {} x {}", model, kind,
        qps > 0 ? fmt::format(" at {:g} QPS", qps) : "",
        precision.empty() ? "fp32" : precision, copies, threads_label(threads));
    out += cell_line(name, cells[c]);
  }
  return out;
}

}  // namespace nnbench::reporters
