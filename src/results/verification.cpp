#include "results/verification.h"

#include "results/record.h"
#include "util/error.h"

namespace nnbench::results {
using nlohmann::json;

std::string verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "PASS";
    case Verdict::kFail:
      return "FAIL";
    default:
      return "UNIMPLEMENTED";
  }
}

Verdict verdict_from_name(const std::string& s) {
  for (Verdict v : {Verdict::kPass, Verdict::kFail, Verdict::kUnimplemented})
    if (verdict_name(v) == s) return v;
  throw Error("unknown verification verdict '" + s + "'");
}

json to_json(const Verification& v) {
  json checks = json::array();
  for (const auto& c : v.checks)
    checks.push_back({{"tensor", c.what},
                      {"max_relative_error", finite_or_null(c.error)},
                      {"tolerance", c.tolerance},
                      {"pass", c.pass}});
  json j = {{"model", v.model},       {"oracle", v.oracle},
            {"backend", v.candidate}, {"precision", v.precision},
            {"batch", v.batch},       {"verdict", verdict_name(v.verdict)},
            {"message", v.message},   {"checks", checks}};
  const auto agreement = [](const std::optional<Agreement>& a) {
    if (!a) return json();
    return json{{"rows", a->rows},
                {"top1", finite_or_null(a->top1)},
                {"kl_nats", finite_or_null(a->kl)}};
  };
  j["agreement"] = agreement(v.agreement);
  j["generation_agreement"] = agreement(v.generation_agreement);
  return j;
}

Verification verification_from_json(const json& j) {
  Verification v;
  v.model = j.at("model");
  v.oracle = j.at("oracle");
  v.candidate = j.at("backend");
  v.precision = j.at("precision");
  v.batch = j.at("batch");
  v.verdict = verdict_from_name(j.at("verdict"));
  v.message = j.at("message");
  for (const auto& c : j.at("checks"))
    v.checks.push_back({c.at("tensor"),
                        number_or_nan(c.at("max_relative_error")),
                        c.at("tolerance"), c.at("pass")});
  const auto agreement = [&](const char* key) -> std::optional<Agreement> {
    if (const json a = j.value(key, json()); a.is_object())
      return Agreement{a.at("rows"), number_or_nan(a.at("top1")),
                       number_or_nan(a.at("kl_nats"))};
    return std::nullopt;
  };
  v.agreement = agreement("agreement");
  v.generation_agreement = agreement("generation_agreement");
  return v;
}

}  // namespace nnbench::results
