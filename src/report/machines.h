#pragma once
// The report's answer across machines: when its sources ran on more than
// one machine, "Which machine is fastest and cheapest for this job?" opens
// the page (compare/machines.h computes it). Up to kGridMachines machines
// get every job on every machine side by side; more (a public board of
// results) get each model's headline job ranked, the leading machines
// shown and the rest summarised, the whole ranking folded away.
#include <string>
#include <vector>

#include "compare/machines.h"
#include "report/source.h"

namespace nnbench::report {

inline constexpr size_t kGridMachines = 8;
// Rows of a ranking shown before the rest is summarised.
inline constexpr size_t kLeadingMachines = 10;

// fastest_machines over the sources' records.
compare::MachineAnswer machine_answer(const std::vector<Source>& sources);

// Empty when every source ran on one machine.
std::string machines_section(const compare::MachineAnswer& a);

// The sources the rest of the page details: all of them up to
// kGridMachines machines, else those of the kGridMachines leading ones.
std::vector<Source> shown_sources(const std::vector<Source>& sources,
                                  const compare::MachineAnswer& a);

}  // namespace nnbench::report
