#include "reporters/json_file.h"

#include "util/atomic_file.h"

namespace nnbench::reporters {

void JsonFile::begin(const results::ReportContext& c) {
  report_.environment = c.environment;
  report_.peak = c.peak;
}

void JsonFile::record(const results::Entry& e) { report_.add(*e.record); }

void JsonFile::end(const results::Ending& e) {
  report_.derived = results::to_json(e.derived);
  report_.price_note = e.price_note;
  if (!path_.empty()) write_results_file(path_, report_);
}

void write_results_file(const std::string& path, results::Report report) {
  report.created_utc = results::utc_now_iso8601();
  util::write_file_atomically(path, results::to_json(report).dump(2) + "\n");
}

}  // namespace nnbench::reporters
