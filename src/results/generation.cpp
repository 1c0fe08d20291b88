#include "results/generation.h"

#include "results/result.h"

namespace nnbench::results {
namespace {

using nlohmann::json;

json percentile_json(const Percentile& p) {
  return {{"seconds", p.value},
          {"ci_lo", p.ci.lo},
          {"ci_hi", p.ci.hi},
          {"ci_coverage", p.ci.coverage}};
}

Percentile percentile_from_json(const json& j) {
  return {j.at("seconds"), {j.at("ci_lo"), j.at("ci_hi"), j.at("ci_coverage")}};
}

}  // namespace

std::string generation_request_problem(const GenerationRequest& r) {
  const auto outside = [](const char* field, int64_t v, int64_t lo,
                          int64_t hi) -> std::string {
    if (v >= lo && v <= hi) return "";
    return std::string(field) + " " + std::to_string(v) + " is outside [" +
           std::to_string(lo) + ", " + std::to_string(hi) + "]";
  };
  for (const std::string& why :
       {outside("batch", r.batch, 1, kMaxGenerationBatch),
        outside("prompt", r.prompt, 1, kMaxGenerationTokens),
        outside("new_tokens", r.new_tokens, 2, kMaxGenerationTokens),
        outside("warmup", r.warmup, 0, kMaxGenerationWarmup),
        outside("repetitions", r.repetitions, 1, kMaxGenerationRepetitions)})
    if (!why.empty()) return why;
  return "";
}

json to_json(const GenerationRequest& r) {
  return {{"batch", r.batch},
          {"prompt_tokens", r.prompt},
          {"new_tokens", r.new_tokens},
          {"warmup", r.warmup},
          {"repetitions", r.repetitions}};
}

GenerationRequest generation_request_from_json(const json& j) {
  GenerationRequest r;
  r.batch = j.at("batch");
  r.prompt = j.at("prompt_tokens");
  r.new_tokens = j.at("new_tokens");
  r.warmup = j.at("warmup");
  r.repetitions = j.at("repetitions");
  return r;
}

Headline GenerationRun::headline() const {
  if (state != State::kOk) return {};
  return {tpot.median, generation_tokens_per_second};
}

json GenerationRun::serialize() const {
  json j;
  write_record(*this, j);
  j["requested"] = request_json(requested);
  j["generation"] = to_json(asked);
  const bool measured = state == State::kOk && !ttft_seconds.empty();
  j["ttft_seconds_raw"] = ttft_seconds;
  j["itl_seconds_raw"] = itl_seconds;
  j["weight_bytes"] = weight_bytes > 0 ? json(weight_bytes) : json();
  j["tokens"] = tokens;
  if (!measured) return j;
  j["ttft_seconds"] = to_json(ttft);
  j["tpot_seconds"] = to_json(tpot);
  j["itl"] = {{"p50", percentile_json(itl_p50)},
              {"p90", percentile_json(itl_p90)},
              {"p99", percentile_json(itl_p99)}};
  j["prefill_tokens_per_second"] = finite_or_null(prefill_tokens_per_second);
  j["generation_tokens_per_second"] =
      finite_or_null(generation_tokens_per_second);
  if (ceiling)
    j["bandwidth_ceiling"] = {
        {"bandwidth_gbs", ceiling->bandwidth_gbs},
        {"measured_gbs", ceiling->measured_gbs},
        {"kernel", ceiling->kernel},
        {"threads", ceiling->threads},
        {"steps_per_second", finite_or_null(ceiling->steps_per_second)},
        {"fraction", finite_or_null(ceiling->fraction)}};
  if (ceiling && !ceiling->device.empty())
    j["bandwidth_ceiling"]["device"] = ceiling->device;
  if (ceiling && !ceiling->between_gbs.empty())
    j["bandwidth_ceiling"]["between_gbs"] = ceiling->between_gbs;
  if (ceiling && !ceiling->pages.empty())
    j["bandwidth_ceiling"]["pages"] = ceiling->pages;
  if (!ceiling && !no_ceiling.empty()) j["no_bandwidth_ceiling"] = no_ceiling;
  return j;
}

GenerationRun generation_run_from_json(const json& j) {
  GenerationRun r;
  read_record(j, r);
  r.requested = request_from_json(j.at("requested"));
  r.asked = generation_request_from_json(j.at("generation"));
  r.ttft_seconds = j.at("ttft_seconds_raw").get<std::vector<double>>();
  r.itl_seconds =
      j.at("itl_seconds_raw").get<std::vector<std::vector<double>>>();
  r.weight_bytes =
      j.at("weight_bytes").is_number() ? j["weight_bytes"].get<double>() : 0.0;
  r.tokens = j.at("tokens").get<std::vector<int64_t>>();
  r.no_ceiling = j.value("no_bandwidth_ceiling", std::string());
  if (!j.contains("ttft_seconds")) return r;
  r.ttft = summary_from_json(j.at("ttft_seconds"));
  r.tpot = summary_from_json(j.at("tpot_seconds"));
  const json& itl = j.at("itl");
  r.itl_p50 = percentile_from_json(itl.at("p50"));
  r.itl_p90 = percentile_from_json(itl.at("p90"));
  r.itl_p99 = percentile_from_json(itl.at("p99"));
  r.prefill_tokens_per_second =
      number_or_nan(j.at("prefill_tokens_per_second"));
  r.generation_tokens_per_second =
      number_or_nan(j.at("generation_tokens_per_second"));
  if (j.contains("bandwidth_ceiling")) {
    const json& c = j["bandwidth_ceiling"];
    Ceiling& to = r.ceiling.emplace();
    to.bandwidth_gbs = c.at("bandwidth_gbs");
    to.measured_gbs = c.value("measured_gbs", std::vector<double>{});
    to.threads = c.at("threads");
    to.steps_per_second = number_or_nan(c.at("steps_per_second"));
    to.fraction = number_or_nan(c.at("fraction"));
    to.kernel = c.value("kernel", std::string("triad"));
    to.device = c.value("device", std::string());
    to.between_gbs = c.value("between_gbs", std::vector<double>{});
    to.pages = c.value("pages", std::string());
  }
  return r;
}

}  // namespace nnbench::results
