#include "reporters/console.h"

#include <fmt/core.h>

#include "reporters/tables.h"

namespace nnbench::reporters {

void Console::record(const results::Entry& e) {
  report::add_record(seen_, *e.record);
}

std::string Console::text() const {
  std::string out;
  if (!seen_.runs.empty() ||
      (seen_.training.empty() && seen_.inference.empty() &&
       seen_.generation.empty()))
    out += results_table(seen_.runs) + not_run_lines(seen_.runs) +
           verdict_lines(seen_.runs);
  if (!seen_.training.empty()) out += training_table(seen_.training);
  if (!seen_.inference.empty())
    out += inference_table(seen_.inference) + loadgen_verdict(seen_.inference);
  if (!seen_.generation.empty())
    out += generation_table(seen_.generation) +
           generation_verdict(seen_.generation);
  return out;
}

void Console::end(const results::Ending& e) {
  if (!e.interrupted) fmt::print(out_, "{}", text());
}

}  // namespace nnbench::reporters
