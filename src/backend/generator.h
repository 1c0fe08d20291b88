#pragma once
// Autoregressive generation, greedy: a prompt through the model once
// (prefill, filling the KV cache), then one token at a time on the cache
// (decode). The harness (bench/generation.h) owns the clock; a generator
// only computes. Which models generate: model/generation.h.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace nnbench::backend {

// The most a run will ask, known before its clock starts so that the cache
// is sized once: `batch` rows of `prompt` tokens, then up to `new_tokens`.
struct GenerationShape {
  int64_t batch = 1, prompt = 0, new_tokens = 0;
};

// Whole generations timed where they ran (a framework worker's clock), per
// timed repetition: the time to first token, each later token's time, and
// row 0's tokens.
struct GenerationTimes {
  std::vector<double> ttft;
  std::vector<std::vector<double>> itl;
  std::vector<std::vector<int64_t>> tokens;
};

// A device memory's read bandwidth as its engine measured it (the host's
// is machine::Bandwidth, measured by nnbench).
struct DeviceBandwidth {
  double read_gbs = 0;      // the best pass, 1e9 B/s
  int64_t array_bytes = 0;  // the array read
  int passes = 0;
  std::string method;  // the kernel, array and passes, in the engine's words
  double seconds = 0;  // the whole measurement
};

class Generator {
 public:
  virtual ~Generator() = default;
  // Starts a generation: the prompts ([batch][prompt] token ids) through
  // the model; returns each row's next token (the argmax of its last
  // position's logits), computed and on the host.
  virtual std::vector<int64_t> prefill(
      const std::vector<std::vector<int64_t>>& prompts) = 0;
  // The token given for each row appended; returns each row's next one.
  virtual std::vector<int64_t> decode(const std::vector<int64_t>& tokens) = 0;
  // Each row's logits at its last position after the last prefill or
  // decode, [batch][vocab] row after row, read on request (never inside a
  // timed generation, so that keeping them costs a token nothing). None
  // where the engine does not give them (its step yields the token only).
  virtual std::optional<std::vector<float>> last_logits() {
    return std::nullopt;
  }
  // What ran (threads, precision, the cache's layout), as Executable's.
  virtual Effective effective() const = 0;
  // The processes doing its work besides this one (a framework worker's),
  // whose CPU time is the run's own for the contention judgement.
  virtual std::vector<int> processes() const { return {}; }
  // A generator in another process times whole generations there (each
  // call across a pipe would add its crossing to every token): `warmup`
  // untimed, then `repetitions` timed, each of `new_tokens`. Null for one
  // the harness times call by call.
  virtual std::optional<GenerationTimes> timed(
      const std::vector<std::vector<int64_t>>& prompts, int64_t new_tokens,
      int warmup, int repetitions) {
    return std::nullopt;
  }
  // The read bandwidth of the memory the engine's weights live in when
  // that is not the host's (a GPU's), measured by the engine on its
  // device: the ceiling of a generation there. Null on the host (nnbench
  // measures the host itself) and where the engine cannot measure it.
  virtual std::optional<DeviceBandwidth> device_bandwidth() {
    return std::nullopt;
  }
};

// What every generator checks before it allocates: the model generates
// (model::generation_problem; Unimplemented naming why) and takes
// prompt + new_tokens positions (nnbench::Error naming the layer).
void check_generates(const model::Model& m, const GenerationShape& shape);
// What every prefill checks: `shape.batch` prompts of one length, 1 to
// `shape.prompt` tokens; returns that length (nnbench::Error otherwise).
int64_t check_prompts(const std::vector<std::vector<int64_t>>& prompts,
                      const GenerationShape& shape);
// What every decode checks: one token per row.
void check_decode(const std::vector<int64_t>& tokens,
                  const GenerationShape& shape);

}  // namespace nnbench::backend
