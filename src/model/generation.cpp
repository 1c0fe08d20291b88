#include "model/generation.h"

#include <vector>

#include "model/analysis.h"
#include "model/params.h"
#include "util/error.h"

namespace nnbench::model {
namespace {

// Ops that work on each position alone, so that running only the new
// tokens gives the rows a whole sequence would.
bool per_position(Op op) {
  switch (op) {
    case Op::kEmbedding:
    case Op::kOneHot:
    case Op::kLinear:
    case Op::kLayerNorm:
    case Op::kGelu:
    case Op::kRelu:
    case Op::kSigmoid:
    case Op::kTanh:
    case Op::kSoftmax:
    case Op::kDropout:
    case Op::kAdd:
    case Op::kTiedLinear:
    case Op::kPositions:  // offset by the tokens already seen
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string generation_problem(const Model& m) {
  if (m.input.dtype != DType::kInt64 || m.input.shape.size() != 1)
    return "model '" + m.name + "' does not read token ids [T]";
  for (const Layer& l : m.layers) {
    const std::string named =
        "layer '" + l.name + "' (" + std::string(op_name(l.op)) + ")";
    if (l.op == Op::kAttention) {
      if (!l.causal) return named + " attends to later positions (not causal)";
      continue;
    }
    if (!per_position(l.op))
      return named + " mixes positions other than by causal attention";
  }
  const Shape out = infer_shapes(m).back();
  if (out.size() != 2 || out[0] != m.input.shape[0])
    return "model '" + m.name + "' gives " + shape_str(out) +
           ", not one row of logits per token [T, vocab]";
  return "";
}

Model with_sequence(const Model& m, int64_t tokens) {
  if (m.input.shape.size() != 1)
    throw Error("model '" + m.name + "' does not read a sequence [T]");
  Model out = m;
  out.input.shape = {tokens};
  infer_shapes(out);  // throws naming a layer that cannot take it
  return out;
}

double weight_bytes(const Model& m, double bytes_per_parameter) {
  // A lookup table (token embedding, positions) gives one row per token;
  // all of it is read only where a tied head multiplies by it.
  std::vector<bool> read_whole(m.layers.size(), true);
  for (size_t i = 0; i < m.layers.size(); ++i) {
    const Op op = m.layers[i].op;
    if (op == Op::kEmbedding || op == Op::kPositions) read_whole[i] = false;
  }
  for (const Layer& l : m.layers)
    if (l.op == Op::kTiedLinear) read_whole.at(l.tied) = true;
  double n = 0;
  for (const ParamSpec& p : param_specs(m))
    if (read_whole[p.layer]) n += double(numel(p.shape));
  return n * bytes_per_parameter;
}

double weight_bytes(const Model& m, const std::string& precision) {
  return weight_bytes(m, precision == "bf16" ? 2 : precision == "int8" ? 1 : 4);
}

}  // namespace nnbench::model
