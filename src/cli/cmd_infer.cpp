// `nnbench infer`: one engine under MLPerf's LoadGen, in one of its four
// scenarios; the same run a suite case of that scenario makes.
#include <fmt/core.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>

#include "backend/backend.h"
#include "backend/registry.h"
#include "cli/app.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/session.h"
#include "cost/catalog.h"
#include "data/dataset.h"
#include "inference/settings.h"
#include "machine/instance.h"
#include "machine/threads.h"
#include "reporters/json_file.h"
#include "results/inference.h"
#include "results/kinds.h"
#include "results/limits.h"
#include "scenarios/scenario.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace nnbench::cli {
namespace {

struct InferArgs {
  std::string model, model_file, scenario = "single-stream", out;
  results::RunRequest request;
  // Setting name -> value as given (inference/settings.h).
  std::map<std::string, std::string> values;
  bool find_peak = false, accuracy = false;
  std::string on_contention = "fail";
  std::string instance, prices = cost::default_catalog_path();
  double price_per_hour = 0;
  bool batch_given = false;
};

// --target-qps 100,200,400: one server run per rate (latency against QPS).
std::vector<std::string> rates(const std::string& v) {
  std::vector<std::string> out;
  size_t from = 0;
  for (size_t at; (at = v.find(',', from)) != std::string::npos; from = at + 1)
    out.push_back(v.substr(from, at - from));
  out.push_back(v.substr(from));
  return out;
}

std::string ms(double seconds) {
  return std::isfinite(seconds) ? fmt::format("{:.4g} ms", seconds * 1e3) : "-";
}

void print_run(const results::InferenceRun& r) {
  fmt::print("{} {} {} ({}), {} x {} thread(s)\n", r.model, r.backend, r.kind,
             r.mode, r.instances, r.effective.threads);
  if (results::is_failure(r.state)) {
    fmt::print("  {}: {}\n", results::state_name(r.state), r.message);
    return;
  }
  if (r.mode == "accuracy") {
    // LoadGen judges performance runs only.
    fmt::print("  accuracy {:.2f} % top-1 over {} samples of {}\n",
               r.accuracy * 100, r.scored_samples, r.dataset);
    if (std::isfinite(r.fp32_accuracy))
      fmt::print("  fp32 on the same engine: {:.2f} %\n",
                 r.fp32_accuracy * 100);
    for (const auto& why : r.validity.reasons)
      fmt::print("  INVALID ({}): {}\n", why.reason, why.detail);
    return;
  }
  fmt::print("  LoadGen {}: {}\n", r.loadgen_version,
             r.loadgen_valid ? "VALID" : "INVALID");
  for (const auto& why : r.loadgen_reasons) fmt::print("    {}\n", why);
  const int pct = static_cast<int>(std::lround(r.percentile * 100));
  if (std::isfinite(r.percentile_latency))
    fmt::print("  p{} latency {} (early-stopping estimate {})\n", pct,
               ms(r.percentile_latency), ms(r.early_stopping_latency));
  if (r.latency_samples > 0)
    fmt::print("  p{} interval [{}, {}] ({:.1f} % coverage, {} latencies)\n",
               pct, ms(r.percentile_ci.lo), ms(r.percentile_ci.hi),
               r.percentile_ci.coverage * 100, r.latency_samples);
  if (std::isfinite(r.samples_per_second))
    fmt::print("  {:.1f} samples/s, {} queries\n", r.samples_per_second,
               r.query_count);
  if (std::isfinite(r.usd_per_10k) && r.usd_per_10k > 0)
    fmt::print("  ${:.3g} per 10,000 inferences at {:.4g} $/h ({})\n",
               r.usd_per_10k, r.usd_per_hour, r.price_source);
  if (r.tokens) {
    const auto& t = *r.tokens;
    fmt::print(
        "  tokens (prompt {}, {} new): p{} time to first token {} (bound "
        "{}), p{} time per output token {} (bound {}), {:.1f} tokens/s\n",
        t.prompt, t.new_tokens, pct, ms(t.ttft), ms(t.ttft_bound), pct,
        ms(t.tpot), ms(t.tpot_bound), t.tokens_per_second);
  }
  if (std::isfinite(r.target_qps))
    fmt::print("  target {:.1f} QPS, bound {}\n", r.target_qps,
               ms(r.latency_bound));
  for (const auto& why : r.validity.reasons)
    fmt::print("  INVALID ({}): {}\n", why.reason, why.detail);
}

std::string given(const InferArgs& a, const std::string& name) {
  const auto it = a.values.find(name);
  return it == a.values.end() ? "" : it->second;
}

// The files the run reads, checked before it starts: a bad one is a usage
// error naming its option (exit 2), not a run ending invalid_args.
void check_inputs(const InferArgs& a, const model::Model& m) {
  const std::string data = given(a, "data"), dir = given(a, "data_dir");
  if (!data.empty()) {
    std::string where;
    try {
      where = data::dataset_path(data, dir);
    } catch (const data::DataError& e) {  // no path and no default
      throw Error("--data " + data + ": " + e.what() +
                  " (give it with --data-dir)");
    } catch (const Error& e) {  // an unknown name
      throw Error("--data " + data + ": " + e.what());
    }
    std::error_code ec;
    if (!std::filesystem::exists(where, ec))
      throw Error(
          (dir.empty() ? "--data " + data + ": its default " + where
                       : "--data-dir " + where) +
          " does not exist" +
          (dir.empty() ? " (give the data set's folder with --data-dir)" : ""));
  }
  const std::string weights = given(a, "weights");
  if (weights.empty()) return;
  // Read and matched against the model as every backend will read them.
  // Well-formed weights whose values no run can use (NaN, a negative
  // variance) are the run's failure, recorded naming the tensor, not a
  // usage error.
  try {
    backend::initial_params(m, a.request.options.seed, weights);
    backend::initial_running_stats(m, weights);
  } catch (const backend::BadValues&) {
  } catch (const std::exception& e) {
    const std::string why = e.what();
    throw Error(
        "--weights " + weights + ": " +
        (why.rfind(weights, 0) == 0 ? why.substr(weights.size() + 2) : why));
  }
}

int infer_command(InferArgs& a) {
  if (!a.instance.empty()) machine::name_instance(a.instance, a.prices);
  scenarios::Case c;
  c.model = a.model;
  c.model_file = a.model_file;
  c.request = a.request;
  c.request.mode = backend::Mode::kInfer;
  for (const auto& [name, value] : a.values) c.settings[name] = value;
  if (a.find_peak) c.settings["find_peak"] = "true";
  if (a.accuracy) c.settings["mode"] = "accuracy";
  const auto qps = c.settings.count("target_qps")
                       ? rates(c.settings["target_qps"])
                       : std::vector<std::string>{""};
  // Usage errors before anything starts, as a suite file's are found (the
  // scenario's settings_problem), a bad value naming its option.
  inference::scenario_from_name(a.scenario);
  const auto scenario = scenarios::make_scenario(a.scenario);
  for (const auto& q : qps) {
    auto settings = c.settings;
    if (!q.empty()) settings["target_qps"] = q;
    std::string which;
    const std::string why = scenario->settings_problem(settings, &which);
    if (why.empty()) continue;
    for (char& ch : which)
      if (ch == '_') ch = '-';
    throw Error(which.empty() ? why : "--" + which + ": " + why);
  }
  if (const auto why = scenario->request_problem(
          a.request, a.batch_given ? std::set<std::string>{"batch"}
                                   : std::set<std::string>{});
      !why.empty())
    throw Error(why);
  const model::Model m = resolve_model(a.model, a.model_file);
  check_inputs(a, m);
  auto b = backend::make_ready_backend(a.request.backend);
  if (!a.out.empty()) util::check_writable(a.out);
  const auto price = cost::asked_price(a.price_per_hour, a.instance, a.prices,
                                       a.request.options.threads > 0
                                           ? a.request.options.threads
                                           : machine::resolve_threads(0));
  const machine::Environment env = capture_and_warn();
  // Each run in detail as it ends; --out's file when all have.
  reporters::JsonFile file(a.out);
  results::ReportContext context;  // no peak measured
  context.environment = machine::to_json(env);
  file.begin(context);
  bool ok = true;
  for (const auto& q : qps) {
    if (!q.empty()) c.settings["target_qps"] = q;
    auto rec = scenario->run(*b, c, {});
    auto& r = results::as<results::InferenceRun>(*rec);
    if (price && !results::is_failure(r.state))
      results::price(r, price->usd_per_hour, price->source);
    print_run(r);
    results::Entry e;
    e.record = &r;
    file.record(e);
    // A LoadGen INVALID is a validity reason ("loadgen"): it fails the
    // command, except in a sweep, where INVALID at a rate too high is the
    // answer measured.
    bool untrusted = false;
    for (const auto& why : r.validity.reasons)
      untrusted |= !(why.reason == "loadgen" && qps.size() > 1) &&
                   !(why.reason == "contended" && a.on_contention == "warn");
    ok = ok && !results::is_failure(r.state) && !untrusted;
  }
  file.end({});
  return ok ? kExitOk : kExitRunNotOk;
}

}  // namespace

