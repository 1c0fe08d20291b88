#include "reporters/csv.h"

#include <fmt/core.h>

namespace nnbench::reporters {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

void Csv::begin(const results::ReportContext&) {
  out_ +=
      "index,model,backend,precision,mode,batch,threads,repetition,state,"
      "valid,median_seconds,samples_per_second,case_key\n";
}

void Csv::record(const results::Entry& e) {
  const results::Record& r = *e.record;
  const results::Headline h = r.headline();
  out_ += fmt::format(
      "{},{},{},{},{},{},{},{},{},{},{},{},{}\n", e.index, csv_field(e.model),
      csv_field(e.backend), e.precision, e.mode, e.batch, e.threads,
      e.repetition, results::state_name(r.state), r.validity.valid() ? 1 : 0,
      h.median_seconds > 0 ? fmt::format("{:.9g}", h.median_seconds) : "",
      h.samples_per_second > 0 ? fmt::format("{:.6g}", h.samples_per_second)
                               : "",
      e.key);
}

}  // namespace nnbench::reporters
