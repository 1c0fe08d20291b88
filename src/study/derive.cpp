#include "study/derive.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>

#include "results/record.h"

namespace nnbench::study {
double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

namespace {

std::string model_group(const ResultRow& r) {
  return r.model + " " + r.backend + " " + r.precision + " " + r.mode;
}

// Thread sweeps and batch sweeps compare like with like: the same number
// of processes.
std::string base_group(const ResultRow& r) {
  const int p = ranks_of(r);
  return model_group(r) +
         (p > 1 ? " p" + std::to_string(p) + " " + engine_of(r) : "");
}

// Speed-up over processes, as the cloud study shows GPUs: each engine's
// ranks against the 1-process case of the same batch and threads,
// measured (never one rank's time scaled). Throughput (samples/s counts
// the global batch) makes strong and weak scaling the same ratio.
void derive_processes(const std::vector<ResultRow>& rows,
                      std::vector<DerivedRow>& out) {
  std::map<std::string, std::vector<double>> one;  // key -> samples/s
  std::map<std::string, std::map<int, std::vector<double>>> many;
  std::vector<std::string> order;
  for (const auto& r : rows) {
    if (r.state != "ok" || !r.valid || r.samples_per_second <= 0) continue;
    const std::string key = model_group(r) + " b" + std::to_string(r.batch) +
                            " t" + std::to_string(threads_of(r));
    if (ranks_of(r) == 1) {
      one[key].push_back(r.samples_per_second);
      continue;
    }
    const std::string g = key + " " + engine_of(r);
    if (!many.count(g)) order.push_back(g);
    many[g][ranks_of(r)].push_back(r.samples_per_second);
  }
  for (const auto& g : order) {
    const auto base = one.find(g.substr(0, g.rfind(' ')));
    if (base == one.end()) continue;
    const double b = median_of(base->second);
    out.push_back({"speedup_processes", g, 1, 1});
    out.push_back({"efficiency_processes", g, 1, 1});
    for (const auto& [p, v] : many[g]) {
      const double speedup = median_of(v) / b;
      out.push_back({"speedup_processes", g, double(p), speedup});
      out.push_back({"efficiency_processes", g, double(p), speedup / p});
    }
  }
}

}  // namespace

int ranks_of(const ResultRow& r) {
  if (!r.record.is_object() || !r.record.contains("distributed")) return 1;
  return r.record["distributed"].value("ranks", 1);
}

std::string engine_of(const ResultRow& r) {
  if (ranks_of(r) == 1) return "";
  return r.record["distributed"].value("engine", "");
}

int threads_of(const ResultRow& r) {
  if (!r.record.is_object()) return r.threads;
  const int t = results::effective_from_json(
                    r.record.value("effective", nlohmann::json::object()))
                    .threads;
  return t > 0 ? t : r.threads;
}

std::vector<DerivedRow> derive(const std::vector<ResultRow>& rows) {
  // group -> x -> medians of the repetitions
  std::map<std::string, std::map<int, std::vector<double>>> by_threads;
  std::map<std::string, std::map<int64_t, std::vector<double>>> by_batch;
  std::vector<std::string> order_t, order_b;
  for (const auto& r : rows) {
    if (r.state != "ok" || !r.valid || r.median_seconds <= 0) continue;
    const std::string gt = base_group(r) + " b" + std::to_string(r.batch);
    const std::string gb = base_group(r) + " t" + std::to_string(threads_of(r));
    if (!by_threads.count(gt)) order_t.push_back(gt);
    if (!by_batch.count(gb)) order_b.push_back(gb);
    by_threads[gt][threads_of(r)].push_back(r.median_seconds);
    by_batch[gb][r.batch].push_back(r.median_seconds);
  }
  std::vector<DerivedRow> out;
  for (const auto& g : order_t) {
    const auto& xs = by_threads[g];
    const auto one = xs.find(1);
    if (xs.size() < 2 || one == xs.end()) continue;
    const double base = median_of(one->second);
    for (const auto& [t, v] : xs) {
      const double speedup = base / median_of(v);
      out.push_back({"speedup", g, double(t), speedup});
      out.push_back({"efficiency", g, double(t), speedup / t});
    }
  }
  for (const auto& g : order_b) {
    const auto& xs = by_batch[g];
    if (xs.size() < 2) continue;
    for (const auto& [b, v] : xs)
      out.push_back({"samples_per_second", g, double(b), b / median_of(v)});
  }
  derive_processes(rows, out);
  return out;
}

}  // namespace nnbench::study
