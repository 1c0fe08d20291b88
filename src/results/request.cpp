#include "results/request.h"

#include "util/error.h"

namespace nnbench::results {

std::string action_name(ContentionPolicy::Action a) {
  switch (a) {
    case ContentionPolicy::Action::kWarn:
      return "warn";
    case ContentionPolicy::Action::kFail:
      return "fail";
    default:
      return "retry";
  }
}

ContentionPolicy::Action action_from_name(const std::string& s) {
  if (s == "warn") return ContentionPolicy::Action::kWarn;
  if (s == "fail") return ContentionPolicy::Action::kFail;
  if (s == "retry") return ContentionPolicy::Action::kRetry;
  throw Error("unknown contention action '" + s + "'; known: warn fail retry");
}

}  // namespace nnbench::results
