#pragma once
// The results store: an embedded SQLite database (WAL, busy timeout, a
// schema version with migrations). Each case's record is committed as soon
// as it ends, so killing the suite loses at most the case in flight.
#include <SQLiteCpp/Database.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "results/record.h"
#include "results/reporter.h"
#include "study/plan.h"

namespace nnbench::study {

// 1: runs, results. 2: derived (figures computed from a run's results).
inline constexpr int kStoreSchemaVersion = 3;

struct RunRow {
  std::string id, suite, suite_file, created_utc, finished_utc, command;
  nlohmann::json environment, peak, options;
  int cases = 0;   // planned
  int stored = 0;  // results in the store
};

struct ResultRow {
  int index = 0;  // position in the run's plan
  std::string key, label, scenario, model, backend, precision, mode, state;
  int64_t batch = 0;
  int threads = 0, repetition = 0;
  bool valid = false;
  double median_seconds = 0, samples_per_second = 0;  // 0 when not measured
  std::string created_utc;
  nlohmann::json record;
};

// A figure derived from a run's results (results/reporter.h).
using DerivedRow = results::Figure;

// The entry a reporter receives for case `p` at plan position `index`.
results::Entry entry_of(int index, const PlannedCase& p,
                        const results::Record& r);
// A stored row as an entry of `r` (its record read back).
results::Entry entry_of(const ResultRow& row, const results::Record& r);
// "<price source>; relative to <baseline>" from a run's recorded `cost`
// options ({price_source, baseline, ...}); "" for a run not priced.
std::string price_note_of(const nlohmann::json& cost);
inline std::string price_note_of(const RunRow& run) {
  const auto c = run.options.find("cost");
  return c == run.options.end() ? "" : price_note_of(*c);
}
// The row the store keeps for an entry (its record serialized).
ResultRow result_row(const results::Entry& e);

// A database error after the store is open (read-only file, full disk,
// damaged pages), naming the store: the CLI maps it to its own exit code.
class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Store {
 public:
  // kCreate makes the file (and its folder) when missing: for commands that
  // write results. kExisting refuses a missing store (an nnbench::Error
  // saying there is none): for commands that only read.
  enum class Open { kCreate, kExisting };
  // Opens the database and brings its schema up to date (safe when several
  // processes create the same new store at once); refuses a newer schema.
  explicit Store(const std::string& path, Open how = Open::kCreate);
  // $NNBENCH_DB, else $XDG_DATA_HOME/nnbench/results.db, else
  // ~/.local/share/nnbench/results.db.
  static std::string default_path();
  // `given` (a --db option), or default_path() when it is empty.
  static std::string path_or_default(const std::string& given) {
    return given.empty() ? default_path() : given;
  }

  std::string begin_run(RunRow run);  // fills id and created_utc
  void finish_run(const std::string& id);
  void add_result(const std::string& run_id, const results::Entry& e);
  void add_result(const std::string& run_id, int index, const PlannedCase& p,
                  const results::Record& r) {
    add_result(run_id, entry_of(index, p, r));
  }
  std::set<std::string> stored_keys(const std::string& run_id);
  // A run made elsewhere, as it was there (its id, times, results and
  // derived figures), in one transaction (study/transfer.h).
  // Runs `f` in one transaction: what it inserts (insert_run) lands
  // together, or, when it throws, not at all.
  void atomically(const std::function<void()>& f);
  void insert_run(const RunRow& run, const std::vector<ResultRow>& results,
                  const std::vector<DerivedRow>& derived);
  // Replaces the run's derived figures (recomputed from all its results).
  void set_derived(const std::string& run_id,
                   const std::vector<DerivedRow>& rows);
  std::vector<DerivedRow> derived(const std::string& run_id);

  std::vector<RunRow> runs();
  std::optional<RunRow> run(const std::string& id);
  // The SHA-256 of a run's export as `results import` compares runs (set
  // when it imported the run, or first compared one a suite stored), so
  // that importing it again compares without reading the run back.
  std::optional<std::string> run_digest(const std::string& id);
  void set_run_digest(const std::string& id, const std::string& sha256);
  std::vector<ResultRow> results(const std::string& run_id);
  std::string integrity_check();
  const std::string& path() const { return path_; }

 private:
  RunRow row_of(SQLite::Statement& q);
  // One result row; `verb` "INSERT" or "INSERT OR REPLACE".
  void insert_result(const std::string& run_id, const ResultRow& r,
                     const char* verb);
  void insert_derived(const std::string& run_id,
                      const std::vector<DerivedRow>& rows);
  // Runs f, turning a database error into a StoreError naming the store
  // and what was being done.
  template <typename F>
  auto guarded(const char* doing, F&& f) -> decltype(f());
  std::string path_;
  SQLite::Database db_;
};

}  // namespace nnbench::study
