#include "study/derive.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>

namespace nnbench::study {
double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

namespace {

std::string base_group(const ResultRow& r) {
  return r.model + " " + r.backend + " " + r.precision + " " + r.mode;
}

}  // namespace

int threads_of(const ResultRow& r) {
  if (!r.record.is_object()) return r.threads;
  const auto e = r.record.value("effective", nlohmann::json::object());
  if (e.contains("threads") && e["threads"].is_string()) {
    const int t = std::atoi(e["threads"].get<std::string>().c_str());
    if (t > 0) return t;
  }
  return r.threads;
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
  return out;
}

}  // namespace nnbench::study
