#include "cli/table.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>

namespace nnbench::cli {
namespace {

bool numeric(const std::string& s) {
  return !s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) ||
                        (s[0] == '-' && s.size() > 1) || s[0] == '+');
}

std::string pad(const std::string& s, size_t w, bool right) {
  const std::string fill(w > s.size() ? w - s.size() : 0, ' ');
  return right ? fill + s : s + fill;
}

}  // namespace

std::string Table::str() const {
  std::vector<size_t> width(header_.size());
  for (size_t c = 0; c < header_.size(); ++c) width[c] = header_[c].size();
  for (const auto& r : rows_)
    for (size_t c = 0; c < r.size() && c < width.size(); ++c)
      width[c] = std::max(width[c], r[c].size());
  auto line = [&](const std::vector<std::string>& r, bool header) {
    std::string out;
    for (size_t c = 0; c < width.size(); ++c) {
      const std::string cell = c < r.size() ? r[c] : "";
      out += (c ? "  " : "") + pad(cell, width[c], !header && numeric(cell));
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(header_, true);
  size_t total = 0;
  for (auto w : width) total += w;
  out += std::string(total + 2 * (width.size() - 1), '-') + "\n";
  for (const auto& r : rows_) out += line(r, false);
  return out;
}

std::string results_table(const std::vector<results::RunResult>& runs) {
  Table t({"model", "backend", "mode", "batch", "state", "median ms",
           "95% CI ms", "cv %", "n", "samples/s", "GFLOP/s", "% peak"});
  for (const auto& r : runs) {
    std::vector<std::string> row = {
        r.model, r.backend, backend::mode_name(r.requested.mode),
        std::to_string(r.requested.batch), results::state_name(r.state)};
    if (r.state == results::State::kOk) {
      const auto& s = r.stats;
      row.insert(row.end(),
                 {fmt::format("{:.3f}", s.median * 1e3),
                  fmt::format("{:.3f}-{:.3f}", s.median_ci95.lo * 1e3,
                              s.median_ci95.hi * 1e3),
                  fmt::format("{:.1f}", s.cv * 100), std::to_string(s.n),
                  fmt::format("{:.1f}", r.samples_per_second),
                  fmt::format("{:.1f}", r.gflops),
                  fmt::format("{:.1f}", r.peak_fraction * 100)});
    }
    t.add(row);
  }
  return t.str();
}

}  // namespace nnbench::cli
