#include "results/validity.h"

namespace nnbench::results {

std::string Validity::summary() const {
  if (valid()) return "valid";
  std::string out = "invalid:";
  for (size_t i = 0; i < reasons.size(); ++i)
    out += (i ? ", " : " ") + reasons[i].reason;
  return out;
}

}  // namespace nnbench::results
