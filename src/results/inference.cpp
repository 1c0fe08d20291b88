#include "results/inference.h"

#include <algorithm>
#include <cmath>

namespace nnbench::results {

using nlohmann::json;

const std::vector<std::pair<std::string, Traits>>& inference_kinds() {
  static const std::vector<std::pair<std::string, Traits>> k = {
      {"single-stream", {Measure::kQueries}},
      {"multi-stream",
       {Measure::kQueries, false, true, /*rate_from_mean_latency=*/true}},
      {"server", {Measure::kQueries, /*paced=*/true}},
      {"offline", {Measure::kQueries, false, /*query_latencies=*/false}},
  };
  return k;
}

json InferenceRun::serialize() const { return to_json(*this); }

std::vector<InferenceRun> inference_runs(const std::vector<json>& other) {
  std::vector<InferenceRun> out;
  for (const auto& j : other)
    if (traits_of(j.value("kind", "")).measure == Measure::kQueries)
      out.push_back(inference_run_from_json(j));
  return out;
}

Headline InferenceRun::headline() const {
  Headline h;
  if (std::isfinite(percentile_latency)) h.median_seconds = percentile_latency;
  if (std::isfinite(samples_per_second))
    h.samples_per_second = samples_per_second;
  return h;
}

double cost_throughput(const InferenceRun& r) {
  if (std::isfinite(r.samples_per_second) && r.samples_per_second > 0)
    return r.samples_per_second;
  if (traits_of(r.kind).rate_from_mean_latency &&
      std::isfinite(r.mean_latency) && r.mean_latency > 0 && r.query_count > 0)
    return static_cast<double>(r.sample_count) / r.query_count / r.mean_latency;
  return NAN;
}

void price(InferenceRun& r, double usd_per_hour, const std::string& source) {
  r.usd_per_hour = usd_per_hour;
  r.price_source = source;
  const double sps = cost_throughput(r);
  r.usd_per_10k = std::isfinite(sps) ? usd_per_hour / 3600 * 10000 / sps : NAN;
}

json to_json(const InferenceRun& r) {
  json j;
  write_record(r, j);
  j["requested"] = request_json(r.requested);
  j["settings"] = r.settings;
  j["mode"] = r.mode;
  j["instances"] = r.instances;
  j["padded_samples"] = r.padded_samples;
  j["loadgen"] = {{"version", r.loadgen_version},
                  {"settings", r.loadgen_settings},
                  {"valid", r.loadgen_valid},
                  {"reasons", r.loadgen_reasons},
                  {"summary", r.loadgen_summary}};
  json pct = json::object();
  for (const auto& [k, v] : r.latency_percentiles) pct[k] = finite_or_null(v);
  j["figures"] = {
      {"samples_per_second", finite_or_null(r.samples_per_second)},
      {"percentile", r.percentile},
      {"percentile_latency_seconds", finite_or_null(r.percentile_latency)},
      {"early_stopping_latency_seconds",
       finite_or_null(r.early_stopping_latency)},
      {"target_qps", finite_or_null(r.target_qps)},
      {"latency_bound_seconds", finite_or_null(r.latency_bound)},
      {"latency_percentiles_seconds", pct},
      {"mean_latency_seconds", finite_or_null(r.mean_latency)},
      {"min_latency_seconds", finite_or_null(r.min_latency)},
      {"max_latency_seconds", finite_or_null(r.max_latency)},
      {"query_count", r.query_count},
      {"sample_count", r.sample_count}};
  j["percentile_interval"] = {
      {"samples", r.latency_samples},
      {"low_seconds", finite_or_null(r.percentile_ci.lo)},
      {"high_seconds", finite_or_null(r.percentile_ci.hi)},
      {"coverage", r.percentile_ci.coverage}};
  j["tokens"] = nullptr;
  if (r.tokens) {
    const TokenLatencies& t = *r.tokens;
    j["tokens"] = {{"prompt", t.prompt},
                   {"new_tokens", t.new_tokens},
                   {"ttft_bound_seconds", finite_or_null(t.ttft_bound)},
                   {"tpot_bound_seconds", finite_or_null(t.tpot_bound)},
                   {"ttft_seconds", finite_or_null(t.ttft)},
                   {"tpot_seconds", finite_or_null(t.tpot)},
                   {"ttft_mean_seconds", finite_or_null(t.ttft_mean)},
                   {"tpot_mean_seconds", finite_or_null(t.tpot_mean)},
                   {"tokens_per_second", finite_or_null(t.tokens_per_second)}};
  }
  j["accuracy"] = {{"dataset", r.dataset},
                   {"samples", r.scored_samples},
                   {"top1", finite_or_null(r.accuracy)},
                   {"fp32_top1", finite_or_null(r.fp32_accuracy)}};
  j["cost"] = {{"usd_per_hour", finite_or_null(r.usd_per_hour)},
               {"price_source", r.price_source},
               {"usd_per_10k_inferences", finite_or_null(r.usd_per_10k)}};
  return j;
}

InferenceRun inference_run_from_json(const json& j) {
  InferenceRun r;
  read_record(j, r);
  r.requested = request_from_json(j.at("requested"));
  r.settings = j.at("settings").get<std::map<std::string, std::string>>();
  r.mode = j.at("mode");
  r.instances = j.at("instances");
  r.padded_samples = j.at("padded_samples");
  const json& l = j.at("loadgen");
  r.loadgen_version = l.at("version");
  r.loadgen_settings = l.at("settings");
  r.loadgen_valid = l.at("valid");
  r.loadgen_reasons = l.at("reasons").get<std::vector<std::string>>();
  r.loadgen_summary = l.at("summary");
  const json& f = j.at("figures");
  r.samples_per_second = number_or_nan(f.at("samples_per_second"));
  r.percentile = f.at("percentile");
  r.percentile_latency = number_or_nan(f.at("percentile_latency_seconds"));
  r.early_stopping_latency =
      number_or_nan(f.at("early_stopping_latency_seconds"));
  r.target_qps = number_or_nan(f.at("target_qps"));
  r.latency_bound = number_or_nan(f.at("latency_bound_seconds"));
  for (const auto& [k, v] : f.at("latency_percentiles_seconds").items())
    r.latency_percentiles[k] = number_or_nan(v);
  r.mean_latency = number_or_nan(f.at("mean_latency_seconds"));
  r.min_latency = number_or_nan(f.at("min_latency_seconds"));
  r.max_latency = number_or_nan(f.at("max_latency_seconds"));
  r.query_count = f.at("query_count");
  r.sample_count = f.at("sample_count");
  const json& o = j.at("percentile_interval");
  r.latency_samples = o.at("samples");
  r.percentile_ci = {number_or_nan(o.at("low_seconds")),
                     number_or_nan(o.at("high_seconds")), o.at("coverage")};
  if (const json t = j.value("tokens", json()); t.is_object())
    r.tokens = TokenLatencies{t.at("prompt"),
                              t.at("new_tokens"),
                              number_or_nan(t.at("ttft_bound_seconds")),
                              number_or_nan(t.at("tpot_bound_seconds")),
                              number_or_nan(t.at("ttft_seconds")),
                              number_or_nan(t.at("tpot_seconds")),
                              number_or_nan(t.at("ttft_mean_seconds")),
                              number_or_nan(t.at("tpot_mean_seconds")),
                              number_or_nan(t.at("tokens_per_second"))};
  const json& a = j.at("accuracy");
  r.dataset = a.at("dataset");
  r.scored_samples = a.at("samples");
  r.accuracy = number_or_nan(a.at("top1"));
  r.fp32_accuracy = number_or_nan(a.value("fp32_top1", json()));
  const json c = j.value("cost", json::object());
  r.usd_per_hour = number_or_nan(c.value("usd_per_hour", json()));
  r.price_source = c.value("price_source", "");
  r.usd_per_10k = number_or_nan(c.value("usd_per_10k_inferences", json()));
  return r;
}

}  // namespace nnbench::results
