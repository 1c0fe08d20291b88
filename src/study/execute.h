#pragma once
// Running one planned case: in this process, or in a child process of the
// same binary (`nnbench case`), whose death, hang or runaway allocation
// becomes the case's state instead of the suite's end.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "results/record.h"
#include "scenarios/scenario.h"
#include "study/child.h"
#include "study/plan.h"

namespace nnbench::study {

// In this process; never throws for the case's failures.
std::unique_ptr<results::Record> run_in_process(const PlannedCase& p,
                                                const scenarios::Context& ctx);

// In a child: `<self> case --in IN --out OUT`. A child that ends without a
// result becomes a record in state timeout, crashed or oom (with the signal
// or exit code and the last lines of its stderr).
std::unique_ptr<results::Record> run_isolated(const PlannedCase& p,
                                              const scenarios::Context& ctx,
                                              const ChildLimits& limits);

// The child's side: reads {"case", "peak"} from `in`, runs it in process,
// writes the record's JSON to `out` atomically. Returns the exit code: 0
// whenever a record was written, whatever its state.
int run_case_file(const std::string& in, const std::string& out);

// The record a case gets when its process ended without one.
std::unique_ptr<results::Record> record_of_child(const PlannedCase& p,
                                                 const ChildOutcome& o,
                                                 const ChildLimits& limits);

}  // namespace nnbench::study
