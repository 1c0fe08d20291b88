#pragma once
// Environment variables that settings of nnbench's own process imply for
// the programs it starts (a framework's worker): machine/env_fixes records
// them as it applies a fix, the worker backend passes them on. Here in
// util so that both layers reach it.
#include <map>
#include <string>

namespace nnbench::util {

void set_child_env(const std::string& name, const std::string& value);
std::map<std::string, std::string> child_env();

}  // namespace nnbench::util
