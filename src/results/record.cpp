#include "results/record.h"

#include <array>
#include <cmath>
#include <new>

#include "backend/backend.h"
#include "util/error.h"
#include "util/lifeline.h"

namespace nnbench::results {
using nlohmann::json;

namespace {

constexpr std::array<const char*, 12> kStateNames = {
    "ok",      "converged", "not_converged", "completed",
    "stopped", "oom",       "unimplemented", "invalid_args",
    "failed",  "crashed",   "timeout",       "not_run"};

}  // namespace

std::string state_name(State s) { return kStateNames[static_cast<int>(s)]; }

State state_from_name(const std::string& s) {
  for (size_t i = 0; i < kStateNames.size(); ++i)
    if (s == kStateNames[i]) return static_cast<State>(i);
  throw Error("unknown result state '" + s + "'");
}

bool is_failure(State s) {
  return s == State::kOom || s == State::kUnimplemented ||
         s == State::kInvalidArgs || s == State::kFailed ||
         s == State::kCrashed || s == State::kTimeout || s == State::kNotRun;
}

Outcome classify(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const util::lifeline::Interrupted&) {
    throw;  // not a state of the run: the command ends (128 + the signal)
  } catch (const RunError& x) {
    return {x.state, x.what(), x.state == State::kOom ? x.oom_source : ""};
  } catch (const backend::Unimplemented& x) {
    return {State::kUnimplemented, x.what(), ""};
  } catch (const backend::OutOfMemory& x) {
    return {State::kOom, x.what(), "allocation"};
  } catch (const backend::ProcessDied& x) {
    return {State::kCrashed, x.what(), ""};
  } catch (const backend::Unavailable& x) {
    return {State::kNotRun, x.what(), ""};
  } catch (const backend::ProcessHung& x) {
    return {State::kTimeout, x.what(), ""};
  } catch (const std::bad_alloc& x) {
    return {State::kOom, std::string("allocation failed: ") + x.what(),
            "allocation"};
  } catch (const Error& x) {
    return {State::kInvalidArgs, x.what(), ""};
  } catch (const std::exception& x) {
    return {State::kFailed, x.what(), ""};
  } catch (...) {
    return {State::kFailed, "unknown exception", ""};
  }
}

json to_json(const Validity& v) {
  json reasons = json::array();
  for (const auto& x : v.reasons)
    reasons.push_back({{"reason", x.reason}, {"detail", x.detail}});
  return {{"valid", v.valid()}, {"reasons", reasons}};
}

Validity validity_from_json(const json& j) {
  Validity v;
  for (const auto& x : j.at("reasons")) v.add(x.at("reason"), x.at("detail"));
  return v;
}

// Raw counters and the derived figures the contention judgment used.
json to_json(const CpuUsage& u) {
  const auto known = [](double x) { return x >= 0 ? json(x) : json(); };
  return {{"wall_seconds", u.wall_seconds},
          {"process_cpu_seconds", u.process_cpu_seconds},
          {"threads", u.threads},
          {"cpus", u.cpus},
          {"involuntary_switches", u.involuntary_switches},
          {"voluntary_switches", u.voluntary_switches},
          {"other_cpu_seconds", known(u.other_cpu_seconds)},
          {"steal_seconds", known(u.steal_seconds)},
          {"intervals", u.intervals},
          {"cpu_share", u.cpu_share()},
          {"other_load_cpus", u.other_load()},
          {"steal_fraction", u.steal_fraction()},
          {"involuntary_switches_per_thread_second",
           u.switches_per_thread_second()}};
}

CpuUsage cpu_usage_from_json(const json& j) {
  const auto known = [](const json& x) {
    return x.is_null() ? -1.0 : x.get<double>();
  };
  CpuUsage u;
  u.wall_seconds = j.at("wall_seconds");
  u.process_cpu_seconds = j.at("process_cpu_seconds");
  u.threads = j.at("threads");
  u.cpus = j.at("cpus");
  u.involuntary_switches = j.at("involuntary_switches");
  u.voluntary_switches = j.at("voluntary_switches");
  u.other_cpu_seconds = known(j.at("other_cpu_seconds"));
  u.steal_seconds = known(j.at("steal_seconds"));
  u.intervals = j.value("intervals", 1);
  return u;
}

void write_record(const Record& r, json& j) {
  j["kind"] = r.kind;
  j["model"]["name"] = r.model;
  j["model"]["hash"] = r.model_hash;
  j["backend"] = {{"name", r.backend}, {"version", r.backend_version}};
  j["effective"] = to_json(r.effective);
  j["state"] = state_name(r.state);
  j["message"] = r.message;
  j["oom_source"] = r.oom_source.empty() ? json() : json(r.oom_source);
  j["validity"] = to_json(r.validity);
  j["cpu_usage"] = to_json(r.cpu_usage);
}

void read_record(const json& j, Record& r) {
  r.kind = j.value("kind", r.kind);  // schema 2 had none: keep the default
  r.model = j.at("model").at("name");
  r.model_hash = j.at("model").at("hash");
  r.backend = j.at("backend").at("name");
  r.backend_version = j.at("backend").at("version");
  r.effective = effective_from_json(j.at("effective"));
  r.state = state_from_name(j.at("state"));
  r.message = j.at("message");
  const json& oom = j.value("oom_source", json());
  if (!oom.is_null()) r.oom_source = oom;
  r.validity = validity_from_json(j.at("validity"));
  r.cpu_usage = cpu_usage_from_json(j.at("cpu_usage"));
}

json finite_or_null(double x) { return std::isfinite(x) ? json(x) : json(); }
double number_or_nan(const json& j) {
  return j.is_null() ? std::nan("") : j.get<double>();
}

}  // namespace nnbench::results
