#pragma once
// The record of checking a backend against the oracle (bench/verify.h runs
// it): every compared tensor with its error and tolerance, and the verdict.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace nnbench::results {

struct TensorCheck {
  std::string what;  // "output (infer)", "loss", "gradient <name>", ...
  double error = 0, tolerance = 0;
  bool pass = false;
};

enum class Verdict { kPass, kFail, kUnimplemented };
std::string verdict_name(Verdict v);              // PASS FAIL UNIMPLEMENTED
Verdict verdict_from_name(const std::string& s);  // throws nnbench::Error

// A precision below fp32 against the oracle's fp32 on the same batch, as
// distributions: the softmax over the last dim of every output row (a
// language model's every position, a classifier's every sample). Stated,
// not judged: synthetic weights have no accuracy to lose, and near-ties
// among their logits flip without meaning much.
struct Agreement {
  int64_t rows = 0;
  double top1 = 0;  // fraction of rows whose argmax is fp32's
  double kl = 0;    // mean KL(p_fp32 || p_low), nats
};

struct Verification {
  std::string model, oracle, candidate, precision;
  int64_t batch = 0;
  Verdict verdict = Verdict::kPass;
  std::string message;  // the worst failing check, or why unimplemented
  std::vector<TensorCheck> checks;
  std::optional<Agreement> agreement;  // below fp32, logits outputs only
  // Below fp32, a model that generates: over every row of every step of
  // the teacher-forced generation check (verify/greedy.h), its next token
  // against the oracle's (top1) and its logits' softmax (kl, NaN where the
  // engine gives no logits).
  std::optional<Agreement> generation_agreement;
};

nlohmann::json to_json(const Verification& v);
Verification verification_from_json(const nlohmann::json& j);

}  // namespace nnbench::results
