// `nnbench report`: runs or results files as one self-contained HTML file.
#include <fmt/core.h>

#include "cli/app.h"
#include "cli/commands.h"
#include "cli/loaded.h"
#include "report/page.h"
#include "study/store.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace nnbench::cli {
namespace {

struct ReportArgs {
  std::vector<std::string> inputs;
  std::string out = "report.html", db;
};

int report_command(ReportArgs& a) {
  util::check_writable(a.out);
  if (a.inputs.empty()) {  // the latest stored run
    study::Store store(study::Store::path_or_default(a.db),
                       study::Store::Open::kExisting);
    const auto runs = store.runs();
    if (runs.empty())
      throw Error("no runs in the results store; name a run id or a file");
    a.inputs.push_back(runs.back().id);
  }
  std::vector<report::Source> sources;
  for (const auto& in : a.inputs) sources.push_back(load_results(in, a.db));
  util::write_file_atomically(a.out, report::render_page(sources));
  fmt::print("{}\n", a.out);
  return kExitOk;
}

}  // namespace

Action add_report(CLI::App& app) {
  auto a = std::make_shared<ReportArgs>();
  app.add_option("inputs", a->inputs,
                 "Run ids (the results store) or results files; default: "
                 "the latest stored run");
  app.add_option("-o,--out", a->out, "The HTML file to write")
      ->capture_default_str();
  app.add_option("--db", a->db, "Results store for run ids");
  return [a] { return report_command(*a); };
}

}  // namespace nnbench::cli
