// docs/models.md is where users look a model up: every zoo model has its
// row in the table and its section, with the count the tests hold it to.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "../../common/zoo_counts.h"
#include "model/zoo/zoo.h"

namespace nnbench::model::zoo {
namespace {

std::string models_md() {
  std::ifstream in(std::string(NNBENCH_SOURCE_DIR) + "/docs/models.md");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// 62378344 -> "62,378,344", as the table writes counts.
std::string with_commas(int64_t n) {
  std::string d = std::to_string(n), out;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i > 0 && (d.size() - i) % 3 == 0) out += ',';
    out += d[i];
  }
  return out;
}

TEST(ZooDocs, EveryModelHasItsRowAndSection) {
  const std::string doc = models_md();
  ASSERT_FALSE(doc.empty()) << "docs/models.md not found";
  for (const auto& name : names()) {
    const Model m = get(name);
    const std::string row = "| " + name + " | " + m.study + " |";
    EXPECT_NE(doc.find(row), std::string::npos) << row;
    EXPECT_NE(doc.find("### " + name + "\n"), std::string::npos) << name;
    const std::string count =
        " | " + with_commas(test::zoo_expected().at(name).params) + " |";
    const size_t at = doc.find(row);
    if (at != std::string::npos) {
      const std::string line = doc.substr(at, doc.find('\n', at) - at);
      EXPECT_NE(line.find(count), std::string::npos) << line;
    }
  }
}

}  // namespace
}  // namespace nnbench::model::zoo
