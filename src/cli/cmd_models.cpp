// `nnbench models`: the zoo, and exporting a zoo model as an editable file.
#include <fmt/core.h>

#include "cli/app.h"
#include "cli/commands.h"
#include "cli/table.h"
#include "model/analysis.h"
#include "model/model_file.h"
#include "model/zoo/zoo.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace nnbench::cli {
namespace {

struct ModelsArgs {
  bool json = false;
  std::string export_name, out;
};

std::string input_str(const model::Model& m) {
  std::string s = model::shape_str(m.input.shape);
  if (m.input.dtype == model::DType::kInt64)
    s += " ids<" + std::to_string(m.input.vocab);
  return s;
}

int list_models(bool as_json) {
  Table t({"name", "study", "input", "parameters", "fwd GFLOP/sample"});
  nlohmann::json j = nlohmann::json::array();
  for (const auto& e : model::zoo::entries()) {
    const model::Model m = e.build();
    const model::Cost c = model::analyze(m);
    t.add({m.name, m.study, input_str(m), std::to_string(c.params),
           fmt::format("{:.4g}", c.forward_flops / 1e9)});
    j.push_back({{"name", m.name},
                 {"study", m.study},
                 {"source", m.source},
                 {"input", model::to_json(m)["input"]},
                 {"parameters", c.params},
                 {"forward_flops_per_sample", c.forward_flops},
                 {"hash", model::model_hash(m)}});
  }
  fmt::print("{}", as_json ? j.dump(2) + "\n" : t.str());
  return kExitOk;
}

int models_command(const ModelsArgs& a) {
  if (a.export_name.empty()) return list_models(a.json);
  if (a.out.empty()) throw Error("--export needs --out FILE");
  util::check_writable(a.out);
  model::save_model_file(model::zoo::get(a.export_name), a.out);
  fmt::print(stderr, "nnbench: wrote {}\n", a.out);
  return kExitOk;
}

}  // namespace

Action add_models(CLI::App& app) {
  auto a = std::make_shared<ModelsArgs>();
  app.add_flag("--json", a->json, "Print as JSON");
  app.add_option("--export", a->export_name,
                 "Write this zoo model's description to --out, to edit and "
                 "run with `nnbench run --model-file`");
  app.add_option("--out", a->out, "Output file for --export");
  return [a] { return models_command(*a); };
}

}  // namespace nnbench::cli
