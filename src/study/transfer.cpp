#include "study/transfer.h"

#include <fstream>
#include <map>

#include "data/manifest.h"
#include "util/error.h"

namespace nnbench::study {
namespace {

using nlohmann::json;

json or_null(double x) { return x > 0 ? json(x) : json(nullptr); }
double or_zero(const json& x) { return x.is_number() ? x.get<double>() : 0; }

// The run's content as compared between stores: everything but where it
// was read from and the count of stored results (derived from them).
json content(const RunCopy& c) { return run_json(c); }

template <typename T>
T field(const json& j, const char* key, const std::string& from) {
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    throw Error(from + ": not a run export of nnbench: no valid '" +
                std::string(key) +
                "' (re-export it with `nnbench results export --format "
                "json`)");
  }
}

bool is_sqlite(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  char head[16] = {};
  in.read(head, sizeof head);
  return in.gcount() == 16 &&
         std::string(head, 16) == std::string("SQLite format 3\0", 16);
}

}  // namespace

RunCopy read_run(Store& s, const std::string& id, const std::string& from) {
  RunCopy c;
  const auto run = s.run(id);
  if (!run) throw Error(from + ": no run " + id);
  c.run = *run;
  c.results = s.results(id);
  c.derived = s.derived(id);
  c.from = from;
  return c;
}

json run_json(const RunCopy& c) {
  const RunRow& run = c.run;
  json results = json::array();
  for (const auto& r : c.results)
    results.push_back({{"index", r.index},
                       {"case_key", r.key},
                       {"label", r.label},
                       {"scenario", r.scenario},
                       {"model", r.model},
                       {"backend", r.backend},
                       {"precision", r.precision},
                       {"mode", r.mode},
                       {"batch", r.batch},
                       {"threads", r.threads},
                       {"repetition", r.repetition},
                       {"state", r.state},
                       {"valid", r.valid},
                       {"median_seconds", or_null(r.median_seconds)},
                       {"samples_per_second", or_null(r.samples_per_second)},
                       {"created_utc", r.created_utc},
                       {"record", r.record}});
  json derived = json::array();
  for (const auto& d : c.derived)
    derived.push_back(
        {{"name", d.name}, {"group", d.group}, {"x", d.x}, {"value", d.value}});
  return {{"run",
           {{"id", run.id},
            {"suite", run.suite},
            {"suite_file", run.suite_file},
            {"created_utc", run.created_utc},
            {"finished_utc", run.finished_utc},
            {"command", run.command},
            {"options", run.options},
            {"cases", run.cases}}},
          {"environment", run.environment},
          {"peak", run.peak},
          {"derived", derived},
          {"results", results}};
}

RunCopy run_from_json(const json& j, const std::string& from) {
  if (!j.is_object() || !j.contains("run") || !j["run"].is_object())
    throw Error(from +
                ": not a run export of nnbench (no 'run' object; `nnbench "
                "results export RUN --format json` writes one)");
  RunCopy c;
  c.from = from;
  const json& run = j["run"];
  c.run.id = field<std::string>(run, "id", from);
  if (c.run.id.empty() || c.run.id.size() > 64)
    throw Error(from + ": run id '" + c.run.id.substr(0, 64) +
                "' is not 1 to 64 characters");
  c.run.suite = field<std::string>(run, "suite", from);
  c.run.suite_file = field<std::string>(run, "suite_file", from);
  c.run.created_utc = field<std::string>(run, "created_utc", from);
  c.run.finished_utc = field<std::string>(run, "finished_utc", from);
  c.run.command = field<std::string>(run, "command", from);
  c.run.options = field<json>(run, "options", from);
  c.run.cases = field<int>(run, "cases", from);
  c.run.environment = field<json>(j, "environment", from);
  c.run.peak = field<json>(j, "peak", from);
  for (const json& r : field<json>(j, "results", from)) {
    ResultRow row;
    row.index = field<int>(r, "index", from);
    row.key = field<std::string>(r, "case_key", from);
    row.label = field<std::string>(r, "label", from);
    row.scenario = field<std::string>(r, "scenario", from);
    row.model = field<std::string>(r, "model", from);
    row.backend = field<std::string>(r, "backend", from);
    row.precision = field<std::string>(r, "precision", from);
    row.mode = field<std::string>(r, "mode", from);
    row.batch = field<int64_t>(r, "batch", from);
    row.threads = field<int>(r, "threads", from);
    row.repetition = field<int>(r, "repetition", from);
    row.state = field<std::string>(r, "state", from);
    row.valid = field<bool>(r, "valid", from);
    row.median_seconds = or_zero(field<json>(r, "median_seconds", from));
    row.samples_per_second =
        or_zero(field<json>(r, "samples_per_second", from));
    row.created_utc = field<std::string>(r, "created_utc", from);
    row.record = field<json>(r, "record", from);
    c.results.push_back(std::move(row));
  }
  for (const json& d : field<json>(j, "derived", from))
    c.derived.push_back({field<std::string>(d, "name", from),
                         field<std::string>(d, "group", from),
                         field<double>(d, "x", from),
                         field<double>(d, "value", from)});
  c.run.stored = static_cast<int>(c.results.size());
  return c;
}

