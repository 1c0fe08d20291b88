#pragma once
// Whether a result can be trusted, apart from its state: a run can finish
// (state ok) and still be invalid, e.g. because its threads did not get
// their CPUs. Reasons are an open list; later checks add their own.
#include <string>
#include <vector>

namespace nnbench::results {

struct Invalidity {
  std::string reason;  // short and stable, e.g. "contended"
  std::string detail;  // the figures that decided it
};

struct Validity {
  std::vector<Invalidity> reasons;
  bool valid() const { return reasons.empty(); }
  void add(std::string reason, std::string detail) {
    reasons.push_back({std::move(reason), std::move(detail)});
  }
  // "valid", or the reasons joined: "invalid: contended".
  std::string summary() const;
  // Whether it makes its command fail (exit 1): any reason does, but
  // "contended" not when the policy is to warn (record it and go on).
  bool fails(bool warn_on_contention) const {
    for (const auto& r : reasons)
      if (r.reason != "contended" || !warn_on_contention) return true;
    return false;
  }
};

}  // namespace nnbench::results
