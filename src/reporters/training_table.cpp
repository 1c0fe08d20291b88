#include <fmt/core.h>

#include "reporters/tables.h"
#include "util/text_table.h"

namespace nnbench::reporters {

// Training cases: what the throughput table cannot show.
std::string training_table(const std::vector<results::TrainRun>& runs) {
  util::Table t({"task", "backend", "threads", "state", "validity", "epochs",
                 "train s", "to target s", "val accuracy"});
  for (const auto& r : runs) {
    // A run that trained no epoch (refused, unimplemented) measured
    // nothing: "-", never 0.0 or "valid".
    const bool ran = !r.epochs.empty();
    t.add({r.task, results::engine_label(r),
           r.effective.threads > 0 ? std::to_string(r.effective.threads) : "?",
           results::state_name(r.state), ran ? r.validity.summary() : "-",
           std::to_string(r.epochs.size()),
           ran ? fmt::format("{:.1f}", r.total_train_seconds) : "-",
           r.state == results::State::kConverged
               ? fmt::format("{:.1f}", r.time_to_target)
               : "-",
           !ran || r.synthetic_data
               ? "-"
               : fmt::format("{:.4f}", r.final_val_accuracy)});
  }
  return t.str();
}

}  // namespace nnbench::reporters
