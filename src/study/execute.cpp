#include "study/execute.h"

#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "backend/registry.h"
#include "distributed/comm_engines.h"
#include "machine/peak.h"
#include "results/kinds.h"
#include "results/result.h"
#include "results/training.h"
#include "study/launch.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/lifeline.h"
#include "util/temp_dir.h"

namespace nnbench::study {
namespace {

namespace fs = std::filesystem;

// The scenario's own record kind; a throughput record for an unknown
// scenario (the case then fails naming it).
std::unique_ptr<results::Record> empty_record(const PlannedCase& p) {
  for (const auto& n : scenarios::scenario_names())
    if (n == p.scenario) return scenarios::make_scenario(n)->empty_record(p.c);
  return scenarios::make_throughput()->empty_record(p.c);
}

bool mentions_memory(const std::string& text) {
  for (const char* s : {"bad_alloc", "out of memory", "Out of memory",
                        "Cannot allocate memory"})
    if (text.find(s) != std::string::npos) return true;
  return false;
}

std::string signal_name(int sig) {
  const char* d = strsignal(sig);
  return "signal " + std::to_string(sig) +
         (d ? std::string(" (") + d + ")" : "");
}

// The last n non-empty lines, joined with " | " to fit a message.
std::string last_lines(const std::string& text, size_t n) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) lines.push_back(l);
  std::string out;
  for (size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size();
       ++i)
    out += (out.empty() ? "" : " | ") + lines[i];
  return out;
}

}  // namespace

std::unique_ptr<results::Record> run_in_process(const PlannedCase& p,
                                                const scenarios::Context& ctx) {
  try {
    auto scenario = scenarios::make_scenario(p.scenario);
    auto b = backend::make_ready_backend(p.c.request.backend);
    return scenario->run(*b, p.c, ctx);
  } catch (...) {  // unknown scenario or backend: the case's state
    auto r = empty_record(p);
    r->fail(results::classify(std::current_exception()));
    return r;
  }
}

std::unique_ptr<results::Record> record_of_child(const PlannedCase& p,
                                                 const ChildOutcome& o,
                                                 const ChildLimits& limits) {
  auto r = empty_record(p);
  const std::string tail = last_lines(o.stderr_tail, 5);
  const std::string stderr_note =
      tail.empty() ? "" : "; its last stderr: " + tail;
  using results::State;
  if (o.timed_out) {
    r->state = State::kTimeout;
    r->message = "no result after " + std::to_string(limits.timeout_seconds) +
                 " s: killed" + stderr_note;
  } else if (o.signal == SIGKILL) {
    r->state = State::kOom;
    r->oom_source = "oom_kill";
    r->message =
        "killed by SIGKILL from outside (the kernel's OOM killer, "
        "most likely)" +
        stderr_note;
  } else {
    // A runtime that aborts on a failed allocation says so on stderr.
    r->state = mentions_memory(o.stderr_tail) ? State::kOom : State::kCrashed;
    if (r->state == State::kOom) r->oom_source = "allocation";
    r->message =
        (o.signal != 0 ? "its process died of " + signal_name(o.signal)
                       : "its process exited with code " +
                             std::to_string(o.exit_code) + " and no result") +
        stderr_note;
  }
  return r;
}

std::unique_ptr<results::Record> run_isolated(const PlannedCase& p,
                                              const scenarios::Context& ctx,
                                              const ChildLimits& limits) {
  // Removed however this ends: the record read, an interrupt unwinding,
  // or (through its watcher) this process and the child killed.
  const util::TempDir keep("nnbench-case");
  const fs::path dir(keep.path());
  const std::string in = (dir / "case.json").string();
  const std::string out = (dir / "record.json").string();
  util::write_file_atomically(
      in, nlohmann::json{{"case", case_json(p)},
                         {"peak", machine::to_json(ctx.peak)}}
              .dump());
  const ChildOutcome o =
      run_child({self_exe(), "case", "--in", in, "--out", out}, limits);
  std::unique_ptr<results::Record> r;
  if (!o.timed_out && o.signal == 0 && o.exit_code == 0 && fs::exists(out)) {
    try {
      r = results::record_from_json(nlohmann::json::parse(std::ifstream(out)));
    } catch (const std::exception& e) {
      r = empty_record(p);
      r->state = results::State::kCrashed;
      r->message = std::string("its result could not be read: ") + e.what();
    }
  } else {
    r = record_of_child(p, o, limits);
  }
  return r;
}

namespace {

// A case with processes > 1: this process starts the ranks (each runs this
// same `nnbench case`) and writes rank 0's record, marked failed naming the
// rank when one failed.
int launch_case(const PlannedCase& p, const std::string& out) {
  const auto& d = p.c.request.distributed;
  const Launch l{d.engine, d.processes, "", 60};
  const LaunchOutcome o = launch_ranks(l);
  auto record = nlohmann::json::parse(o.rank0_output, nullptr, false);
  if (o.failed_rank < 0 && record.is_object()) {
    util::write_file_atomically(out, o.rank0_output);
    return 0;
  }
  if (!record.is_object()) {
    auto r = empty_record(p);
    r->fail({results::State::kFailed, "rank 0 wrote no record", ""});
    record = r->serialize();
  }
  if (o.failed_rank >= 0) mark_failed(record, l, o);
  util::write_file_atomically(out, record.dump());
  return 0;
}

}  // namespace

int run_case_file(const std::string& in, const std::string& out) {
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(in));
  const PlannedCase p = case_from_json(j.at("case"));
  const auto& d = p.c.request.distributed;
  // When the suite dies (SIGKILL included) this process gets SIGTERM: its
  // case folder goes with it. Ranks share the folder and leave it alone.
  if (!distributed::started_as_rank()) {
    util::lifeline::install();
    util::lifeline::remove_on_signal({in, out},
                                     {fs::path(in).parent_path().string()});
  }
  util::lifeline::release();  // held since the fork (study/child.cpp)
  if (!d.engine.empty() && d.processes > 1 && !distributed::started_as_rank())
    return launch_case(p, out);
  scenarios::Context ctx;
  const auto& peak = j.at("peak");
  ctx.peak = machine::peak_from_json(peak);
  std::unique_ptr<distributed::Group> group;
  std::unique_ptr<results::Record> r;
  try {
    if (!d.engine.empty()) {
      group = distributed::make_group(d.engine, {});
      ctx.group = group.get();
    }
    r = run_in_process(p, ctx);
  } catch (...) {
    r = empty_record(p);
    r->fail(results::classify(std::current_exception()));
  }
  if (!group || group->rank() == 0)
    util::write_file_atomically(out, r->serialize().dump());
  if (group && group->broken()) group->abandon(1);
  return 0;
}

}  // namespace nnbench::study
