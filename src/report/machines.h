#pragma once
// The report's answer across machines: when its sources ran on more than
// one machine, "Which machine is fastest and cheapest for this job?" opens
// the page (compare/machines.h computes it).
#include <string>
#include <vector>

#include "report/source.h"

namespace nnbench::report {

// Empty when every source ran on one machine.
std::string machines_section(const std::vector<Source>& sources);

}  // namespace nnbench::report
