#pragma once
// LoadGen runs (results/inference.h) as text: a table for a suite, the
// records read back from a report's JSON.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "results/inference.h"

namespace nnbench::cli {

// One row per run: the scenario's figure (p90/p99 latency with its
// interval, or samples/s), LoadGen's verdict, accuracy where scored.
std::string inference_table(const std::vector<results::InferenceRun>& runs);

}  // namespace nnbench::cli
