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
};

}  // namespace nnbench::results
