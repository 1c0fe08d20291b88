#pragma once
// The command line. Exit codes: 0 success; 1 a run finished in a state other
// than ok (its result is still written); 2 usage or input error.
namespace nnbench::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitRunNotOk = 1;
inline constexpr int kExitUsage = 2;

int main(int argc, char** argv);

}  // namespace nnbench::cli
