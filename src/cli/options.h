#pragma once
// Options shared by `run` and `suite`: how to measure, on what.
#include <CLI/CLI.hpp>

#include "bench/run_config.h"

namespace nnbench::cli {

void add_measurement_options(CLI::App& app, bench::RunRequest& r);

}  // namespace nnbench::cli
