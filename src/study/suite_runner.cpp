#include "study/suite_runner.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>

#include "data/manifest.h"
#include "results/kinds.h"
#include "study/derive.h"
#include "study/execute.h"
#include "study/max_batch.h"
#include "study/run_cost.h"
#include "util/error.h"
#include "util/lifeline.h"

namespace nnbench::study {
namespace {

bool counts_as_failure(const results::Record& r,
                       const results::RunRequest& req) {
  // An oom, unimplemented or not-run cell is a result, as in the studies'
  // tables.
  if (r.state == results::State::kOom ||
      r.state == results::State::kUnimplemented ||
      r.state == results::State::kNotRun)
    return false;
  if (results::is_failure(r.state)) return true;
  return r.validity.fails(req.contention.action ==
                          results::ContentionPolicy::Action::kWarn);
}

nlohmann::json cost_json(const CostRule& c, const cost::Instance& i) {
  std::string source = cost::instance_price(i).source;
  if (i.pro_rata_vcpus) source += "; pro rata to the threads each case used";
  return {{"instance", c.instance},
          {"price_source", source},
          {"baseline_threads", c.baseline_threads},
          {"baseline", c.baseline_threads > 0
                           ? std::to_string(c.baseline_threads) + " threads"
                           : "the most threads of each task"}};
}

void check_resume(const RunRow& run, const SuiteSpec& spec,
                  const std::vector<PlannedCase>& cases,
                  const std::set<std::string>& stored) {
  std::set<std::string> planned;
  for (const auto& c : cases) planned.insert(c.key);
  size_t foreign = 0;
  for (const auto& k : stored) foreign += planned.count(k) ? 0 : 1;
  const std::string want = run.options.value("plan_sha256", "");
  // Runs stored before the plan's hash was recorded: the suite's name and
  // every stored case among the planned ones.
  const bool same = want.empty() ? run.suite == spec.name && foreign == 0
                                 : want == plan_hash(cases) && foreign == 0;
  if (same) return;
  throw Error(fmt::format(
      "--resume {}: the run was started with suite {} ({}, {} cases) and "
      "other settings; this command plans {} cases of suite {} ({}), and "
      "{} of the run's {} stored cases are not among them. Resume with the "
      "suite file and options the run was started with: {}",
      run.id, run.suite, run.suite_file, run.cases, cases.size(), spec.name,
      spec.file, foreign, stored.size(), run.command));
}

std::string begin(Store& store, const SuiteSpec& spec,
                  const std::vector<PlannedCase>& cases,
                  const machine::Environment& env, const machine::Peak& peak,
                  const SuiteRunOptions& o) {
  RunRow row;
  row.suite = spec.name;
  row.suite_file = spec.file;
  row.command = o.command;
  row.environment = machine::to_json(env);
  row.peak = machine::to_json(peak);
  row.options = {
      {"isolated", !o.in_process},
      {"plan_sha256", plan_hash(cases)},
      {"interleave_seed", o.interleave_seed ? nlohmann::json(*o.interleave_seed)
                                            : nlohmann::json()}};
  if (o.pricing) row.options["cost"] = cost_json(*o.pricing, *o.instance);
  if (o.shard)
    row.options["shard"] = {{"study", o.shard->study},
                            {"index", o.shard->index},
                            {"count", o.shard->count},
                            {"from", o.shard->from},
                            {"study_plan_sha256", o.study_plan_sha256},
                            {"study_cases", o.study_cases}};
  row.cases = static_cast<int>(cases.size());
  return store.begin_run(row);
}

// Runs cases and keeps the store while it works: after its first failure
// the suite goes on without it (every record is still in the outcome).
class Session {
 public:
  Session(Store* store, const scenarios::Context& ctx, const SuiteRunOptions& o,
          const SuiteEvents& events, SuiteOutcome& out)
      : store_(store), ctx_(ctx), o_(o), events_(events), out_(out) {}

  std::unique_ptr<results::Record> run(const PlannedCase& c) {
    return o_.in_process ? run_in_process(c, ctx_)
                         : run_isolated(c, ctx_, o_.limits);
  }

  // Runs `write` against the store, unless it has failed.
  template <typename F>
  void stored(const char* what, const F& write) {
    if (!store_ || !out_.store_error.empty()) return;
    try {
      write(*store_);
    } catch (const StoreError& e) {
      out_.store_error = e.what();
      if (events_.error)
        events_.error(std::string(what) + " failed: " + out_.store_error);
    }
  }

