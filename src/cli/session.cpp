#include "cli/session.h"

#include <fmt/core.h>

#include "backend/registry.h"
#include "model/model_file.h"
#include "model/zoo/zoo.h"
#include "reporters/json_file.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/text.h"

namespace nnbench::cli {

model::Model resolve_model(const std::string& name, const std::string& file) {
  if (name.empty() == file.empty())
    throw Error("give exactly one of --model NAME or --model-file FILE");
  return name.empty() ? model::load_model_file(file) : model::zoo::get(name);
}

machine::Environment capture_and_warn() {
  // Described first: a backend's libraries load on first use (LibTorch's
  // libblas.so.3), and the environment lists the loaded ones.
  std::vector<backend::Description> backends;
  for (const auto& name : backend::backend_names())
    backends.push_back(backend::make_backend(name)->describe());
  machine::Environment env = machine::capture_environment();
  env.backends = std::move(backends);
  for (const auto& f : env.fixes_applied)
    fmt::print(stderr, "nnbench: applied: {}\n", f);
  for (const auto& w : env.warnings)
    fmt::print(stderr, "nnbench: warning: {}\n", w);
  return env;
}

machine::Peak measure_peak(int threads, const machine::Cpu* cpu) {
  const auto t0 = util::Clock::now();
  machine::Peak p = machine::measure_gemm_peak(threads);
  for (const auto& name : backend::backend_names())
    for (const auto& g : backend::make_backend(name)->time_gemms(threads, 2048))
      machine::add_gemm(p, g);
  if (cpu) p.theoretical = machine::theoretical_peak(*cpu, threads);
  p.seconds = util::seconds_since(t0);
  return p;
}

results::ReportContext report_context(const machine::Environment& env,
                                      const machine::Peak& peak) {
  results::ReportContext c;
  c.environment = machine::to_json(env);
  c.peak = machine::to_json(peak);
  return c;
}

void report_records(results::Reporter& to, const results::ReportContext& c,
                    const std::vector<const results::Record*>& records) {
  to.begin(c);
  for (const auto* r : records) {
    results::Entry e;
    e.record = r;
    to.record(e);
  }
  to.end({});
}

void write_report(const std::string& path, const machine::Environment& env,
                  const machine::Peak& peak,
                  const std::vector<results::RunResult>& runs) {
  reporters::JsonFile file(path);
  std::vector<const results::Record*> records;
  for (const auto& r : runs) records.push_back(&r);
  report_records(file, report_context(env, peak), records);
}

void print_progress(const results::RunResult& r) {
  const std::string what =
      fmt::format("{} {} {} batch {}", r.model, r.backend,
                  backend::mode_name(r.requested.mode), r.requested.batch);
  if (r.state != results::State::kOk) {
    fmt::print(stderr, "  {}: {} ({})\n", what, results::state_name(r.state),
               r.message);
    return;
  }
  fmt::print(stderr, "  {}: {:.3f} ms median, {}{}\n", what,
             r.stats.median * 1e3, util::count(r.stats.n, "iteration"),
             r.attempts > 1 ? fmt::format(", attempt {}", r.attempts) : "");
  for (const auto& why : r.validity.reasons)
    fmt::print(stderr, "    INVALID ({}): {}\n", why.reason, why.detail);
}

bool invalid_counts(const results::RunResult& r) {
  return r.validity.fails(r.requested.contention.action ==
                          results::ContentionPolicy::Action::kWarn);
}

}  // namespace nnbench::cli
