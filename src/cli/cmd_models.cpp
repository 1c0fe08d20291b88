// `nnbench models`: the zoo, and exporting a zoo model as an editable file.
#include <fmt/core.h>

#include "backend/registry.h"
#include "cli/app.h"
#include "cli/commands.h"
#include "model/analysis.h"
#include "model/model_file.h"
#include "model/zoo/zoo.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/text_table.h"

namespace nnbench::cli {
namespace {

struct ModelsArgs {
  bool json = false;
  std::string export_name, onnx_name, out;
  uint64_t seed = 1;
};

std::string input_str(const model::Model& m) {
  std::string s = model::shape_str(m.input.shape);
  if (m.input.dtype == model::DType::kInt64)
    s += " ids<" + std::to_string(m.input.vocab);
  return s;
}

int list_models(bool as_json) {
  util::Table t({"name", "study", "input", "parameters", "fwd GFLOP/sample"});
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

// The ONNX graph with the seeded weights, as the onnxruntime engine runs
// it (frameworks/common/nnbench_onnx.py, in that engine's environment).
int export_onnx(const ModelsArgs& a) {
  if (a.out.empty()) throw Error("--export-onnx needs --out FILE");
  const model::Model m = model::zoo::get(a.onnx_name);
  util::check_writable(a.out);
  const std::string bytes = backend::make_ready_backend("onnxruntime")
                                ->write_model(m, a.seed, "onnx");
  util::write_file_atomically(a.out, bytes);
  fmt::print(stderr, "nnbench: wrote {} ({} bytes, seed {})\n", a.out,
             bytes.size(), a.seed);
  return kExitOk;
}

int models_command(const ModelsArgs& a) {
  if (!a.onnx_name.empty()) return export_onnx(a);
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
  auto* json = app.add_flag("--json", a->json, "Print as JSON");
  auto* exp =
      app.add_option("--export", a->export_name,
                     "Write this zoo model's description to --out, to edit "
                     "and run with `nnbench run --model-file`");
  auto* onnx = app.add_option("--export-onnx", a->onnx_name,
                              "Write this zoo model as an ONNX graph with its "
                              "seeded weights to --out (needs the onnxruntime "
                              "environment: scripts/setup onnxruntime)");
  // One output a call: together, one of them would be silently dropped.
  exp->excludes(onnx);
  json->excludes(exp)->excludes(onnx);
  app.add_option("--seed", a->seed,
                 "Seed of the weights for --export-onnx (0 to 2^64-1)")
      ->needs(onnx);
  app.add_option("--out", a->out, "Output file for --export, --export-onnx");
  return [a] { return models_command(*a); };
}

}  // namespace nnbench::cli
