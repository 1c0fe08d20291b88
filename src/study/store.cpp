#include "study/store.h"

#include <SQLiteCpp/Savepoint.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <sqlite3.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <random>
#include <thread>

#include "results/result.h"
#include "results/training.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/paths.h"

namespace nnbench::study {
namespace {

namespace fs = std::filesystem;

const char* const kSchema[] = {
    // version 1
    R"sql(
CREATE TABLE runs (
  id TEXT PRIMARY KEY,
  suite TEXT NOT NULL,
  suite_file TEXT NOT NULL,
  created_utc TEXT NOT NULL,
  finished_utc TEXT,
  command TEXT NOT NULL,
  environment TEXT NOT NULL,
  peak TEXT NOT NULL,
  options TEXT NOT NULL,
  cases INTEGER NOT NULL
);
CREATE TABLE results (
  run_id TEXT NOT NULL REFERENCES runs(id),
  case_index INTEGER NOT NULL,
  case_key TEXT NOT NULL,
  label TEXT NOT NULL,
  scenario TEXT NOT NULL,
  model TEXT NOT NULL,
  backend TEXT NOT NULL,
  precision TEXT NOT NULL,
  mode TEXT NOT NULL,
  batch INTEGER NOT NULL,
  threads INTEGER NOT NULL,
  repetition INTEGER NOT NULL,
  state TEXT NOT NULL,
  valid INTEGER NOT NULL,
  median_seconds REAL,
  samples_per_second REAL,
  record TEXT NOT NULL,
  created_utc TEXT NOT NULL,
  PRIMARY KEY (run_id, case_key)
);
)sql",
    // version 2
    R"sql(
CREATE TABLE derived (
  run_id TEXT NOT NULL REFERENCES runs(id),
  name TEXT NOT NULL,
  grp TEXT NOT NULL,
  x REAL NOT NULL,
  value REAL NOT NULL
);
CREATE INDEX derived_run ON derived(run_id);
)sql",
    // version 3
    R"sql(
CREATE TABLE run_digests (
  run_id TEXT PRIMARY KEY REFERENCES runs(id),
  sha256 TEXT NOT NULL
);
)sql",
};

int user_version(SQLite::Database& db) {
  return db.execAndGet("PRAGMA user_version").getInt();
}

// The version is read again inside a write transaction taken before any
// change (BEGIN IMMEDIATE): of two processes creating the same store, the
// second waits for the first and then finds its schema in place. A deferred
// transaction would let both read version 0 and one fail on "table runs
// already exists" or "database is locked".
void migrate(SQLite::Database& db, const std::string& path) {
  const auto newer = [&](int have) {
    return Error(path + ": results store schema " + std::to_string(have) +
                 " is newer than this nnbench reads (" +
                 std::to_string(kStoreSchemaVersion) + ")");
  };
  const int seen = user_version(db);
  if (seen > kStoreSchemaVersion) throw newer(seen);
  if (seen == kStoreSchemaVersion) return;
  SQLite::Transaction t(db, SQLite::TransactionBehavior::IMMEDIATE);
  const int have = user_version(db);
  if (have > kStoreSchemaVersion) throw newer(have);
  for (int v = have; v < kStoreSchemaVersion; ++v) db.exec(kSchema[v]);
  db.exec("PRAGMA user_version = " + std::to_string(kStoreSchemaVersion));
  t.commit();
}

std::string open_path(const std::string& path, Store::Open how) {
  if (how == Store::Open::kExisting) {
    if (!fs::exists(path))
      throw Error(path +
                  ": no results store here (nnbench suite creates one; "
                  "--db or $NNBENCH_DB name another)");
    if (!fs::is_regular_file(path))
      throw Error(path + ": not a results store (not a regular file)");
    return path;
  }
  const fs::path dir = fs::path(path).parent_path();
  std::error_code ec;
  if (!dir.empty()) fs::create_directories(dir, ec);
  return path;
}

