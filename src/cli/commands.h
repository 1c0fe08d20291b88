#pragma once
// One function per subcommand: `add_*` declares its options on the app and
// returns the action to run once parsing succeeded.
#include <CLI/CLI.hpp>
#include <functional>

namespace nnbench::cli {

using Action = std::function<int()>;

Action add_run(CLI::App& app);
Action add_suite(CLI::App& app);
Action add_models(CLI::App& app);
Action add_env(CLI::App& app);
Action add_verify(CLI::App& app);
Action add_train(CLI::App& app);
Action add_infer(CLI::App& app);
Action add_generate(CLI::App& app);
Action add_results(CLI::App& app);
Action add_compare(CLI::App& app);
Action add_report(CLI::App& app);
Action add_case(CLI::App& app);
Action add_slurm(CLI::App& app);
Action add_data(CLI::App& app);

}  // namespace nnbench::cli
