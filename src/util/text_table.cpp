#include "util/text_table.h"

#include <algorithm>
#include <cctype>

namespace nnbench::util {
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

}  // namespace nnbench::util
