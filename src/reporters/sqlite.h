#pragma once
// The results store (SQLite, study/store.h): each record committed as it
// ends, the run's derived figures and its end when the run finishes. The
// run itself is begun by whoever plans it (its id is in the context). A
// store that fails never costs a record elsewhere: this reporter says why
// once, through `on_error`, and stores nothing more.
#include <functional>
#include <string>

#include "results/reporter.h"
#include "study/store.h"

namespace nnbench::reporters {

class Sqlite : public results::Reporter {
 public:
  Sqlite(study::Store& store, std::function<void(const std::string&)> on_error)
      : store_(store), on_error_(std::move(on_error)) {}
  void begin(const results::ReportContext& c) override { run_id_ = c.run_id; }
  // A resumed entry is in the store already.
  void record(const results::Entry& e) override;
  // Stores the derived figures and finishes the run, unless a signal ended
  // it (the run stays unfinished, to be resumed).
  void end(const results::Ending& e) override;
  // The first failure; "" none.
  const std::string& error() const { return error_; }
  // The store failed elsewhere (reading a resumed run back): nothing more
  // is stored. Says nothing (whoever found it did).
  void give_up(const std::string& why) {
    if (error_.empty()) error_ = why;
  }

 private:
  template <typename F>
  void guarded(const char* what, const F& write);

  study::Store& store_;
  std::function<void(const std::string&)> on_error_;
  std::string run_id_, error_;
};

}  // namespace nnbench::reporters
