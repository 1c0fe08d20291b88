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

// What a suite run carries from case to case: the reporters it feeds, the
// rows its derived figures come from, and its outcome.
struct Feed {
  results::Reporter& reporter;
  const SuiteEvents& events;
  SuiteOutcome& out;
  std::vector<ResultRow> rows;

  void report(const results::Entry& e) {
    reporter.record(e);
    rows.push_back(result_row(e));
  }
};

std::unique_ptr<results::Record> run_case(const PlannedCase& c,
                                          const scenarios::Context& ctx,
                                          const SuiteRunOptions& o) {
  return o.in_process ? run_in_process(c, ctx) : run_isolated(c, ctx, o.limits);
}

void search_max_batches(const std::vector<PlannedCase>& cases,
                        const scenarios::Context& ctx, const SuiteRunOptions& o,
                        Feed& f, std::vector<DerivedRow>& found) {
  const SuiteEvents& ev = f.events;
  std::set<std::string> groups;
  int index = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string group =
        cases[i].group() + " t" +
        std::to_string(cases[i].c.request.options.threads);
    if (!groups.insert(group).second) continue;
    const Probe probe = [&](const PlannedCase& p) {
      if (ev.started) ev.started(i, p, 1.5);
      auto r = run_case(p, ctx, o);
      f.report(entry_of(index++, p, *r));
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
    f.out.failures = f.out.failures || !m.why.empty();
  }
}

// Cases stored by earlier invocations go to the reporters at their place
// in the plan (read back, marked resumed); the rest run.
void run_cases(const std::vector<PlannedCase>& cases,
               const std::map<std::string, ResultRow>& earlier,
               const std::set<std::string>& done, const scenarios::Context& ctx,
               const SuiteRunOptions& o, Feed& f) {
  const SuiteEvents& events = f.events;
  bool stopped = false;  // --on-contention fail: only stored cases go on
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    if (stopped && !done.count(c.key)) continue;
    if (done.count(c.key)) {
      const auto it = earlier.find(c.key);
      if (it == earlier.end()) continue;  // the store could not be read
      const auto back = results::record_from_json(it->second.record);
      auto e = entry_of(it->second, *back);
      e.resumed = true;
      f.reporter.record(e);
      f.rows.push_back(it->second);
      // A resumed run's exit code covers the cases stored before too.
      f.out.failures = f.out.failures || counts_as_failure(*back, c.c.request);
      continue;
    }
    if (events.started)
      events.started(i, c, std::max(0.0, estimate_seconds(c)));
    auto r = run_case(c, ctx, o);
    f.report(entry_of(static_cast<int>(i), c, *r));
    if (events.finished) events.finished(c, *r);
    f.out.failures = f.out.failures || counts_as_failure(*r, c.c.request);
    // --on-contention fail stops on contention, not on other reasons.
    bool contended = false;
    for (const auto& why : r->validity.reasons)
      contended = contended || why.reason == "contended";
    if (contended && c.c.request.contention.action ==
                         results::ContentionPolicy::Action::kFail) {
      if (events.note) events.note("stopping the suite (--on-contention fail)");
      stopped = true;  // the run's stored cases still reach the reporters
    }
  }
}

// The stored rows of the cases a resumed run has done.
std::map<std::string, ResultRow> stored_rows(Store* store,
                                             const std::string& run_id,
                                             const std::set<std::string>& done,
                                             const SuiteEvents& events,
                                             SuiteOutcome& out) {
  std::map<std::string, ResultRow> rows;
  if (!store || done.empty()) return rows;
  try {
    for (auto& row : store->results(run_id))
      if (done.count(row.key)) rows[row.key] = std::move(row);
  } catch (const StoreError& e) {
    out.store_error = e.what();
    if (events.error)
      events.error(std::string("reading the run back failed: ") + e.what());
  }
  return rows;
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
  return price_note_of(cost_json(c, i));  // as the store reads it back
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
                       const SuiteEvents& events, results::Reporter& reporter) {
  SuiteOutcome out;
  out.run_id = o.resume;
  if (store && o.resume.empty())
    out.run_id = begin(*store, spec, cases, env, peak, o);
  if (events.began) events.began(out.run_id);
  const auto earlier = stored_rows(store, out.run_id, done, events, out);
  results::ReportContext context{machine::to_json(env),
                                 machine::to_json(peak),
                                 spec.name,
                                 spec.file,
                                 out.run_id,
                                 o.command};
  reporter.begin(context);
  const scenarios::Context ctx{peak};
  Feed f{reporter, events, out, {}};
  std::vector<DerivedRow> found;
  try {
    if (o.find_max_batch)
      search_max_batches(cases, ctx, o, f, found);
    else
      run_cases(cases, earlier, done, ctx, o, f);
  } catch (const util::lifeline::Interrupted& e) {
    // The case in flight and its processes have ended: what finished
    // still reaches the reporters (a file keeps it, the store keeps the
    // run unfinished).
    out.interrupted = e.signal();
  }
  results::Ending ending;
  ending.interrupted = out.interrupted;
  if (o.pricing) ending.price_note = price_note(*o.pricing, *o.instance);
  if (!out.interrupted) {
    ending.derived = derive(f.rows);
    ending.derived.insert(ending.derived.end(), found.begin(), found.end());
    if (o.pricing) {
      const auto c =
          derive_costs(f.rows, *o.instance, o.pricing->baseline_threads);
      ending.derived.insert(ending.derived.end(), c.begin(), c.end());
    }
  }
  reporter.end(ending);
  return out;
}

}  // namespace nnbench::study