// A store that is made new is made without following a link: a link
// planted where the store will be (a dangling one into another user's
// files) would otherwise be created through. An existing store, a link
// to one included, opens as it is.
int open_flags(const std::string& path, Store::Open how) {
  if (how != Store::Open::kCreate) return SQLite::OPEN_READWRITE;
  std::error_code ec;
  const auto st = fs::symlink_status(path, ec);
  if (st.type() == fs::file_type::symlink && !fs::exists(path, ec))
    throw Error(path +
                ": a link to a file that does not exist; nnbench does not "
                "create a results store through a link");
  int flags = SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE;
  if (st.type() == fs::file_type::not_found) flags |= SQLITE_OPEN_NOFOLLOW;
  return flags;
}

std::string new_run_id() {
  std::random_device rd;
  char suffix[8];
  std::snprintf(suffix, sizeof suffix, "%04x", rd() & 0xffff);
  std::string t = results::utc_now_iso8601();  // 2026-11-25T05:00:00Z
  std::string compact;
  for (char c : t)
    if (c != '-' && c != ':') compact += c;
  return compact + "-" + suffix;
}

}  // namespace

std::string Store::default_path() {
  if (const char* p = std::getenv("NNBENCH_DB"); p && *p) return p;
  return util::data_dir() + "/results.db";
}

template <typename F>
auto Store::guarded(const char* doing, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const SQLite::Exception& e) {
    throw StoreError(path_ + ": results store: " + doing + ": " + e.what());
  } catch (const nlohmann::json::exception& e) {
    throw StoreError(path_ + ": results store: " + doing +
                     ": a stored JSON field is damaged: " + e.what());
  }
}

