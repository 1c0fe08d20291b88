#include "distributed/check.h"

#include <cstdint>

#include "util/error.h"

namespace nnbench::distributed {

double hash32(const std::string& s) {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) {
    h ^= c;
    h *= 16777619u;
  }
  return static_cast<double>(h);
}

void check_same_config(Group& g, const std::vector<Field>& fields) {
  std::vector<double> mine;
  for (const auto& f : fields) mine.push_back(hash32(f.name + "=" + f.value));
  const auto all = g.allgather(mine);
  std::string diff;
  for (size_t i = 0; i < fields.size(); ++i) {
    std::string ranks;
    for (size_t r = 1; r < all.size(); ++r)
      if (all[r].at(i) != all[0].at(i))
        ranks += (ranks.empty() ? "" : ",") + std::to_string(r);
    if (ranks.empty()) continue;
    diff += (diff.empty() ? "" : "; ") + fields[i].name + " (rank " +
            std::to_string(g.rank()) + " has '" + fields[i].value +
            "'; rank(s) " + ranks + " differ from rank 0)";
  }
  if (!diff.empty())
    throw Error("ranks were started with different configurations: " + diff);
}

}  // namespace nnbench::distributed
