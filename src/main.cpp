#include "bench/env_fixes.h"
#include "cli/app.h"

int main(int argc, char** argv) {
  // Before anything loads OpenBLAS: may re-execute this binary once.
  nnbench::bench::apply_environment_fixes(argv);
  return nnbench::cli::main(argc, argv);
}
