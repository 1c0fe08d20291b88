#include "inference/settings.h"

#include <fmt/core.h>

#include <cmath>
#include <functional>
#include <set>

#include "results/generation.h"
#include "results/limits.h"
#include "util/error.h"

namespace nnbench::inference {
namespace {

const std::map<Scenario, std::string>& names() {
  static const std::map<Scenario, std::string> n = {
      {Scenario::kSingleStream, "single-stream"},
      {Scenario::kMultiStream, "multi-stream"},
      {Scenario::kServer, "server"},
      {Scenario::kOffline, "offline"}};
  return n;
}

[[noreturn]] void bad(const std::string& name, const std::string& value,
                      const std::string& want) {
  throw Error("setting " + name + " = '" + value + "': " + want);
}

// 65536, 0.5, 1e+07: whole numbers as integers in messages.
std::string shown(double v) {
  return v == std::floor(v) && std::fabs(v) < 1e15
             ? std::to_string(static_cast<int64_t>(v))
             : fmt::format("{:g}", v);
}

// A number in [lo, hi] ((lo, hi] when lo_open): every setting has an upper
// bound (results/limits.h), checked before anything is allocated.
double number(const std::string& name, const std::string& v, double lo,
              bool lo_open, double hi) {
  size_t used = 0;
  double x = 0;
  try {
    x = std::stod(v, &used);
  } catch (const std::out_of_range&) {
    x = v.empty() || v[0] != '-' ? HUGE_VAL : -HUGE_VAL;  // 1e999
    used = v.size();
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != v.size() || std::isnan(x))
    bad(name, v, "not a number");
  if (x < lo || (lo_open && x == lo))
    bad(name, v,
        std::string("must be ") + (lo_open ? "above " : "at least ") +
            shown(lo));
  if (x > hi) bad(name, v, "must be at most " + shown(hi) + " (the bound)");
  return x;
}

int64_t count(const std::string& name, const std::string& v, int64_t lo,
              int64_t hi) {
  const double x =
      number(name, v, static_cast<double>(lo), false, static_cast<double>(hi));
  if (x != std::floor(x)) bad(name, v, "not a whole number");
  return static_cast<int64_t>(x);
}

bool flag(const std::string& name, const std::string& v) {
  if (v == "true" || v == "1") return true;
  if (v == "false" || v == "0") return false;
  bad(name, v, "true or false");
}

// (settings, the setting's name, its value): the name only for messages.
using Apply =
    std::function<void(Settings&, const std::string&, const std::string&)>;
struct Entry {
  std::string help;
  Apply apply;
};

const std::map<std::string, Entry>& table() {
  static const std::map<std::string, Entry> t = {
      {"min_duration_s",
       {"LoadGen's minimum duration, seconds (10; at most 604800, a week)",
        [](Settings& s, const std::string& n, const std::string& v) {
          s.min_duration_seconds = number(n, v, 0, false, results::kMaxSeconds);
        }}},
      {"max_duration_s",
       {"stop after this many seconds (0: no limit; at most 604800)",
        [](Settings& s, const std::string& n, const std::string& v) {
          s.max_duration_seconds = number(n, v, 0, false, results::kMaxSeconds);
        }}},
      {"min_queries",
       {"LoadGen's minimum query count (100; at most 10000000)",
        [](Settings& s, const std::string& n, const std::string& v) {
          s.min_queries = count(n, v, 1, results::kMaxQueries);
        }}},
      {"max_queries",
       {"stop after this many queries (0: no limit; at most 10000000)",
        [](Settings& s, const std::string& n, const std::string& v) {
          s.max_queries = count(n, v, 0, results::kMaxQueries);
        }}},
      {"target_qps",
       {"server: mean Poisson arrival rate, queries/s (at most 1e7)",
        [](Settings& s, const std::string& n, const std::string& v) {
          s.target_qps = number(n, v, 0, true, results::kMaxQps);
        }}},
      {"latency_bound_ms",
       {"server: the percentile's latency bound, ms (15; at most 3600000, an "
        "hour)",
        [](Settings& s, const std::string& n, const std::string& v) {
          s.latency_bound_seconds = number(n, v, 0, true, 3600e3) / 1e3;
        }}},
      {"samples_per_query",
       {"multi-stream: samples in each query (8; at most 65536, the batch "
        "bound)",
        [](Settings& s, const std::string& n, const std::string& v) {
          s.samples_per_query = count(n, v, 1, results::kMaxBatch);
        }}},
      {"performance_samples",
       {"samples LoadGen draws from, loaded before the run (64; at most "
        "1000000, and within the memory estimate)",
        [](Settings& s, const std::string& n, const std::string& v) {
          s.performance_samples = count(n, v, 1, results::kMaxSamples);
        }}},
      {"instances",
       {"engine copies serving queries at once (1; at most 256)",
        [](Settings& s, const std::string& n, const std::string& v) {
          s.instances = static_cast<int>(count(n, v, 1, 256));
        }}},
      {"expected_latency_ms",
       {"LoadGen's latency hint, ms (0: timed in the warm-up; at most "
        "3600000)",
        [](Settings& s, const std::string& n, const std::string& v) {
          s.expected_seconds = number(n, v, 0, false, 3600e3) / 1e3;
        }}},
      {"expected_qps",
       {"offline: LoadGen's throughput hint (0: timed in the warm-up; at "
        "most 1e7)",
        [](Settings& s, const std::string& n, const std::string& v) {
          s.expected_qps = number(n, v, 0, false, results::kMaxQps);
        }}},
      {"mode",
       {"performance (synthetic samples) or accuracy (a test set, scored)",
        [](Settings& s, const std::string& n, const std::string& v) {
          if (v != "performance" && v != "accuracy")
            bad(n, v, "performance or accuracy");
          s.mode = v;
        }}},
      {"find_peak",
       {"server: search the highest QPS that stays VALID (false)",
        [](Settings& s, const std::string& n, const std::string& v) {
          s.find_peak = flag(n, v);
        }}},
      {"calibration_samples",
       {"int8: samples the quantization calibrates on (500; training "
        "images in accuracy mode; at most 1000000, and within the memory "
        "estimate)",
        [](Settings& s, const std::string& n, const std::string& v) {
          s.calibration_samples = count(n, v, 1, results::kMaxSamples);
        }}},
      {"data",
       {"accuracy mode: the data set (fashion-mnist, mnist, cifar10)",
        [](Settings& s, const std::string&, const std::string& v) {
          s.data = v;
        }}},
      {"data_dir",
       {"accuracy mode: where the data set is (its default if left out)",
        [](Settings& s, const std::string&, const std::string& v) {
          s.data_dir = v;
        }}},
      {"token_latencies",
       {"server: generate each sample token by token, LoadGen timing the "
        "first token and each later one against ttft_ms and tpot_ms (false)",
        [](Settings& s, const std::string& n, const std::string& v) {
          s.token_latencies = flag(n, v);
        }}},
      {"prompt",
       {"token latencies: prompt tokens per sample (512; at most 65536, "
        "and within the model's positions)",
        [](Settings& s, const std::string& n, const std::string& v) {
          s.prompt = count(n, v, 1, results::kMaxGenerationTokens);
        }}},
      {"new_tokens",
       {"token latencies: tokens generated per sample (128; 2 to 65536)",
        [](Settings& s, const std::string& n, const std::string& v) {
          s.new_tokens = count(n, v, 2, results::kMaxGenerationTokens);
        }}},
      {"ttft_ms",
       {"token latencies: the percentile's time-to-first-token bound, ms "
        "(2000; at most 3600000)",
        [](Settings& s, const std::string& n, const std::string& v) {
          s.ttft_bound_seconds = number(n, v, 0, true, 3600e3) / 1e3;
        }}},
      {"tpot_ms",
       {"token latencies: the percentile's time-per-output-token bound, ms "
        "(100; at most 3600000)",
        [](Settings& s, const std::string& n, const std::string& v) {
          s.tpot_bound_seconds = number(n, v, 0, true, 3600e3) / 1e3;
        }}},
      {"weights",
       {"trained parameters to run (a file nnbench train --save-weights "
        "wrote); the seeded ones if left out",
        [](Settings& s, const std::string&, const std::string& v) {
          s.weights = v;
        }}},
  };
  return t;
}

}  // namespace

std::string scenario_name(Scenario s) { return names().at(s); }

Scenario scenario_from_name(const std::string& name) {
  std::string known;
  for (const auto& [s, n] : names()) {
    if (n == name) return s;
    known += (known.empty() ? "" : ", ") + n;
  }
  throw Error("unknown LoadGen scenario '" + name + "'; known: " + known);
}

const std::map<std::string, std::string>& setting_help() {
  static const std::map<std::string, std::string> h = [] {
    std::map<std::string, std::string> out;
    for (const auto& [n, e] : table()) out[n] = e.help;
    return out;
  }();
  return h;
}

void apply_setting(Settings& s, const std::string& name,
                   const std::string& value) {
  const auto it = table().find(name);
  if (it == table().end()) {
    std::string known;
    for (const auto& [n, e] : table()) known += (known.empty() ? "" : ", ") + n;
    throw Error("unknown inference setting '" + name + "'; known: " + known);
  }
  it->second.apply(s, name, value);
  s.given.insert(name);
}

namespace {

// Settings only some scenarios read; given to another, they would change
// nothing, so they are refused naming the setting, its option and the
// scenario.
void check_read(const Settings& s) {
  using S = Scenario;
  static const std::map<std::string, std::set<Scenario>> readers = {
      {"target_qps", {S::kServer}},
      {"latency_bound_ms", {S::kServer}},
      {"samples_per_query", {S::kMultiStream}},
      {"expected_qps", {S::kOffline}},
      {"expected_latency_ms", {S::kSingleStream, S::kMultiStream}},
  };
  for (const auto& [name, by] : readers) {
    if (!s.given.count(name) || by.count(s.scenario)) continue;
    std::string flag = name, who;
    for (char& c : flag)
      if (c == '_') c = '-';
    for (const auto x : by)
      who += (who.empty() ? "" : " and ") + scenario_name(x);
    throw Error(name + " (--" + flag + ") is read by the " + who +
                " scenario only, not by " + scenario_name(s.scenario) +
                " (--scenario " + scenario_name(s.scenario) +
                "): leave it out or change the scenario");
  }
}

}  // namespace

void check(const Settings& s) {
  check_read(s);
  if (!s.token_latencies)
    for (const char* name : {"prompt", "new_tokens", "ttft_ms", "tpot_ms"})
      if (s.given.count(name))
        throw Error(std::string(name) +
                    " is read with token_latencies (--token-latencies true) "
                    "only");
  if (s.token_latencies) {
    if (s.scenario != Scenario::kServer)
      throw Error("token_latencies are LoadGen's server scenario's, not " +
                  scenario_name(s.scenario) + "'s");
    if (s.mode != "performance" || s.find_peak)
      throw Error(
          "token_latencies time a performance run: no accuracy mode "
          "or find_peak");
    if (s.given.count("latency_bound_ms"))
      throw Error(
          "latency_bound_ms bounds whole samples; with "
          "token_latencies the bounds are ttft_ms and tpot_ms");
  }
  const bool server = s.scenario == Scenario::kServer;
  if (server && s.target_qps <= 0)
    throw Error("the server scenario needs target_qps (--target-qps)");
  if (!server && s.find_peak)
    throw Error("find_peak searches the server scenario's QPS, not " +
                scenario_name(s.scenario) + "'s");
  if (s.mode == "accuracy" && s.data.empty())
    throw Error("accuracy mode needs a data set (data, --data)");
  if (s.mode == "accuracy" && s.find_peak)
    throw Error("accuracy mode scores the data set once: no find_peak");
  if (s.mode != "accuracy" && !s.data.empty())
    throw Error("data '" + s.data + "' is read in accuracy mode only");
  if (s.mode != "accuracy" && !s.data_dir.empty())
    throw Error("data_dir (--data-dir) is read in accuracy mode only");
  if (s.max_duration_seconds > 0 &&
      s.max_duration_seconds < s.min_duration_seconds)
    throw Error("max_duration_s is below min_duration_s");
  if (s.max_queries > 0 && s.max_queries < s.min_queries)
    throw Error("max_queries is below min_queries");
}

}  // namespace nnbench::inference
