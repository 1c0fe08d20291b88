#include "inference/loadgen_run.h"

#include <fmt/core.h>
#include <loadgen.h>
#include <test_settings.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>

#include "bench/cpu_usage.h"
#include "bench/generation.h"
#include "bench/statistics.h"
#include "data/dataset.h"
#include "data/loader.h"
#include "data/synthetic.h"
#include "host/tensor_file.h"
#include "inference/generation_sut.h"
#include "inference/memory.h"
#include "inference/sut.h"
#include "machine/threads.h"
#include "model/generation.h"
#include "model/model_file.h"
#include "util/error.h"
#include "util/temp_dir.h"

namespace mlperf {
const std::string& LoadgenVersion();  // version_generated.cc
}

namespace nnbench::inference {
namespace {

using nlohmann::json;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

mlperf::TestScenario loadgen_scenario(Scenario s) {
  switch (s) {
    case Scenario::kSingleStream:
      return mlperf::TestScenario::SingleStream;
    case Scenario::kMultiStream:
      return mlperf::TestScenario::MultiStream;
    case Scenario::kServer:
      return mlperf::TestScenario::Server;
    case Scenario::kOffline:
      return mlperf::TestScenario::Offline;
  }
  return mlperf::TestScenario::SingleStream;
}

// The samples one step of the engine takes: a query's worth (1, or
// multi-stream's samples per query), offline's batch; 1 in accuracy mode,
// where every sample runs on its own.
int64_t step_batch(const Settings& s, const results::RunRequest& r) {
  if (s.mode == "accuracy") return 1;
  switch (s.scenario) {
    case Scenario::kMultiStream:
      return s.samples_per_query;
    case Scenario::kOffline:
      return r.batch;
    default:
      return 1;
  }
}

// LoadGen's four seeds from one: distinct, and the same for the same seed.
uint64_t derived_seed(uint64_t seed, uint64_t which) {
  uint64_t z = seed * 4 + which + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

mlperf::TestSettings loadgen_settings(const Settings& s, double step_seconds,
                                      int instances, int64_t batch) {
  mlperf::TestSettings t;
  t.scenario = loadgen_scenario(s.scenario);
  t.mode = s.mode == "accuracy" ? mlperf::TestMode::AccuracyOnly
           : s.find_peak        ? mlperf::TestMode::FindPeakPerformance
                                : mlperf::TestMode::PerformanceOnly;
  t.min_duration_ms = static_cast<uint64_t>(s.min_duration_seconds * 1e3);
  t.max_duration_ms = static_cast<uint64_t>(s.max_duration_seconds * 1e3);
  t.min_query_count = static_cast<uint64_t>(s.min_queries);
  t.max_query_count = static_cast<uint64_t>(s.max_queries);
  // The warm-up's step, with a margin of 2: LoadGen generates queries for
  // the minimum duration from these hints, and a steady state faster than
  // the warm-up would otherwise end the run short of it (INVALID).
  const double expected =
      s.expected_seconds > 0 ? s.expected_seconds : step_seconds / 2;
  t.single_stream_expected_latency_ns = std::max(1.0, expected * 1e9);
  t.multi_stream_expected_latency_ns = std::max(1.0, expected * 1e9);
  t.multi_stream_samples_per_query = static_cast<uint64_t>(s.samples_per_query);
  t.server_target_qps = s.target_qps > 0 ? s.target_qps : 1;
  t.server_target_latency_ns =
      static_cast<uint64_t>(std::llround(s.latency_bound_seconds * 1e9));
  t.offline_expected_qps =
      s.expected_qps > 0
          ? s.expected_qps
          : std::max(1.0, 2 * instances * batch / std::max(step_seconds, 1e-9));
  if (s.token_latencies) {
    t.use_token_latencies = true;
    t.server_ttft_latency =
        static_cast<uint64_t>(std::llround(s.ttft_bound_seconds * 1e9));
    t.server_tpot_latency =
        static_cast<uint64_t>(std::llround(s.tpot_bound_seconds * 1e9));
  }
  t.qsl_rng_seed = derived_seed(s.seed, 0);
  t.sample_index_rng_seed = derived_seed(s.seed, 1);
  t.schedule_rng_seed = derived_seed(s.seed, 2);
  t.accuracy_log_rng_seed = derived_seed(s.seed, 3);
  return t;
}

double ns(const json& log, const std::string& key) {
  const auto it = log.find(key);
  return it == log.end() || !it->is_number() ? NAN : it->get<double>() / 1e9;
}

double number(const json& log, const std::string& key) {
  const auto it = log.find(key);
  return it == log.end() || !it->is_number() ? NAN : it->get<double>();
}

}  // namespace

void read_figures(const json& log, const Settings& s,
                  results::InferenceRun& r) {
  for (const auto& [k, v] : log.items())
    if (k.rfind("effective_", 0) == 0) r.loadgen_settings[k.substr(10)] = v;
  r.loadgen_valid = log.value("result_validity", "") == "VALID";
  // Why LoadGen judged it INVALID: its reason and its early-stopping
  // verdict, one line each as its summary prints them (" * " dropped).
  for (const char* key :
       {"result_invalid_reason", "early_stopping_result",
        "early_stopping_ttft_result", "early_stopping_tpot_result"}) {
    const auto it = log.find(key);
    if (r.loadgen_valid || it == log.end() || !it->is_string()) continue;
    // Its log flattens the summary's lines: " * " starts each.
    std::string text = it->get<std::string>() + " * ";
    for (char& c : text)
      if (c == '\n') c = ' ';
    size_t from = 0;
    for (size_t at; (at = text.find(" * ", from)) != std::string::npos;
         from = at + 3) {
      std::string line = text.substr(from, at - from);
      const auto b = line.find_first_not_of(" *");
      const auto e = line.find_last_not_of(' ');
      if (b != std::string::npos)
        r.loadgen_reasons.push_back(line.substr(b, e - b + 1));
    }
  }
  const bool multi = s.scenario == Scenario::kMultiStream;
  r.percentile = s.scenario == Scenario::kSingleStream ? 0.9 : 0.99;
  const std::string per =
      multi ? "_percentile_per_query_latency_ns" : "_percentile_latency_ns";
  for (const auto& [k, v] : log.items()) {
    if (k.rfind("result_", 0) != 0 || k.size() <= per.size() + 7 ||
        k.compare(k.size() - per.size(), per.size(), per) != 0)
      continue;
    const std::string p = k.substr(7, k.size() - 7 - per.size());
    if (p.find('_') == std::string::npos && v.is_number())
      r.latency_percentiles[p] = v.get<double>() / 1e9;
  }
  const auto pl =
      r.latency_percentiles.find(r.percentile == 0.9 ? "90.00" : "99.00");
  r.percentile_latency = pl == r.latency_percentiles.end() ? NAN : pl->second;
  const std::string q =
      multi ? "result_%s_query_latency_ns" : "result_%s_latency_ns";
  auto field = [&](const char* what) {
    std::string k = q;
    k.replace(k.find("%s"), 2, what);
    return ns(log, k);
  };
  r.mean_latency = field("mean");
  r.min_latency = field("min");
  r.max_latency = field("max");
  // LoadGen logs 0 when it has no estimate (too few queries for early
  // stopping): not measured, so absent (null, "-"), never 0 ms.
  r.early_stopping_latency = ns(log, s.scenario == Scenario::kSingleStream
                                         ? "early_stopping_latency_ss"
                                         : "early_stopping_latency_ms");
  if (!(r.early_stopping_latency > 0)) r.early_stopping_latency = NAN;
  switch (s.scenario) {
    case Scenario::kSingleStream:
      r.samples_per_second = number(log, "result_qps_with_loadgen_overhead");
      break;
    case Scenario::kServer:
      r.samples_per_second = number(log, "result_completed_samples_per_sec");
      break;
    case Scenario::kOffline:
      r.samples_per_second = number(log, "result_samples_per_second");
      // One query: its latency is the run's length, not a percentile.
      r.percentile_latency = NAN;
      break;
    case Scenario::kMultiStream:
      r.samples_per_second = NAN;
      break;
  }
  if (s.scenario == Scenario::kServer) {
    r.target_qps = number(log, "effective_target_qps");
    r.latency_bound = ns(log, "effective_target_latency_ns");
  } else {
    r.target_qps = r.latency_bound = NAN;
  }
  if (s.token_latencies) {
    // The bounds are the tokens', not a whole sample's.
    r.latency_bound = NAN;
    const std::string at = fmt::format("{:.2f}", r.percentile * 100);
    results::TokenLatencies t;
    t.prompt = s.prompt;
    t.new_tokens = s.new_tokens;
    // As asked: LoadGen logs no effective value of these two.
    t.ttft_bound = s.ttft_bound_seconds;
    t.tpot_bound = s.tpot_bound_seconds;
    t.ttft = ns(log, "result_first_token_" + at + "_percentile_latency_ns");
    t.tpot = ns(log, "result_time_per_output_token_" + at + "_percentile_ns");
    t.ttft_mean = ns(log, "result_first_token_mean_latency_ns");
    t.tpot_mean = ns(log, "result_time_to_output_token_mean");
    t.tokens_per_second = number(log, "result_completed_tokens_per_second");
    r.tokens = t;
  }
  const auto whole = [&](const std::string& key) -> int64_t {
    const double x = number(log, key);
    return std::isfinite(x) && x > 0 ? static_cast<int64_t>(x) : 0;
  };
  r.query_count = whole("result_query_count");
  r.sample_count = whole("generated_samples_per_query") * r.query_count;
}

namespace {

// The QPS LoadGen's peak search settled on: it says so in a message of
// its detail log (its own settings entries keep the starting QPS).
double found_peak(const std::string& detail_text) {
  const std::string tag = "Found peak performance field: ";
  const auto at = detail_text.rfind(tag);
  if (at == std::string::npos)
    throw Error(
        "LoadGen's peak search found no valid QPS (the starting "
        "target_qps must itself be valid)");
  return std::strtod(detail_text.c_str() + at + tag.size(), nullptr);
}

std::vector<host::Batch> synthetic_batches(const model::Model& m, int64_t batch,
                                           int64_t samples, uint64_t seed) {
  std::vector<host::Batch> out;
  const int64_t n = std::max<int64_t>(1, (samples + batch - 1) / batch);
  for (int64_t i = 0; i < n; ++i)
    out.push_back(data::synthetic_batch(m, batch, seed * 1000003 + i));
  return out;
}

// A sample of `split` in the model's per-sample shape (the same elements:
// an MLP reads a 28x28 image as 784 values), as a batch of one.
host::Batch sample_of(const data::Split& split, int64_t i,
                      const model::Model& m) {
  host::Batch b = data::gather_batch(split, {i}, 0, 1);
  b.input.shape = {1};
  b.input.shape.insert(b.input.shape.end(), m.input.shape.begin(),
                       m.input.shape.end());
  return b;
}

// int8: the calibration samples as a tensor file ("input" [N, ...]) for
// the engine's quantization; returns what they are, for the record.
std::string write_calibration(const Settings& s, const model::Model& m,
                              const data::Dataset* d, uint64_t seed,
                              const std::string& path) {
  host::Tensor all;
  std::string what;
  if (d) {
    const int64_t n = std::min(s.calibration_samples, d->train.size);
    std::vector<int64_t> first(n);
    for (int64_t i = 0; i < n; ++i) first[i] = i;
    all = data::gather_batch(d->train, first, 0, n).input;
    all.shape = {n};  // the model's per-sample shape, as sample_of gives
    all.shape.insert(all.shape.end(), m.input.shape.begin(),
                     m.input.shape.end());
    what = "the first " + std::to_string(n) + " training images of " + s.data;
  } else {
    all =
        data::synthetic_batch(m, s.calibration_samples, seed * 7919 + 17).input;
    what = std::to_string(s.calibration_samples) +
           " synthetic samples (seeded; performance mode has no data set)";
  }
  host::write_tensors(path, {{"input", all}});
  return what;
}

// The test split, one batch per sample, checked against the model's input.
void test_split(const Settings& s, const model::Model& m,
                const data::Dataset& d, EngineSetup& e) {
  const data::Split& t = d.test;
  if (t.size == 0) throw Error("data set " + s.data + " has no test split");
  int64_t want = 1, have = 1;
  for (int64_t x : m.input.shape) want *= x;
  for (int64_t x : t.input.shape) have *= x;
  if (want != have || t.input.dtype != m.input.dtype)
    throw Error("data set " + s.data +
                "'s samples do not fit the model's input (another size or "
                "type)");
  for (int64_t i = 0; i < t.size; ++i) e.batches.push_back(sample_of(t, i, m));
  e.labels = t.labels;
}

}  // namespace

std::string loadgen_version() { return mlperf::LoadgenVersion(); }

void judge_accuracy(results::InferenceRun& r) {
  const double drop = (r.fp32_accuracy - r.accuracy) * 100;
  if (drop > 1.0)
    r.validity.add("accuracy_drop",
                   fmt::format("{} loses {:.2f} points of top-1 against fp32 "
                               "({:.2f} % against {:.2f} %): more than 1",
                               r.requested.options.precision, drop,
                               r.accuracy * 100, r.fp32_accuracy * 100));
}

std::vector<double> read_trace_latencies(const std::string& text,
                                         bool per_query) {
  std::map<int64_t, double> by_query;  // query_seq -> its slowest sample
  std::vector<double> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    // One event per line: {"name":"Sample","ph":"b",...,"args":{...}},
    if (line.find("\"Sample\"") == std::string::npos) continue;
    while (!line.empty() && (line.back() == ',' || line.back() == ' '))
      line.pop_back();
    const json e = json::parse(line, nullptr, false);
    if (!e.is_object() || e.value("name", "") != "Sample" ||
        e.value("ph", "") != "b" || !e.contains("args"))
      continue;
    const json& a = e["args"];
    if (!a.contains("complete_ns") || !a["complete_ns"].is_number()) continue;
    const double seconds = a["complete_ns"].get<double>() / 1e9;
    if (!per_query) {
      out.push_back(seconds);
      continue;
    }
    double& q = by_query[a.value("query_seq", int64_t{-1})];
    q = std::max(q, seconds);
  }
  for (const auto& [q, s] : by_query) out.push_back(s);
  return out;
}

json read_detail_log(const std::string& text) {
  json out = json::object();
  std::istringstream in(text);
  std::string line;
  const std::string tag = ":::MLLOG";
  while (std::getline(in, line)) {
    const auto at = line.find(tag);
    if (at == std::string::npos) continue;
    const json e = json::parse(line.substr(at + tag.size()), nullptr, false);
    if (!e.is_object() || !e.contains("key") || !e.contains("value")) continue;
    out[e["key"].get<std::string>()] = e["value"];
  }
  return out;
}

namespace {

// LoadGen's run of `sut` over `total` samples (all loaded: every copy
// holds them), the CPU usage over it, and its logs (in `dir`) read into
// r; returns the detail log's text. `hint`: the warm-up's time per query.
template <typename Sut>
std::string drive(Sut& sut, size_t total, const Settings& s, double hint,
                  int64_t batch, bool trace, const util::TempDir& dir,
                  results::InferenceRun& r) {
  SampleLibrary qsl(total, total);
  mlperf::LogSettings log;
  log.log_output.outdir = dir.path();
  log.enable_trace = trace;
  const mlperf::TestSettings ts = loadgen_settings(s, hint, s.instances, batch);
  bench::UsageProbe probe(sut.processes());
  probe.start();
  // No audit file: LoadGen reads one from the working directory if it
  // finds it, which would change the run behind nnbench's back.
  mlperf::StartTest(&sut, &qsl, ts, log, dir.file("no-audit.config"));
  r.cpu_usage = probe.stop(s.instances * std::max(1, r.effective.threads));
  sut.rethrow_failure();
  r.loadgen_summary = slurp(dir.file("mlperf_log_summary.txt"));
  std::string text = slurp(dir.file("mlperf_log_detail.txt"));
  const json detail = read_detail_log(text);
  if (detail.empty())
    throw Error("LoadGen wrote no detail log in " + dir.path());
  read_figures(detail, s, r);
  return text;
}

// LoadGen's verdict and the contention judgement, once its figures are in.
void judge_run(const Settings& s, const results::RunRequest& request,
               results::InferenceRun& r) {
  if (!r.loadgen_valid && s.mode == "performance") {
    std::string why;
    for (const auto& x : r.loadgen_reasons)
      why += (why.empty() ? "" : "; ") + x;
    r.validity.add("loadgen", "LoadGen judged the run INVALID: " + why);
  }
  // Accuracy mode scores answers, not time: contention does not matter.
  if (s.mode != "accuracy")
    bench::judge_contention(r.cpu_usage, request.contention.rule, r.validity);
}

// The server scenario with token latencies: seeded prompts generated by
// GenerationSut's copies, LoadGen timing their first and later tokens.
void serve_tokens(backend::Backend& b, const model::Model& m,
                  const results::RunRequest& request, const Settings& s,
                  results::InferenceRun& r) {
  if (const std::string why = model::generation_problem(m); !why.empty())
    throw backend::Unimplemented("token latencies: " + why);
  results::GenerationRequest asked;
  asked.prompt = s.prompt;
  asked.new_tokens = s.new_tokens;
  bench::check_generation_memory(m, asked, request, s.instances);
  GenerationSetup g;
  g.backend = &b;
  g.model = &m;
  g.options = request.options;
  if (g.options.threads == 0)
    g.options.threads = std::max(1, machine::resolve_threads(0) / s.instances);
  g.instances = s.instances;
  g.new_tokens = s.new_tokens;
  g.prompts = data::synthetic_prompts(s.performance_samples, s.prompt,
                                      m.input.vocab, request.options.seed);
  GenerationSut sut(g);
  r.effective = sut.effective();
  r.effective.extras["instances"] = std::to_string(s.instances);
  r.effective.extras["warmup_generation_ms"] =
      fmt::format("{:.4g}", sut.warmup_seconds() * 1e3);
  util::TempDir dir("nnbench-loadgen");
  drive(sut, static_cast<size_t>(s.performance_samples), s,
        sut.warmup_seconds(), 1, false, dir, r);
}

}  // namespace

results::InferenceRun run(backend::Backend& b, const model::Model& m,
                          const std::string& model_name,
                          const results::RunRequest& request, const Settings& s,
                          const std::map<std::string, std::string>& settings) {
  results::InferenceRun r;
  r.kind = scenario_name(s.scenario);
  r.model = model_name;
  r.model_hash = model::model_hash(m);
  r.backend = b.name();
  r.backend_version = b.version();
  r.requested = request;
  r.requested.mode = backend::Mode::kInfer;
  r.settings = settings;
  r.mode = s.find_peak ? "find-peak" : s.mode;
  r.instances = s.instances;
  r.loadgen_version = loadgen_version();
  r.dataset = s.data;
  r.accuracy = r.fp32_accuracy = NAN;
  try {
    check(s);
    if (s.token_latencies) {
      serve_tokens(b, m, request, s, r);
      judge_run(s, request, r);
      r.state = results::State::kOk;
      return r;
    }
    // Before any sample is made: refused (oom, "estimate") like `run`.
    check_memory(m, s, request);
    EngineSetup e;
    e.backend = &b;
    e.model = &m;
    e.options = request.options;
    if (e.options.threads == 0)
      e.options.threads =
          std::max(1, machine::resolve_threads(0) / s.instances);
    e.instances = s.instances;
    e.batch = step_batch(s, request);
    e.accuracy = s.mode == "accuracy";
    if (!s.weights.empty()) e.options.weights = s.weights;
    if (const auto ok = backend::supports_model(b, m, e.options); !ok)
      throw backend::Unimplemented(ok.why);
    std::optional<data::Dataset> d;
    if (e.accuracy) d = data::load_dataset(s.data, s.data_dir);
    util::TempDir work("nnbench-infer");
    std::string calibration;
    if (e.options.precision == "int8") {
      e.options.calibration = work.file("calibration");
      calibration = write_calibration(
          s, m, d ? &*d : nullptr, request.options.seed, e.options.calibration);
    }
    if (e.accuracy)
      test_split(s, m, *d, e);
    else
      e.batches = synthetic_batches(m, e.batch, s.performance_samples,
                                    request.options.seed);
    const size_t total = e.accuracy
                             ? e.batches.size()
                             : static_cast<size_t>(s.performance_samples);
    EngineSut sut(e);
    r.effective = sut.effective();
    r.effective.optimizer.clear();  // inference: no update runs
    r.effective.extras["instances"] = std::to_string(s.instances);
    r.effective.extras["step_batch"] = std::to_string(e.batch);
    r.effective.extras["warmup_step_ms"] =
        fmt::format("{:.4g}", sut.warmup_step_seconds() * 1e3);
    // An engine that quantizes dynamically (the PyTorch and Keras workers)
    // reads no calibration and says so: its word stands.
    if (!calibration.empty() && !r.effective.extras.contains("calibration"))
      r.effective.extras["calibration"] = calibration;
    // The per-sample latencies of the percentile's interval come from
    // LoadGen's trace: written only where they are read (not offline's one
    // query, nor a peak search's many runs, nor accuracy mode).
    const bool interval = s.mode == "performance" && !s.find_peak &&
                          s.scenario != Scenario::kOffline;
    util::TempDir dir("nnbench-loadgen");
    const std::string detail_text = drive(
        sut, total, s, sut.warmup_step_seconds(), e.batch, interval, dir, r);
    if (s.find_peak) r.target_qps = found_peak(detail_text);
    r.padded_samples = sut.padded_samples();

    if (interval) {
      const std::vector<double> lat =
          read_trace_latencies(slurp(dir.file("mlperf_log_trace.json")),
                               s.scenario == Scenario::kMultiStream);
      r.latency_samples = static_cast<int64_t>(lat.size());
      r.percentile_ci = lat.empty() ? results::Interval{NAN, NAN, 0}
                                    : bench::quantile_ci(lat, r.percentile);
    }
    if (e.accuracy) {
      r.scored_samples = sut.scored();
      r.accuracy = r.scored_samples > 0
                       ? static_cast<double>(sut.correct()) / r.scored_samples
                       : NAN;
    }
    if (e.accuracy && request.options.precision != "fp32") {
      results::RunRequest fp32 = request;
      fp32.options.precision = "fp32";
      const auto base = run(b, m, model_name, fp32, s, settings);
      if (results::is_failure(base.state))
        throw Error("fp32's accuracy, to compare with: " + base.message);
      r.fp32_accuracy = base.accuracy;
      judge_accuracy(r);
    }
    judge_run(s, request, r);
    r.state = results::State::kOk;
  } catch (...) {
    r.fail(results::classify(std::current_exception()));
  }
  return r;
}

}  // namespace nnbench::inference
