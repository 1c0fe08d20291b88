#pragma once
// Options shared by `run` and `suite`: how to measure, on what.
#include <CLI/CLI.hpp>

#include "results/request.h"

namespace nnbench::cli {

void add_measurement_options(CLI::App& app, results::RunRequest& r);
// --contention-max-load and --contention-max-steal (run, suite and train).
void add_contention_rule(CLI::App& app, results::ContentionRule& rule);

}  // namespace nnbench::cli
