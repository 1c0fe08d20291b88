#pragma once
// Runs made on other machines, gathered into a store (study/transfer.h)
// and checked as one study (study/shard.h).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace nnbench::cli {

// The machine a run was made on, in a line: CPU, microarchitecture, CPUs,
// GPUs, cloud instance and the first digits of the host's hash; "-" where
// none is recorded.
std::string machine_text(const nlohmann::json& environment);

// `results import`: every file (a store or a run export) read and checked
// before anything is written to `db` ("" the default store); exit code.
int import_files(const std::vector<std::string>& files, const std::string& db);

// `results study`: the shards of study `name` in `db`, printed and
// checked (every shard once, all of one plan, each with all its cases);
// exit 1 naming what is missing.
int check_study(const std::string& db, const std::string& name);

}  // namespace nnbench::cli
