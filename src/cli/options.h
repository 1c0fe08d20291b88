#pragma once
// Options shared by `run` and `suite`: how to measure, on what.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "results/request.h"

namespace nnbench::cli {

// Number checks whose messages read as sentences ("--threads: must be at
// most 1024 (the bound), not 65536"), instead of CLI11's "Value 0 not in
// range 0.000000 to 1.79e308". Every number a user gives has an upper
// bound (results/limits.h): --help shows the range after the type
// (INT:[0, 1024]) and the value is checked before anything runs.
CLI::Validator bounded(double lo, double hi, bool lo_open = false);
CLI::Validator positive(double hi);      // (0, hi]
CLI::Validator non_negative(double hi);  // [0, hi]

// The settings every command that runs a backend shares, declared here
// once with one help text each; a command binds those it offers to its own
// settings (nullptr: not offered). The values are the requests: the
// harness resolves them (threads 0 -> the usable CPUs) and records both.
struct SharedOptions {
  std::string* backend = nullptr;
  std::string* device = nullptr;
  int* threads = nullptr;
  uint64_t* seed = nullptr;
  std::string* precision = nullptr;
};
void add_shared_options(CLI::App& app, const SharedOptions& s);

// The shared options bound to a request, and the warm-up, stopping and
// contention rules (run and suite).
void add_measurement_options(CLI::App& app, results::RunRequest& r);
// --contention-max-load and --contention-max-steal (run, suite and train).
void add_contention_rule(CLI::App& app, results::ContentionRule& rule);

}  // namespace nnbench::cli
