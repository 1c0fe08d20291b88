#include "reporters/html.h"

#include <filesystem>

#include "report/page.h"
#include "util/atomic_file.h"

namespace nnbench::reporters {

void Html::begin(const results::ReportContext& c) {
  source_.name = c.run_id.empty() ? path_ : c.run_id;
  source_.label =
      c.run_id.empty()
          ? std::filesystem::path(path_).filename().string()
          : "run " + c.run_id + (c.suite.empty() ? "" : " (" + c.suite + ")");
  source_.environment = c.environment;
}

void Html::record(const results::Entry& e) {
  report::add_record(source_, *e.record);
}

void Html::end(const results::Ending& e) {
  if (e.interrupted) return;
  source_.derived = e.derived;
  source_.price_note = e.price_note;
  util::write_file_atomically(path_, report::render_page({source_}));
}

}  // namespace nnbench::reporters
