#pragma once
// Shared by the commands that measure: the environment, the peak, and
// writing a results file.
#include <string>
#include <vector>

#include "machine/environment.h"
#include "machine/peak.h"
#include "model/model.h"
#include "results/reporter.h"
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

// What the reporters are told a command measures on.
results::ReportContext report_context(const machine::Environment& env,
                                      const machine::Peak& peak);
// Hands `records` to `to` as a whole run (begin, each record, end).
void report_records(results::Reporter& to, const results::ReportContext& c,
                    const std::vector<const results::Record*>& records);
// A results file of `runs` (reporters/json_file.h), written atomically.
void write_report(const std::string& path, const machine::Environment& env,
                  const machine::Peak& peak,
                  const std::vector<results::RunResult>& runs);

// One progress line per finished run, on stderr.
void print_progress(const results::RunResult& r);
// Whether an invalid result changes the exit code: it does unless the
// contention policy was `warn`.
bool invalid_counts(const results::RunResult& r);

}  // namespace nnbench::cli
