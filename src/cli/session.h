#pragma once
// Shared by the commands that measure: the environment, the peak, and
// writing a results file.
#include <string>
#include <vector>

#include "machine/environment.h"
#include "machine/peak.h"
#include "model/model.h"
#include "results/result.h"

namespace nnbench::cli {

// The model named by --model or read from --model-file (exactly one).
model::Model resolve_model(const std::string& name, const std::string& file);

// Captures the environment (with every built backend as it describes
// itself) and prints its warnings to stderr.
machine::Environment capture_and_warn();

// The practical peaks on `threads` threads (OpenBLAS's SGEMM and every
// built backend's GEMMs, the best per precision) and, given the CPU, the
// theoretical one.
machine::Peak measure_peak(int threads, const machine::Cpu* cpu);

// Writes a results file atomically (nothing half-written on failure).
void write_results_file(const std::string& path, results::Report report);
// The same from its parts.
void write_report(const std::string& path, const machine::Environment& env,
                  const machine::Peak& peak,
                  const std::vector<results::RunResult>& runs,
                  const std::vector<results::TrainRun>& training = {});

// One progress line per finished run, on stderr.
void print_progress(const results::RunResult& r);
// Whether an invalid result changes the exit code: it does unless the
// contention policy was `warn`.
bool invalid_counts(const results::RunResult& r);

}  // namespace nnbench::cli
