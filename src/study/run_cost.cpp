#include "study/run_cost.h"

#include <map>
#include <string>

#include "results/training.h"
#include "study/derive.h"

namespace nnbench::study {

namespace {

std::optional<double> number(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

}  // namespace

std::optional<double> priced_seconds(const ResultRow& r) {
  if (!r.record.is_object()) return std::nullopt;
  // The rule is results::priced_seconds's; the stored record gives the times
  // (time to target is null unless the run converged).
  return results::priced_seconds(
      results::state_from_name(r.state), r.valid,
      number(r.record, "time_to_target_seconds").value_or(0),
      number(r.record, "total_train_seconds").value_or(0));
}

std::vector<DerivedRow> derive_costs(const std::vector<ResultRow>& rows,
                                     const cost::Instance& instance,
                                     int baseline_threads) {
  std::map<std::string, std::map<int, std::vector<double>>> groups;
  std::vector<std::string> order;
  for (const auto& r : rows) {
    const auto s = priced_seconds(r);
    if (!s || *s <= 0) continue;
    const std::string loop =
        r.record.is_object() ? r.record.value("loop", std::string()) : "";
    const std::string g = r.model + " " +
                          results::engine_label(r.backend, loop) + " " +
                          r.precision;
    if (!groups.count(g)) order.push_back(g);
    groups[g][threads_of(r)].push_back(*s);
  }
  std::vector<DerivedRow> out;
  for (const auto& g : order) {
    const auto& xs = groups[g];
    std::map<int, std::pair<double, double>> priced;  // seconds, usd
    for (const auto& [t, v] : xs) {
      const double s = median_of(v);
      const double usd =
          s / 3600 * cost::instance_price(instance, t).usd_per_hour;
      priced[t] = {s, usd};
      out.push_back({"train_seconds", g, double(t), s});
      out.push_back({"cost_usd", g, double(t), usd});
    }
    const int base_t =
        baseline_threads > 0 ? baseline_threads : xs.rbegin()->first;
    const auto base = priced.find(base_t);
    if (base == priced.end()) continue;
    for (const auto& [t, p] : priced) {
      out.push_back(
          {"relative_time", g, double(t), p.first / base->second.first});
      out.push_back(
          {"relative_cost", g, double(t), p.second / base->second.second});
    }
  }
  return out;
}

}  // namespace nnbench::study