 private:
  Store* store_;
  const scenarios::Context& ctx_;
  const SuiteRunOptions& o_;
  const SuiteEvents& events_;
  SuiteOutcome& out_;
};

void search_max_batches(const std::vector<PlannedCase>& cases,
                        const SuiteRunOptions& o, const SuiteEvents& ev,
                        Session& s, SuiteOutcome& out,
                        std::vector<DerivedRow>& found) {
  std::set<std::string> groups;
  int index = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string group =
        cases[i].group() + " t" +
        std::to_string(cases[i].c.request.options.threads);
    if (!groups.insert(group).second) continue;
    const Probe probe = [&](const PlannedCase& p) {
      if (ev.started) ev.started(i, p, 1.5);
      auto r = s.run(p);
      s.stored("storing a probe",
               [&](Store& st) { st.add_result(out.run_id, index++, p, *r); });
      if (ev.finished) ev.finished(p, *r);
      return r;
    };
    const auto m = find_max_batch(cases[i], o.max_batch_cap, probe);
    if (ev.line)
      ev.line(fmt::format("max batch {}: {}{}{}", group, m.batch,
                          m.bounded ? "" : " (the cap; larger may fit)",
                          m.why.empty() ? "" : "; stopped: " + m.why));
    found.push_back({"max_batch", group,
                     double(cases[i].c.request.options.threads),
                     double(m.batch)});
    out.failures = out.failures || !m.why.empty();
  }
}

void run_cases(
    const std::vector<PlannedCase>& cases, const std::set<std::string>& done,
    const SuiteEvents& events, Session& s, SuiteOutcome& out,
    std::map<std::string, std::unique_ptr<results::Record>>& measured) {
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    if (done.count(c.key)) continue;
    if (events.started)
      events.started(i, c, std::max(0.0, estimate_seconds(c)));
    auto r = s.run(c);
    s.stored("storing a result", [&](Store& st) {
      st.add_result(out.run_id, static_cast<int>(i), c, *r);
    });
    if (events.finished) events.finished(c, *r);
    out.failures = out.failures || counts_as_failure(*r, c.c.request);
    // --on-contention fail stops on contention, not on other reasons.
    bool contended = false;
    for (const auto& why : r->validity.reasons)
      contended = contended || why.reason == "contended";
    const bool stop = contended && c.c.request.contention.action ==
                                       results::ContentionPolicy::Action::kFail;
    measured[c.key] = std::move(r);
    if (stop) {
      if (events.note) events.note("stopping the suite (--on-contention fail)");
      break;
    }
  }
}

}  // namespace

std::string plan_hash(const std::vector<PlannedCase>& cases) {
  std::vector<std::string> keys;
  for (const auto& c : cases) keys.push_back(c.key);
  std::sort(keys.begin(), keys.end());
  std::string all;
  for (const auto& k : keys) all += k + "\n";
  return data::sha256_hex(all);
}

std::string price_note(const CostRule& c, const cost::Instance& i) {
  const auto j = cost_json(c, i);
  return j.value("price_source", "") + "; relative to " +
         j.value("baseline", "");
}

std::set<std::string> resumable(Store* store, const std::string& resume,
                                const SuiteSpec& spec,
                                const std::vector<PlannedCase>& cases) {
  if (resume.empty()) return {};
  if (!store) throw Error("--resume needs the results store (not --no-store)");
  const auto run = store->run(resume);
  if (!run) throw Error("no run '" + resume + "' in the results store");
  auto done = store->stored_keys(resume);
  check_resume(*run, spec, cases, done);
  return done;
}

SuiteOutcome run_suite(const SuiteSpec& spec,
                       const std::vector<PlannedCase>& cases, Store* store,
                       const std::set<std::string>& done,
                       const machine::Environment& env,
                       const machine::Peak& peak, const SuiteRunOptions& o,
                       const SuiteEvents& events) {
  SuiteOutcome out;
  out.run_id = o.resume;
  if (store && o.resume.empty())
    out.run_id = begin(*store, spec, cases, env, peak, o);
  if (events.began) events.began(out.run_id);
  const scenarios::Context ctx{peak};
  Session s(store, ctx, o, events, out);
  std::map<std::string, std::unique_ptr<results::Record>> measured;
  std::vector<DerivedRow> found;
  try {
    if (o.find_max_batch)
      search_max_batches(cases, o, events, s, out, found);
    else
      run_cases(cases, done, events, s, out, measured);
  } catch (const util::lifeline::Interrupted& e) {
    // The case in flight and its processes have ended: what finished is
    // still the caller's to write (the store may have failed before).
    out.interrupted = e.signal();
  }
  results::Report& report = out.report;
  report.environment = machine::to_json(env);
  report.peak = machine::to_json(peak);
  if (o.pricing) report.price_note = price_note(*o.pricing, *o.instance);
  // Cases stored by earlier invocations of a resumed run, read back.
  std::map<std::string, nlohmann::json> earlier;
  if (!out.interrupted)
    s.stored("reading the run back", [&](Store& st) {
      const auto rows = st.results(out.run_id);
      for (const auto& row : rows)
        if (done.count(row.key)) earlier[row.key] = row.record;
      auto derived = derive(rows);
      derived.insert(derived.end(), found.begin(), found.end());
      if (o.pricing) {
        const auto c =
            derive_costs(rows, *o.instance, o.pricing->baseline_threads);
        derived.insert(derived.end(), c.begin(), c.end());
      }
      st.set_derived(out.run_id, derived);
      st.finish_run(out.run_id);
      for (const auto& d : derived)
        report.derived.push_back({{"name", d.name},
                                  {"group", d.group},
                                  {"x", d.x},
                                  {"value", d.value}});
    });
  for (const auto& c : cases) {
    std::unique_ptr<results::Record> back;
    const results::Record* r = nullptr;
    if (const auto it = measured.find(c.key); it != measured.end()) {
      r = it->second.get();
    } else if (const auto e = earlier.find(c.key); e != earlier.end()) {
      back = results::record_from_json(e->second);
      r = back.get();
      // A resumed run's exit code covers the cases stored before too.
      out.failures = out.failures || counts_as_failure(*r, c.c.request);
    }
    if (r) report.add(*r);
  }
  return out;
}

}  // namespace nnbench::study
