#include "cli/app.h"

#include <fmt/core.h>

#include <map>

#include "cli/commands.h"
#include "util/error.h"

namespace nnbench::cli {

int main(int argc, char** argv) {
  CLI::App app{
      "nnbench: deep-learning benchmarks with honest statistics.\n"
      "Exit codes: 0 ok, 1 a run ended in a state other than ok, 2 usage or "
      "input error."};
  app.require_subcommand(1);
  std::map<CLI::App*, Action> actions;
  auto* run = app.add_subcommand("run", "Benchmark one model on one backend");
  actions[run] = add_run(*run);
  auto* suite = app.add_subcommand(
      "suite", "Run a study: a grid of cases from a suite file, each isolated");
  actions[suite] = add_suite(*suite);
  auto* models = app.add_subcommand("models", "List the model zoo");
  actions[models] = add_models(*models);
  auto* train = app.add_subcommand(
      "train", "Train on real data: time to accuracy, whole runs, cost");
  actions[train] = add_train(*train);
  auto* verify = app.add_subcommand(
      "verify", "Check backends against the reference on the same batch");
  actions[verify] = add_verify(*verify);
  auto* env = app.add_subcommand("env", "Show the measured environment");
  actions[env] = add_env(*env);
  auto* results = app.add_subcommand("results", "What the results store holds");
  actions[results] = add_results(*results);
  auto* compare = app.add_subcommand(
      "compare", "Compare two runs or results files, case by case");
  actions[compare] = add_compare(*compare);
  auto* report = app.add_subcommand(
      "report", "Write an HTML report (charts and tables) of runs or files");
  actions[report] = add_report(*report);
  auto* one_case = app.add_subcommand("case", "");  // the suite's child
  one_case->group("");
  actions[one_case] = add_case(*one_case);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  try {
    for (auto& [sub, action] : actions)
      if (sub->parsed()) return action();
  } catch (const Error& e) {
    fmt::print(stderr, "nnbench: error: {}\n", e.what());
    return kExitUsage;
  }
  return kExitUsage;
}

}  // namespace nnbench::cli
