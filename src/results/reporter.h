#pragma once
// One reporter interface over records, as google/benchmark has one
// BenchmarkReporter behind its console, JSON and CSV output: whatever
// measures (a suite, `nnbench run`, `infer`) tells every reporter what it
// runs on, hands it each record as it ends, and says when it is done. The
// console tables, the results file, CSV, markdown, the SQLite store and the
// HTML page are implementations (src/reporters/); none of them is called
// by name from the code that measures.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "results/record.h"

namespace nnbench::results {

// What every reporter is told before the first record.
struct ReportContext {
  nlohmann::json environment, peak;
  std::string suite, suite_file;  // "" outside a suite
  std::string run_id;             // "" when the run is not stored
  std::string command;
};

// One record and the case that measured it: the coordinates a row of a
// table or a store is keyed by. Outside a suite only `record` need be set.
struct Entry {
  const Record* record = nullptr;
  int index = 0;       // position in the plan
  int repetition = 0;  // of the same case
  std::string key, label, scenario, model, backend, precision, mode;
  int64_t batch = 0;
  int threads = 0;
  // Stored by an earlier invocation of a resumed run and read back: part
  // of the run's report, not to be stored again.
  bool resumed = false;
};

// A suite's derived figure: speed-up, efficiency, samples/s against batch,
// cost, the largest batch that fits. `group` names the cases it comes
// from, `x` its abscissa.
struct Figure {
  std::string name, group;
  double x = 0, value = 0;
};

// What every reporter is told after the last record.
struct Ending {
  std::vector<Figure> derived;
  std::string price_note;  // how costs were priced, when they were
  // A signal ended the run (its number; 0: it finished): a store keeps the
  // run unfinished, a console prints no verdict over half a study.
  int interrupted = 0;
};

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void begin(const ReportContext&) {}
  virtual void record(const Entry& e) = 0;
  virtual void end(const Ending&) {}
};

// Several reporters fed as one, in the order added.
class Reporters : public Reporter {
 public:
  void add(Reporter* r) {
    if (r) all_.push_back(r);
  }
  void begin(const ReportContext& c) override {
    for (auto* r : all_) r->begin(c);
  }
  void record(const Entry& e) override {
    for (auto* r : all_) r->record(e);
  }
  void end(const Ending& e) override {
    for (auto* r : all_) r->end(e);
  }

 private:
  std::vector<Reporter*> all_;
};

nlohmann::json to_json(const std::vector<Figure>& figures);
std::vector<Figure> figures_from_json(const nlohmann::json& j);

}  // namespace nnbench::results