Action add_infer(CLI::App& app) {
  auto a = std::make_shared<InferArgs>();
  app.add_option("--model", a->model, "Model name from the zoo");
  app.add_option("--model-file", a->model_file, "Model description (JSON)");
  app.add_option("--scenario", a->scenario,
                 "single-stream (default), multi-stream, server or offline");
  add_shared_options(app,
                     {&a->request.backend, &a->request.options.device,
                      &a->request.options.threads, &a->request.options.seed,
                      &a->request.options.precision});
  app.add_option("--batch", a->request.batch,
                 "Offline: samples per engine step (default 32)")
      ->check(positive(results::kMaxBatch));
  // LoadGen's settings, one option each, named as in a suite's settings
  // table with dashes: --target-qps is target_qps.
  for (const auto& [name, help] : inference::setting_help()) {
    if (name == "find_peak" || name == "mode") continue;
    std::string flag = name;
    for (char& ch : flag)
      if (ch == '_') ch = '-';
    app.add_option("--" + flag, a->values[name], help);
  }
  app.add_flag("--find-peak", a->find_peak,
               "Server: search the highest QPS that stays VALID");
  app.add_flag("--accuracy", a->accuracy,
               "Accuracy mode: score every sample of --data's test split");
  app.add_option("--instance", a->instance,
                 "Price the run as this catalog instance: cost of 10,000 "
                 "inferences at the scenario's throughput");
  app.add_option("--price-per-hour", a->price_per_hour,
                 "Price the run at this many USD an hour")
      ->check(positive(1e6));
  app.add_option("--prices", a->prices, "Price catalog file");
  add_contention_rule(app, a->request.contention.rule);
  app.add_option("--on-contention", a->on_contention,
                 "A run whose threads did not get their CPUs: fail (exit "
                 "1) or warn (recorded invalid, exit 0)")
      ->check(CLI::IsMember({"fail", "warn"}));
  app.add_flag("!--no-memory-check", a->request.memory_check,
               "Run even when the memory estimate exceeds available memory");
  app.add_option("--out", a->out, "Write the run as a results file (JSON)");
  return [a, &app] {
    a->batch_given = app.count("--batch") > 0;
    // Options left out keep no value: only those given are settings.
    for (auto it = a->values.begin(); it != a->values.end();)
      it = it->second.empty() ? a->values.erase(it) : std::next(it);
    return infer_command(*a);
  };
}

}  // namespace nnbench::cli