std::vector<RunCopy> read_runs(const std::string& file) {
  std::ifstream probe(file);
  if (!probe) throw Error(file + ": cannot be read");
  probe.close();
  if (is_sqlite(file)) {
    Store s(file, Store::Open::kExisting);
    std::vector<RunCopy> out;
    for (const auto& r : s.runs())
      out.push_back(read_run(s, r.id, file + " (run " + r.id + ")"));
    return out;
  }
  std::ifstream in(file);
  json j;
  try {
    j = json::parse(in);
  } catch (const json::parse_error& e) {
    throw Error(file +
                ": neither a results store (SQLite) nor JSON: " + e.what());
  }
  return {run_from_json(j, file)};
}

std::vector<Imported> import_runs(Store& into,
                                  const std::vector<std::string>& files) {
  std::vector<Imported> out;
  // id -> the SHA-256 of its content and where it came from: what later
  // inputs are checked against, without keeping any run in memory.
  std::map<std::string, std::pair<std::string, std::string>> seen;
  const auto digest = [](const RunCopy& c) {
    return data::sha256_hex(content(c).dump());
  };
  // One transaction per file: one for all of them grew slower per run as
  // it grew (docs/performance.md, "Many machines").
  for (const auto& file : files) {
    const size_t before = out.size();
    try {
      into.atomically([&] {
        for (auto& c : read_runs(file)) {
          const std::string mine = digest(c);
          const auto clash = [&](const std::string& other) {
            throw Error("run " + c.run.id + " in " + c.from +
                        " has the id of another run, with other content, "
                        "in " +
                        other);
          };
          Imported r{c.run.id, c.from, c.run.environment, c.results.size()};
          if (const auto it = seen.find(c.run.id); it != seen.end()) {
            if (it->second.first != mine) clash(it->second.second);
            continue;  // the same run twice among the inputs
          }
          seen[c.run.id] = {mine, c.from};
          if (into.run(c.run.id)) {
            // Stored by a suite: compared once by reading it back, then
            // by its digest.
            std::optional<std::string> theirs = into.run_digest(c.run.id);
            if (!theirs) {
              theirs = digest(read_run(into, c.run.id, into.path()));
              into.set_run_digest(c.run.id, *theirs);
            }
            if (*theirs != mine) clash(into.path());
            r.known = true;
          } else {
            into.insert_run(c.run, c.results, c.derived);
            into.set_run_digest(c.run.id, mine);
          }
          out.push_back(std::move(r));
        }
      });
    } catch (const Error& e) {
      size_t added = 0;
      for (size_t i = 0; i < before; ++i) added += !out[i].known;
      throw Error(std::string(e.what()) + "; nothing of " + file +
                  " was imported" +
                  (added ? "; the " + std::to_string(added) +
                               (added == 1 ? " run" : " runs") +
                               " of the files before it were, and stay "
                               "(importing them again adds nothing)"
                         : ""));
    }
  }
  return out;
}

}  // namespace nnbench::study
