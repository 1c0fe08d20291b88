#pragma once
// The rules MLPerf's log compliance checker applies to every training log,
// transcribed by hand (not derived from nnbench's code) from the public
// repository mlcommons/logging:
//   mlperf_logging/compliance_checker/training_5.1.0/common.yaml (all keys
//     below unless noted; 1.0.0 to 4.1.0 are the same rules)
//   .../training_3.0.0/common.yaml and 1.0.0/common.yaml: submission_status
//   .../training_5.1.0/closed_common.yaml: gradient_accumulation_steps
//   .../training_3.0.0/closed_ssd.yaml, closed_maskrcnn.yaml: the
//     hyperparameter keys every benchmark requires (global_batch_size,
//     opt_name, opt_base_learning_rate, opt_weight_decay)
//   .../mlp_parser/ruleset_610.py: how a line is parsed
// The checker's semantics (mlp_compliance.py): each rule's CHECKs run on its
// key's lines in file order with shared state `s`; then the REQ counts.
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace nnbench::test {

struct MllogLine {
  double time_ms = 0;
  std::string key;
  nlohmann::json value, metadata;
};

// ruleset_610.py: lines starting with ":::MLLOG " hold a JSON object whose
// time_ms, key, value and metadata are read; anything else is an error.
inline std::vector<MllogLine> parse_mllog(const std::string& text,
                                          std::vector<std::string>& errors) {
  std::vector<MllogLine> out;
  std::istringstream in(text);
  const std::string token = ":::MLLOG ";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(token, 0) != 0) {
      errors.push_back("not an MLLOG line: " + line);
      continue;
    }
    try {
      const auto j = nlohmann::json::parse(line.substr(token.size()));
      out.push_back({j.at("time_ms").get<double>(), j.at("key"), j.at("value"),
                     j.at("metadata")});
    } catch (const std::exception& e) {
      errors.push_back(std::string(e.what()) + ": " + line);
    }
  }
  return out;
}

// Returns one message per rule broken; empty when the log passes.
inline std::vector<std::string> check_common_rules(
    const std::vector<MllogLine>& lines) {
  std::vector<std::string> bad;
  const std::set<std::string> exactly_one = {"submission_org",
                                             "submission_platform",
                                             "submission_division",
                                             "submission_status",
                                             "init_stop",
                                             "run_start",
                                             "run_stop",
                                             "train_samples",
                                             "eval_samples",
                                             "global_batch_size",
                                             "gradient_accumulation_steps",
                                             "opt_name",
                                             "opt_base_learning_rate",
                                             "opt_weight_decay"};
  const std::set<std::string> at_least_one = {"cache_clear", "init_start",
                                              "eval_accuracy"};
  // AT_LEAST_ONE_OR(x): one of the two keys must appear.
  const std::vector<std::pair<std::string, std::string>> either = {
      {"epoch_start", "block_start"},
      {"epoch_stop", "block_stop"},
      {"eval_start", "block_start"},
      {"eval_stop", "block_stop"}};
  const std::set<std::string> needs_epoch = {
      "epoch_start", "epoch_stop", "eval_start", "eval_stop", "eval_accuracy"};
  std::map<std::string, int> count;
  bool init_started = false, init_stopped = false, run_started = false;
  double first_init_start = 9e99, compile_time_mins = 0;
  auto check = [&](bool ok, const MllogLine& l, const std::string& what) {
    if (!ok) bad.push_back(l.key + ": " + what);
  };
  for (const auto& l : lines) {
    ++count[l.key];
    const auto& v = l.value;
    if (l.key == "submission_org" || l.key == "submission_platform" ||
        l.key == "train_samples" || l.key == "eval_samples")
      check(v != "", l, "value != ''");
    if (l.key == "submission_division") {
      check(v == "closed" || v == "open", l, "value in [closed, open]");
      compile_time_mins = v == "open" ? 240 : 30;
    }
    if (l.key == "submission_status")
      check(v == "cloud" || v == "onprem" || v == "preview" || v == "research",
            l, "value in [cloud, onprem, preview, research]");
    if (l.key == "init_start") {
      check(!init_stopped && !run_started, l, "before init_stop, run_start");
      init_started = true;
      first_init_start = std::min(first_init_start, l.time_ms);
    }
    if (l.key == "init_stop") {
      check(init_started && !run_started, l, "after init_start");
      check(l.time_ms - first_init_start < compile_time_mins * 60 * 1e3, l,
            "within the division's init time");
      init_stopped = true;
    }
    if (l.key == "run_start") {
      check(init_stopped, l, "after init_stop");
      run_started = true;
    }
    if (l.key == "run_stop") {
      check(run_started, l, "after run_start");
      check(l.metadata.contains("status"), l, "'status' in metadata");
    }
    if (needs_epoch.count(l.key))
      check(l.metadata.contains("epoch_num") ||
                l.metadata.contains("samples_count"),
            l, "'epoch_num' or 'samples_count' in metadata");
    if (l.key == "global_batch_size")  // closed_maskrcnn.yaml
      check(v.is_number() && v.get<double>() > 0, l, "value > 0");
    if (l.key == "gradient_accumulation_steps")  // closed_common.yaml
      check(v.is_number() && v.get<double>() > 0, l, "value > 0");
    if (l.key == "opt_base_learning_rate")  // closed_ssd.yaml
      check(v.is_number() && v.get<double>() >= 0, l, "value >= 0");
  }
  for (const auto& k : exactly_one)
    if (count[k] != 1)
      bad.push_back("EXACTLY_ONE " + k + ", found " + std::to_string(count[k]));
  for (const auto& k : at_least_one)
    if (count[k] < 1) bad.push_back("AT_LEAST_ONE " + k);
  for (const auto& [a, b] : either)
    if (count[a] + count[b] < 1)
      bad.push_back("AT_LEAST_ONE " + a + " or " + b);
  return bad;
}

}  // namespace nnbench::test
