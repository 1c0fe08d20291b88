#pragma once
// The command line. Exit codes: 0 success; 1 a run finished in a state other
// than ok (its result is still written); 2 usage or input error; 3 the
// results store or a file could not be read or written (read-only, full,
// damaged), or another error outside nnbench's own checks.
namespace nnbench::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitRunNotOk = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitIo = 3;

int main(int argc, char** argv);

}  // namespace nnbench::cli
