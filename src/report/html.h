#pragma once
// Text that goes into the report's HTML: everything from a result or a
// model file passes through these, so a model named "<script>..." is text.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace nnbench::report {

// &, <, >, " and ' as entities: safe in element text and quoted attributes.
std::string escape_html(const std::string& s);

// JSON for a <script type="application/json"> block: <, > and & as \u
// escapes (no "</script>" can close the block early), and U+2028/U+2029
// escaped for old JavaScript parsers.
std::string json_for_script(const nlohmann::json& j);

// A table of escaped cells; numbers right-aligned unless `align_numbers`
// is false; no header row when every header is empty.
std::string html_table(const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows,
                       bool align_numbers = true);

}  // namespace nnbench::report
