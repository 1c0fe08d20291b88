// `nnbench case`: runs one case of a suite in this process and writes its
// record; the suite runner starts it as a child process (study/execute.h).
// Not meant for people: hidden from the help.
#include "cli/app.h"
#include "cli/commands.h"
#include "study/execute.h"

namespace nnbench::cli {

Action add_case(CLI::App& app) {
  auto in = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  app.add_option("--in", *in, "The case and the peak (JSON)")->required();
  app.add_option("--out", *out, "Where the record goes (JSON)")->required();
  return [in, out] { return study::run_case_file(*in, *out); };
}

}  // namespace nnbench::cli