Store::Store(const std::string& path, Open how) try
    : path_(path), db_(open_path(path, how), open_flags(path, how), 10000) {
  // Switching a new file to WAL takes an exclusive lock, and SQLite answers
  // "database is locked" at once, without its busy handler, when another
  // process is doing the same: retried here for up to 10 s, like the busy
  // timeout every later statement gets.
  const auto give_up = util::Clock::now() + std::chrono::seconds(10);
  for (int wait_ms = 5;; wait_ms = std::min(2 * wait_ms, 200)) {
    try {
      db_.exec("PRAGMA journal_mode = WAL");
      db_.exec("PRAGMA foreign_keys = ON");
      migrate(db_, path);
      return;
    } catch (const SQLite::Exception& e) {
      const int code = e.getErrorCode() & 0xff;
      if ((code != SQLITE_BUSY && code != SQLITE_LOCKED) ||
          util::Clock::now() > give_up)
        throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
  }
} catch (const SQLite::Exception& e) {
  throw StoreError(path + ": cannot open the results store: " + e.what());
}

std::string Store::begin_run(RunRow run) {
  return guarded("starting a run", [&] {
    // Two runs started in the same second draw their id's suffix from
    // 65536 values: a clash takes another draw (a test starting 8 stores
    // at once saw one), never fails the run.
    for (int attempt = 0;; ++attempt) {
      run.id = new_run_id();
      run.created_utc = results::utc_now_iso8601();
      SQLite::Statement q(
          db_,
          "INSERT INTO runs (id, suite, suite_file, created_utc, "
          "command, environment, peak, options, cases) VALUES "
          "(?, ?, ?, ?, ?, ?, ?, ?, ?)");
      q.bind(1, run.id);
      q.bind(2, run.suite);
      q.bind(3, run.suite_file);
      q.bind(4, run.created_utc);
      q.bind(5, run.command);
      q.bind(6, run.environment.dump());
      q.bind(7, run.peak.dump());
      q.bind(8, run.options.dump());
      q.bind(9, run.cases);
      try {
        q.exec();
        return run.id;
      } catch (const SQLite::Exception& e) {
        const int code = e.getExtendedErrorCode();
        if (attempt >= 20 || (code != SQLITE_CONSTRAINT_PRIMARYKEY &&
                              code != SQLITE_CONSTRAINT_UNIQUE))
          throw;
      }
    }
  });
}

void Store::finish_run(const std::string& id) {
  return guarded("finishing a run", [&] {
    SQLite::Statement q(db_, "UPDATE runs SET finished_utc = ? WHERE id = ?");
    q.bind(1, results::utc_now_iso8601());
    q.bind(2, id);
    q.exec();
  });
}

results::Entry entry_of(int index, const PlannedCase& p,
                        const results::Record& r) {
  const auto& req = p.c.request;
  results::Entry e;
  e.record = &r;
  e.index = index;
  e.repetition = p.repetition;
  e.key = p.key;
  e.label = p.label();
  e.scenario = p.scenario;
  e.model = p.c.task.empty() ? (p.c.model.empty() ? p.c.model_file : p.c.model)
                             : p.c.task;
  e.backend = req.backend;
  e.precision = req.options.precision;
  e.mode = backend::mode_name(req.mode);
  e.batch = req.batch;
  e.threads = req.options.threads;
  return e;
}

results::Entry entry_of(const ResultRow& row, const results::Record& r) {
  results::Entry e;
  e.record = &r;
  e.index = row.index;
  e.repetition = row.repetition;
  e.key = row.key;
  e.label = row.label;
  e.scenario = row.scenario;
  e.model = row.model;
  e.backend = row.backend;
  e.precision = row.precision;
  e.mode = row.mode;
  e.batch = row.batch;
  e.threads = row.threads;
  return e;
}

std::string price_note_of(const nlohmann::json& cost) {
  if (!cost.is_object()) return "";
  return cost.value("price_source", std::string()) + "; relative to " +
         cost.value("baseline", std::string());
}

ResultRow result_row(const results::Entry& e) {
  const results::Record& r = *e.record;
  const results::Headline h = r.headline();
  ResultRow row;
  row.index = e.index;
  row.key = e.key;
  row.label = e.label;
  row.scenario = e.scenario;
  row.model = e.model;
  row.backend = e.backend;
  row.precision = e.precision;
  row.mode = e.mode;
  row.batch = e.batch;
  row.threads = e.threads;
  row.repetition = e.repetition;
  row.state = results::state_name(r.state);
  row.valid = r.validity.valid();
  row.median_seconds = h.median_seconds;
  row.samples_per_second = h.samples_per_second;
  row.created_utc = results::utc_now_iso8601();
  row.record = r.serialize();
  return row;
}

void Store::add_result(const std::string& run_id, const results::Entry& e) {
  // Fault injection for the tests of a store that fails mid-run (as a
  // read-only, full or damaged one does): NNBENCH_FAULT_STORE=N makes the
  // N-th result this process stores (1-based) fail.
  static int stored = 0;
  ++stored;
  if (const char* n = std::getenv("NNBENCH_FAULT_STORE");
      n && std::atoi(n) == stored)
    throw StoreError(path_ +
                     ": results store: storing a result: injected "
                     "fault (NNBENCH_FAULT_STORE)");
  const ResultRow row = result_row(e);
  return guarded("storing a result",
                 [&] { insert_result(run_id, row, "INSERT OR REPLACE"); });
}

void Store::insert_result(const std::string& run_id, const ResultRow& r,
                          const char* verb) {
  SQLite::Statement q(
      db_, std::string(verb) +
               " INTO results (run_id, case_index, case_key, label, "
               "scenario, model, backend, precision, mode, batch, threads, "
               "repetition, state, valid, median_seconds, samples_per_second, "
               "record, created_utc) "
               "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  q.bind(1, run_id);
  q.bind(2, r.index);
  q.bind(3, r.key);
  q.bind(4, r.label);
  q.bind(5, r.scenario);
  q.bind(6, r.model);
  q.bind(7, r.backend);
  q.bind(8, r.precision);
  q.bind(9, r.mode);
  q.bind(10, r.batch);
  q.bind(11, r.threads);
  q.bind(12, r.repetition);
  q.bind(13, r.state);
  q.bind(14, r.valid ? 1 : 0);
  // Not measured: NULL, never 0.
  if (r.median_seconds > 0)
    q.bind(15, r.median_seconds);
  else
    q.bind(15);
  if (r.samples_per_second > 0)
    q.bind(16, r.samples_per_second);
  else
    q.bind(16);
  q.bind(17, r.record.dump());
  q.bind(18, r.created_utc);
  q.exec();
}

std::set<std::string> Store::stored_keys(const std::string& run_id) {
  return guarded("reading stored cases", [&] {
    SQLite::Statement q(db_, "SELECT case_key FROM results WHERE run_id = ?");
    q.bind(1, run_id);
    std::set<std::string> out;
    while (q.executeStep()) out.insert(q.getColumn(0).getString());
    return out;
  });
}

RunRow Store::row_of(SQLite::Statement& q) {
  RunRow r;
  r.id = q.getColumn(0).getString();
  r.suite = q.getColumn(1).getString();
  r.suite_file = q.getColumn(2).getString();
  r.created_utc = q.getColumn(3).getString();
  r.finished_utc = q.getColumn(4).isNull() ? "" : q.getColumn(4).getString();
  r.command = q.getColumn(5).getString();
  r.environment = nlohmann::json::parse(q.getColumn(6).getString());
  r.peak = nlohmann::json::parse(q.getColumn(7).getString());
  r.options = nlohmann::json::parse(q.getColumn(8).getString());
  r.cases = q.getColumn(9).getInt();
  r.stored = q.getColumn(10).getInt();
  return r;
}

namespace {
const char* kRunColumns =
    "SELECT id, suite, suite_file, created_utc, finished_utc, command, "
    "environment, peak, options, cases, (SELECT COUNT(*) FROM results WHERE "
    "results.run_id = runs.id) FROM runs";
}

std::vector<RunRow> Store::runs() {
  return guarded("listing runs", [&] {
    SQLite::Statement q(db_,
                        std::string(kRunColumns) + " ORDER BY created_utc");
    std::vector<RunRow> out;
    while (q.executeStep()) out.push_back(row_of(q));
    return out;
  });
}

std::optional<RunRow> Store::run(const std::string& id) {
  return guarded("reading a run", [&]() -> std::optional<RunRow> {
    SQLite::Statement q(db_, std::string(kRunColumns) + " WHERE id = ?");
    q.bind(1, id);
    if (!q.executeStep()) return std::nullopt;
    return row_of(q);
  });
}

std::optional<std::string> Store::run_digest(const std::string& id) {
  return guarded("reading a run's digest", [&]() -> std::optional<std::string> {
    SQLite::Statement q(db_, "SELECT sha256 FROM run_digests WHERE run_id = ?");
    q.bind(1, id);
    if (!q.executeStep()) return std::nullopt;
    return q.getColumn(0).getString();
  });
}

void Store::set_run_digest(const std::string& id, const std::string& sha256) {
  guarded("storing a run's digest", [&] {
    SQLite::Statement q(
        db_,
        "INSERT OR REPLACE INTO run_digests (run_id, sha256) VALUES (?, ?)");
    q.bind(1, id);
    q.bind(2, sha256);
    q.exec();
  });
}

std::vector<ResultRow> Store::results(const std::string& run_id) {
  return guarded("reading results", [&] {
    SQLite::Statement q(
        db_,
        "SELECT case_index, case_key, label, scenario, model, backend, "
        "precision, mode, batch, threads, repetition, state, valid, "
        "median_seconds, samples_per_second, record, created_utc FROM results "
        "WHERE "
        "run_id = ? ORDER BY case_index");
    q.bind(1, run_id);
    std::vector<ResultRow> out;
    while (q.executeStep()) {
      ResultRow r;
      r.index = q.getColumn(0).getInt();
      r.key = q.getColumn(1).getString();
      r.label = q.getColumn(2).getString();
      r.scenario = q.getColumn(3).getString();
      r.model = q.getColumn(4).getString();
      r.backend = q.getColumn(5).getString();
      r.precision = q.getColumn(6).getString();
      r.mode = q.getColumn(7).getString();
      r.batch = q.getColumn(8).getInt64();
      r.threads = q.getColumn(9).getInt();
      r.repetition = q.getColumn(10).getInt();
      r.state = q.getColumn(11).getString();
      r.valid = q.getColumn(12).getInt() != 0;
      r.median_seconds =
          q.getColumn(13).isNull() ? 0 : q.getColumn(13).getDouble();
      r.samples_per_second =
          q.getColumn(14).isNull() ? 0 : q.getColumn(14).getDouble();
      r.record = nlohmann::json::parse(q.getColumn(15).getString());
      r.created_utc = q.getColumn(16).getString();
      out.push_back(std::move(r));
    }
    return out;
  });
}

void Store::insert_run(const RunRow& run, const std::vector<ResultRow>& results,
                       const std::vector<DerivedRow>& derived) {
  return guarded("importing a run", [&] {
    // A savepoint: inside atomically()'s transaction it nests.
    SQLite::Savepoint t(db_, "insert_run");
    SQLite::Statement q(db_,
                        "INSERT INTO runs (id, suite, suite_file, created_utc, "
                        "finished_utc, command, environment, peak, options, "
                        "cases) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    q.bind(1, run.id);
    q.bind(2, run.suite);
    q.bind(3, run.suite_file);
    q.bind(4, run.created_utc);
    if (run.finished_utc.empty())
      q.bind(5);
    else
      q.bind(5, run.finished_utc);
    q.bind(6, run.command);
    q.bind(7, run.environment.dump());
    q.bind(8, run.peak.dump());
    q.bind(9, run.options.dump());
    q.bind(10, run.cases);
    q.exec();
    for (const auto& r : results) insert_result(run.id, r, "INSERT");
    insert_derived(run.id, derived);
    t.release();
  });
}

void Store::atomically(const std::function<void()>& f) {
  std::optional<SQLite::Transaction> t;
  guarded("starting a transaction", [&] { t.emplace(db_); });
  f();  // its own errors pass as they are; the transaction rolls back
  guarded("committing", [&] { t->commit(); });
}

void Store::insert_derived(const std::string& run_id,
                           const std::vector<DerivedRow>& rows) {
  for (const auto& r : rows) {
    SQLite::Statement q(db_,
                        "INSERT INTO derived (run_id, name, grp, x, value) "
                        "VALUES (?, ?, ?, ?, ?)");
    q.bind(1, run_id);
    q.bind(2, r.name);
    q.bind(3, r.group);
    q.bind(4, r.x);
    q.bind(5, r.value);
    q.exec();
  }
}

void Store::set_derived(const std::string& run_id,
                        const std::vector<DerivedRow>& rows) {
  return guarded("storing derived figures", [&] {
    SQLite::Transaction t(db_);
    SQLite::Statement del(db_, "DELETE FROM derived WHERE run_id = ?");
    del.bind(1, run_id);
    del.exec();
    insert_derived(run_id, rows);
    t.commit();
  });
}

std::vector<DerivedRow> Store::derived(const std::string& run_id) {
  return guarded("reading derived figures", [&] {
    SQLite::Statement q(
        db_,
        "SELECT name, grp, x, value FROM derived WHERE run_id = "
        "? ORDER BY rowid");
    q.bind(1, run_id);
    std::vector<DerivedRow> out;
    while (q.executeStep())
      out.push_back({q.getColumn(0).getString(), q.getColumn(1).getString(),
                     q.getColumn(2).getDouble(), q.getColumn(3).getDouble()});
    return out;
  });
}

std::string Store::integrity_check() {
  return guarded("checking integrity", [&] {
    return db_.execAndGet("PRAGMA integrity_check").getString();
  });
}

}  // namespace nnbench::study
