// `nnbench verify`: every built backend against the reference on one batch.
#include <fmt/core.h>

#include <cmath>
#include <sstream>

#include "backend/registry.h"
#include "cli/app.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/session.h"
#include "results/limits.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/text.h"
#include "util/text_table.h"
#include "verify/verify.h"

namespace nnbench::cli {
namespace {

struct VerifyArgs {
  std::string model, model_file, backends, out;
  verify::VerifyOptions options;
  bool verbose = false;
};

std::vector<std::string> candidates(const std::string& list) {
  std::vector<std::string> out;
  if (list.empty()) {
    for (const auto& n : backend::backend_names()) {
      if (n == backend::kOracle) continue;
      const std::string why = backend::make_backend(n)->describe().unavailable;
      if (why.empty())
        out.push_back(n);
      else
        fmt::print(stderr, "nnbench: {} not checked: {}\n", n, why);
    }
    return out;
  }
  std::stringstream in(list);
  for (std::string n; std::getline(in, n, ',');) {
    backend::make_ready_backend(n);  // unknown or not set up: usage errors
    out.push_back(n);
  }
  return out;
}

// The largest error of each kind of check, so a PASS shows its margin.
void print_verification(const verify::Verification& v, bool verbose) {
  fmt::print("{} vs {}: {} {} batch {}: {}{}\n", v.candidate, v.oracle, v.model,
             v.precision, v.batch, verify::verdict_name(v.verdict),
             v.message.empty() ? "" : " (" + v.message + ")");
  util::Table t({"check", "max rel error", "tolerance", "result"});
  std::map<std::string, const verify::TensorCheck*> worst;
  for (const auto& c : v.checks) {
    const std::string kind = c.what.substr(0, c.what.find(' '));
    if (verbose || !c.pass) {
      t.add({c.what, fmt::format("{:.3g}", c.error),
             fmt::format("{:.0e}", c.tolerance), c.pass ? "pass" : "FAIL"});
    } else if (!worst[kind] || c.error > worst[kind]->error) {
      worst[kind] = &c;
    }
  }
  for (const auto& [kind, c] : worst)
    t.add({"max over " + util::plural_of(kind) + " (" + c->what + ")",
           fmt::format("{:.3g}", c->error), fmt::format("{:.0e}", c->tolerance),
           "pass"});
  if (!v.checks.empty()) fmt::print("{}", t.str());
  if (v.agreement)
    fmt::print(
        "agreement with fp32 over {} output rows: top-1 {:.2f} %, mean KL "
        "{:.3g} nats (stated, not judged)\n",
        v.agreement->rows, v.agreement->top1 * 100, v.agreement->kl);
  if (v.generation_agreement)
    fmt::print(
        "generation's agreement with fp32 over {} steps' rows: next token "
        "{:.2f} %, mean KL {} (stated, not judged)\n",
        v.generation_agreement->rows, v.generation_agreement->top1 * 100,
        std::isfinite(v.generation_agreement->kl)
            ? fmt::format("{:.3g} nats", v.generation_agreement->kl)
            : std::string("- (no logits)"));
}

int verify_command(VerifyArgs& a) {
  const model::Model m = resolve_model(a.model, a.model_file);
  const auto names = candidates(a.backends);
  if (!a.out.empty()) util::check_writable(a.out);
  auto oracle = backend::make_backend(backend::kOracle);
  nlohmann::json all = nlohmann::json::array();
  bool failed = false;
  for (const auto& name : names) {
    auto candidate = backend::make_ready_backend(name);
    const auto v = verify::verify(*oracle, *candidate, m, a.options);
    print_verification(v, a.verbose);
    failed |= v.verdict == verify::Verdict::kFail;
    all.push_back(results::to_json(v));
  }
  if (!a.out.empty()) util::write_file_atomically(a.out, all.dump(2) + "\n");
  return failed ? kExitRunNotOk : kExitOk;
}

}  // namespace

Action add_verify(CLI::App& app) {
  auto a = std::make_shared<VerifyArgs>();
  app.add_option("--model", a->model, "Zoo model name");
  app.add_option("--model-file", a->model_file, "Model description (JSON)");
  app.add_option("--backends", a->backends,
                 "Comma-separated backends to check (default: every built "
                 "backend but the reference)");
  app.add_option("--batch", a->options.batch, "Batch size")
      ->check(positive(results::kMaxBatch))
      ->capture_default_str();
  // Device and precision are the checked backends'; the oracle runs fp32
  // on the CPU.
  add_shared_options(app, {nullptr, &a->options.device, &a->options.threads,
                           &a->options.seed, &a->options.precision});
  app.add_flag("--verbose", a->verbose, "List every checked tensor");
  app.add_option("--out", a->out, "Write the verification as JSON");
  return [a] { return verify_command(*a); };
}

}  // namespace nnbench::cli
