#include "report/html.h"

#include <cctype>

namespace nnbench::report {

std::string escape_html(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string json_for_script(const nlohmann::json& j) {
  const std::string text = j.dump();
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<')
      out += "\\u003c";
    else if (c == '>')
      out += "\\u003e";
    else if (c == '&')
      out += "\\u0026";
    else if (c == '\xe2' && i + 2 < text.size() && text[i + 1] == '\x80' &&
             (text[i + 2] == '\xa8' || text[i + 2] == '\xa9')) {
      out += text[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

bool numeric(const std::string& s) {
  return !s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) ||
                        (s[0] == '-' && s.size() > 1));
}

}  // namespace

std::string html_table(const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows,
                       bool align_numbers) {
  std::string out = "<table>";
  bool named = false;
  for (const auto& h : header) named = named || !h.empty();
  if (named) {
    out += "<tr>";
    for (const auto& h : header) out += "<th>" + escape_html(h) + "</th>";
    out += "</tr>\n";
  }
  for (const auto& r : rows) {
    out += "<tr>";
    for (const auto& c : r)
      out += (align_numbers && numeric(c) ? "<td class=\"n\">" : "<td>") +
             escape_html(c) + "</td>";
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

}  // namespace nnbench::report
