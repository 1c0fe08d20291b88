#include "cli/app.h"

#include <fmt/core.h>

#include <cstdlib>
#include <map>

#include "cli/commands.h"
#include "study/store.h"
#include "util/error.h"
#include "util/lifeline.h"

namespace nnbench::cli {

namespace {

// The first word that is neither an option nor an option's value, at each
// level of subcommands, must name a subcommand where one is required:
// otherwise CLI11 says only "A subcommand is required". "" when all do.
std::string unknown_command(const CLI::App& app, int argc, char** argv) {
  const CLI::App* at = &app;
  std::string path = "nnbench";
  for (int i = 1; i < argc; ++i) {
    const std::string w = argv[i];
    if (w == "--") break;
    if (w.size() > 1 && w[0] == '-') {
      if (w.find('=') != std::string::npos) continue;
      const CLI::Option* o = nullptr;
      for (const CLI::App* up = at; up && !o; up = up->get_parent())
        o = up->get_option_no_throw(w);
      if (o && o->get_items_expected_min() > 0) ++i;  // its value
      continue;
    }
    const auto subs = at->get_subcommands({});
    if (subs.empty()) break;  // positionals of a leaf command
    const CLI::App* next = nullptr;
    for (const auto* s : subs)
      if (s->check_name(w)) next = s;
    if (!next) {
      std::string known;
      for (const auto* s : subs)
        if (!s->get_group().empty())
          known += (known.empty() ? "" : ", ") + s->get_name();
      return "unknown command '" + w + "' for " + path +
             " (commands: " + known + ")";
    }
    at = next;
    path += " " + w;
  }
  return "";
}

// Every subcommand with its one-line help, in the order --help lists them.
std::map<CLI::App*, Action> add_commands(CLI::App& app) {
  const struct {
    const char* name;
    const char* help;
    Action (*add)(CLI::App&);
  } commands[] = {
      {"run", "Benchmark one model on one backend", add_run},
      {"suite", "Run a study: a grid of cases from a suite file, each isolated",
       add_suite},
      {"models", "List the model zoo", add_models},
      {"train", "Train on real data: time to accuracy, whole runs, cost",
       add_train},
      {"infer",
       "Inference under MLPerf's LoadGen: its four scenarios, VALID or not, "
       "accuracy mode",
       add_infer},
      {"generate",
       "Generation token by token: time to first token, per output token, "
       "fraction of the memory-bandwidth ceiling",
       add_generate},
      {"verify", "Check backends against the reference on the same batch",
       add_verify},
      {"env", "Show the measured environment", add_env},
      {"results", "What the results store holds", add_results},
      {"compare", "Compare two runs or results files, case by case",
       add_compare},
      {"report", "Write an HTML report (charts and tables) of runs or files",
       add_report},
      {"slurm", "Run a study as a Slurm job array and gather its shards",
       add_slurm},
      {"data", "The training datasets: where each is, and a checked download",
       add_data},
  };
  std::map<CLI::App*, Action> actions;
  for (const auto& c : commands) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    actions[sub] = c.add(*sub);
  }
  CLI::App* one_case = app.add_subcommand("case", "");  // the suite's child
  one_case->group("");
  actions[one_case] = add_case(*one_case);
  return actions;
}

}  // namespace

int main(int argc, char** argv) {
  // Every command: an interrupt ends its children and removes its files
  // (util/lifeline.h).
  util::lifeline::install();
  // A rank started by nnbench's launcher: when a signal ends it (its
  // launcher died, or was interrupted), the launcher's folder goes too.
  if (const char* dir = std::getenv("NNBENCH_LAUNCH_DIR"); dir && *dir) {
    const char* owner = std::getenv("NNBENCH_LAUNCHER_PID");
    util::lifeline::install();
    util::lifeline::remove_tree_on_signal(dir, owner ? std::atoi(owner) : 0);
    util::lifeline::release();  // held since the launcher's fork
  }
  CLI::App app{
      "nnbench: deep-learning benchmarks with honest statistics.\n"
      "Exit codes: 0 ok, 1 a run ended in a state other than ok, 2 usage or "
      "input error, 3 the results store or a file could not be read or "
      "written."};
  app.require_subcommand(1);
  // A parent's options are accepted after a subcommand's name, as git does:
  // `nnbench results list --db r.db` as `nnbench results --db r.db list`.
  app.fallthrough();
  // Every command's record, and its children's (cases, ranks), then names
  // no host: NNBENCH_ANONYMOUS in the environment they inherit.
  bool anonymous = false;
  app.add_flag("--anonymous", anonymous,
               "Record no host name, not even hashed (runs otherwise record "
               "the SHA-256 of the host name, to tell machines apart)");
  const std::map<CLI::App*, Action> actions = add_commands(app);
  if (const std::string why = unknown_command(app, argc, argv); !why.empty()) {
    fmt::print(stderr, "nnbench: error: {}\n", why);
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  if (anonymous) setenv("NNBENCH_ANONYMOUS", "1", 1);
  // Every error that reaches here is one message and a documented code,
  // never std::terminate.
  try {
    for (auto& [sub, action] : actions)
      if (sub->parsed()) return action();
  } catch (const Error& e) {
    fmt::print(stderr, "nnbench: error: {}\n", e.what());
    return kExitUsage;
  } catch (const util::lifeline::Interrupted& e) {
    // The children have ended; this process's files go, then the
    // conventional code of a process ended by that signal.
    util::lifeline::cleanup();
    if (!util::lifeline::note().empty())
      fmt::print(stderr, "{}\n", util::lifeline::note());
    return 128 + e.signal();
  } catch (const study::StoreError& e) {
    fmt::print(stderr, "nnbench: error: {}\n", e.what());
    return kExitIo;
  } catch (const std::exception& e) {
    fmt::print(stderr, "nnbench: error: {}\n", e.what());
    return kExitIo;
  }
  return kExitUsage;
}

}  // namespace nnbench::cli
