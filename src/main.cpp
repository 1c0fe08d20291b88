#include "cli/app.h"
#include "machine/env_fixes.h"

int main(int argc, char** argv) {
  // Before anything loads OpenBLAS: may re-execute this binary once.
  nnbench::machine::apply_environment_fixes(argv);
  return nnbench::cli::main(argc, argv);
}
