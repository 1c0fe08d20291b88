#include "results/reporter.h"

namespace nnbench::results {

nlohmann::json to_json(const std::vector<Figure>& figures) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : figures)
    out.push_back(
        {{"name", f.name}, {"group", f.group}, {"x", f.x}, {"value", f.value}});
  return out;
}

std::vector<Figure> figures_from_json(const nlohmann::json& j) {
  std::vector<Figure> out;
  if (!j.is_array()) return out;
  for (const auto& f : j)
    out.push_back({f.value("name", std::string()),
                   f.value("group", std::string()), f.value("x", 0.0),
                   f.value("value", 0.0)});
  return out;
}

}  // namespace nnbench::results
