#pragma once
// The record of checking a backend against the oracle (bench/verify.h runs
// it): every compared tensor with its error and tolerance, and the verdict.
#include <cstdint>
#include <nlohmann/json.hpp>
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

struct Verification {
  std::string model, oracle, candidate, precision;
  int64_t batch = 0;
  Verdict verdict = Verdict::kPass;
  std::string message;  // the worst failing check, or why unimplemented
  std::vector<TensorCheck> checks;
};

nlohmann::json to_json(const Verification& v);
Verification verification_from_json(const nlohmann::json& j);

}  // namespace nnbench::results
