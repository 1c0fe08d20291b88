#include "results/result.h"

#include <array>
#include <cmath>
#include <ctime>

#include "results/kinds.h"
#include "util/error.h"

namespace nnbench::results {
using nlohmann::json;

void optimizer_from_json(const json& j, backend::Options& o) {
  o.optimizer = j.at("name");
  o.learning_rate = j.at("learning_rate");
  o.momentum = j.at("momentum");
  o.nesterov = j.at("nesterov");
  o.weight_decay = j.at("weight_decay");
  o.beta1 = j.at("beta1");
  o.beta2 = j.at("beta2");
  o.alpha = j.at("alpha");
  o.rho = j.at("rho");
  o.eps = j.at("eps");
}

json request_json(const RunRequest& r) {
  const auto& o = r.options;
  return {{"backend", r.backend},
          {"mode", backend::mode_name(r.mode)},
          {"batch", r.batch},
          {"device", o.device},
          {"threads", o.threads},
          {"seed", o.seed},
          {"precision", o.precision},
          {"optimizer", optimizer_json(o)},
          {"warmup",
           {{"min_iterations", r.warmup.min_iterations},
            {"min_seconds", r.warmup.min_seconds},
            {"max_seconds", r.warmup.max_seconds}}},
          {"stop",
           {{"min_iterations", r.stop.min_iterations},
            {"min_seconds", r.stop.min_seconds},
            {"max_iterations", r.stop.max_iterations},
            {"max_seconds", r.stop.max_seconds},
            {"criterion", r.stop.criterion},
            {"parameters", r.stop.parameters}}},
          {"distinct_batches", r.distinct_batches},
          {"memory_check", r.memory_check},
          {"contention",
           {{"action", action_name(r.contention.action)},
            {"retries", r.contention.retries},
            {"pause_seconds", r.contention.pause_seconds},
            {"max_excess_load", r.contention.rule.max_excess_load},
            {"max_steal_fraction", r.contention.rule.max_steal_fraction},
            {"min_wall_seconds", r.contention.rule.min_wall_seconds}}},
          {"distributed", to_json(r.distributed)},
          {"data", "synthetic"}};
}

RunRequest request_from_json(const json& j) {
  RunRequest r;
  r.backend = j.at("backend");
  r.mode = backend::mode_from_name(j.at("mode"));
  r.batch = j.at("batch");
  auto& o = r.options;
  o.device = j.at("device");
  o.threads = j.at("threads");
  o.seed = j.at("seed");
  o.precision = j.at("precision");
  optimizer_from_json(j.at("optimizer"), o);
  const auto& w = j.at("warmup");
  r.warmup = {w.at("min_iterations"), w.at("min_seconds"), w.at("max_seconds")};
  const auto& s = j.at("stop");
  r.stop.min_iterations = s.at("min_iterations");
  r.stop.min_seconds = s.at("min_seconds");
  r.stop.max_iterations = s.at("max_iterations");
  r.stop.max_seconds = s.at("max_seconds");
  if (s.contains("criterion")) {
    r.stop.criterion = s.at("criterion");
    r.stop.parameters = s.at("parameters").get<std::map<std::string, double>>();
  } else {  // before named criteria: the CI width was a field
    set_max_relative_ci(r.stop, s.value("max_relative_ci", 0.0));
  }
  r.distinct_batches = j.at("distinct_batches");
  r.memory_check = j.at("memory_check");
  const auto& c = j.at("contention");
  r.contention.action = action_from_name(c.at("action"));
  r.contention.retries = c.at("retries");
  r.contention.pause_seconds = c.at("pause_seconds");
  r.contention.rule = {c.at("max_excess_load"), c.at("max_steal_fraction"),
                       c.at("min_wall_seconds")};
  r.distributed = distributed_request_from_json(j.value("distributed", json()));
  return r;
}

json to_json(const Summary& s) {
  return {{"n", s.n},
          {"median", s.median},
          {"mean", s.mean},
          {"stddev", s.stddev},
          {"cv", s.cv},
          {"min", s.min},
          {"max", s.max},
          {"p90", finite_or_null(s.p90)},
          {"p99", finite_or_null(s.p99)},
          {"median_ci_lo", s.median_ci.lo},
          {"median_ci_hi", s.median_ci.hi},
          {"median_ci_coverage", s.median_ci.coverage}};
}

Summary summary_from_json(const json& j) {
  Summary s;
  s.n = j.at("n");
  s.median = j.at("median");
  s.mean = j.at("mean");
  s.stddev = j.at("stddev");
  s.cv = j.at("cv");
  s.min = j.at("min");
  s.max = j.at("max");
  // Schema 2 had none: null, read as NaN (not recorded).
  s.p90 = number_or_nan(j.value("p90", json()));
  s.p99 = number_or_nan(j.value("p99", json()));
  s.median_ci = {j.at("median_ci_lo"), j.at("median_ci_hi"),
                 j.at("median_ci_coverage")};
  return s;
}

json to_json(const RunResult& r) {
  json j;
  write_record(r, j);
  j["model"]["parameters"] = r.cost.params;
  j["model"]["forward_flops_per_sample"] = r.cost.forward_flops;
  j["model"]["train_flops_per_sample"] = r.cost.train_flops;
  j["model"]["flops_convention"] =
      "multiply-add = 2 FLOPs; training = forward + weight gradients + the "
      "input gradients a parameter upstream needs, each about a forward";
  j["requested"] = request_json(r.requested);
  j["attempts"] = r.attempts;
  j["compile_seconds"] = r.compile_seconds;
  j["data_seconds"] = r.data_seconds;
  j["warmup"] = {{"iterations", r.warmup_iterations},
                 {"seconds", r.warmup_seconds}};
  j["samples_seconds"] = r.samples;
  j["stats_seconds"] = to_json(r.stats);
  j["stopping"] = {{"criterion", r.stop_criterion},
                   {"parameters", r.stop_parameters},
                   {"ended_by", r.stopped_by}};
  // Fractions of a peak nobody measured (a run on a GPU: the CPU's GEMM
  // peak is not its ceiling) are null, not 0.
  const auto measured = [&](double fraction) {
    return r.peak_gflops > 0 ? json(fraction) : json();
  };
  j["throughput"] = {
      {"samples_per_second", r.samples_per_second},
      {"gflops", r.gflops},
      {"peak_fraction", measured(r.peak_fraction)},
      {"peak_gflops", measured(r.peak_gflops)},
      {"theoretical_fraction",
       r.theoretical_fraction > 0 ? json(r.theoretical_fraction) : json()}};
  j["loss"] = {{"first", finite_or_null(r.first_loss)},
               {"last", finite_or_null(r.last_loss)}};
  j["verification"] = r.verification ? to_json(*r.verification) : json();
  if (r.distributed) j["distributed"] = to_json(*r.distributed);
  if (r.worker_clock)
    j["worker_clock"] = {{"chunks", r.worker_clock->chunks},
                         {"wall_seconds", r.worker_clock->wall_seconds},
                         {"step_seconds", r.worker_clock->step_seconds},
                         {"gap_seconds", r.worker_clock->wall_seconds -
                                             r.worker_clock->step_seconds}};
  return j;
}

json RunResult::serialize() const { return to_json(*this); }
void RunResult::file_into(Report& r) const { r.results.push_back(*this); }
void TrainRun::file_into(Report& r) const { r.training.push_back(*this); }
void Record::file_into(Report& r) const { r.other.push_back(serialize()); }

RunResult run_result_from_json(const json& j) {
  RunResult r;
  read_record(j, r);
  const auto& m = j.at("model");
  r.cost.params = m.at("parameters");
  r.cost.forward_flops = m.at("forward_flops_per_sample");
  r.cost.train_flops = m.at("train_flops_per_sample");
  r.requested = request_from_json(j.at("requested"));
  r.attempts = j.at("attempts");
  r.compile_seconds = j.at("compile_seconds");
  r.data_seconds = j.at("data_seconds");
  r.warmup_iterations = j.at("warmup").at("iterations");
  r.warmup_seconds = j.at("warmup").at("seconds");
  r.samples = j.at("samples_seconds").get<std::vector<double>>();
  r.stats = summary_from_json(j.at("stats_seconds"));
  if (const auto s = j.find("stopping"); s != j.end()) {
    r.stop_criterion = s->at("criterion");
    r.stop_parameters =
        s->at("parameters").get<std::map<std::string, double>>();
    r.stopped_by = s->at("ended_by");
  }

  const auto& t = j.at("throughput");
  r.samples_per_second = t.at("samples_per_second");
  r.gflops = t.at("gflops");
  // 0 in memory where the record has null (not measured).
  const auto number = [&](const char* key) {
    const auto v = t.find(key);
    return v != t.end() && v->is_number() ? v->get<double>() : 0.0;
  };
  r.peak_fraction = number("peak_fraction");
  r.peak_gflops = number("peak_gflops");
  r.theoretical_fraction = number("theoretical_fraction");
  r.first_loss = number_or_nan(j.at("loss").at("first"));
  r.last_loss = number_or_nan(j.at("loss").at("last"));
  if (const auto w = j.find("worker_clock"); w != j.end())
    r.worker_clock = WorkerClock{w->at("chunks"), w->at("wall_seconds"),
                                 w->at("step_seconds")};
  const json v = j.value("verification", json());
  if (!v.is_null()) r.verification = verification_from_json(v);
  const json d = j.value("distributed", json());
  if (d.is_object()) r.distributed = distributed_run_from_json(d);
  return r;
}

json to_json(const Report& r) {
  json results = json::array();
  for (const auto& x : r.results) results.push_back(to_json(x));
  for (const auto& x : r.training) results.push_back(to_json(x));
  for (const auto& x : r.other) results.push_back(x);
  json out = {{"schema_version", kSchemaVersion},
              {"created_utc", r.created_utc},
              {"environment", r.environment},
              {"peak", r.peak},
              {"results", results}};
  if (!r.derived.empty()) out["derived"] = r.derived;
  if (!r.price_note.empty()) out["price_note"] = r.price_note;
  return out;
}

void migrate_2_to_3(json& file) {
  json& e = file.at("environment");
  if (e.is_object() && !e.contains("cpu")) {
    e["cpu"] = {{"name", e.value("cpu_model", "")},
                {"microarchitecture", ""},
                {"microarchitecture_source", "not recorded (schema 2)"},
                {"isa", e.value("isa", json::array())},
                {"cores", e.value("physical_cores", 0)}};
    for (const char* old : {"cpu_model", "isa", "physical_cores"}) e.erase(old);
  }
  for (json& r : file.at("results"))
    if (!r.contains("kind")) r["kind"] = "throughput";
  file["schema_version"] = 3;
}

Report report_from_json(const json& in) {
  const int version = in.at("schema_version");
  if (version < kOldestReadableSchema || version > kSchemaVersion)
    throw Error("results schema_version " + std::to_string(version) +
                " is not supported (this nnbench reads " +
                std::to_string(kOldestReadableSchema) + " to " +
                std::to_string(kSchemaVersion) + ")");
  json j = in;
  if (version == 2) migrate_2_to_3(j);
  Report r;
  r.created_utc = j.at("created_utc");
  r.environment = j.at("environment");
  r.peak = j.value("peak", json::object());
  r.derived = j.value("derived", json::array());
  r.price_note = j.value("price_note", "");
  // `nnbench train --out` writes its records under "runs".
  const bool train_file = j.value("kind", "") == "train";
  for (const auto& x : j.at(train_file ? "runs" : "results")) {
    if (train_file)
      r.training.push_back(train_run_from_json(x));
    else
      r.add(*record_from_json(x));
  }
  return r;
}

std::string utc_now_iso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace nnbench::results
