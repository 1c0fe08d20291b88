#include "reporters/sqlite.h"

namespace nnbench::reporters {

template <typename F>
void Sqlite::guarded(const char* what, const F& write) {
  if (run_id_.empty() || !error_.empty()) return;
  try {
    write();
  } catch (const study::StoreError& e) {
    error_ = e.what();
    if (on_error_) on_error_(std::string(what) + " failed: " + error_);
  }
}

void Sqlite::record(const results::Entry& e) {
  if (e.resumed) return;
  guarded("storing a result", [&] { store_.add_result(run_id_, e); });
}

void Sqlite::end(const results::Ending& e) {
  if (e.interrupted) return;
  guarded("storing the derived figures", [&] {
    store_.set_derived(run_id_, e.derived);
    store_.finish_run(run_id_);
  });
}

}  // namespace nnbench::reporters
