#pragma once
// Which models generate text token by token, and at what length. A model
// generates when it reads token ids [T], gives each position's logits
// [T, vocab], and no position sees a later one: every layer works on each
// position alone, except causal attention (whose keys and values a KV
// cache keeps) and learned positions (offset by the tokens already seen).
// GPT-2 does; BERT (its attention sees the whole sequence, its head reads
// [CLS]) and an LSTM (carried state, not a cache) do not here.
#include <cstdint>
#include <string>

#include "model/model.h"

namespace nnbench::model {

// "" when `m` generates, else why not, naming the layer.
std::string generation_problem(const Model& m);

// `m` reading sequences of `tokens` ids: for shapes and parameter counts at
// a prompt's length or a cache's. Throws nnbench::Error naming the layer
// when the model cannot take that many (fewer learned positions).
Model with_sequence(const Model& m, int64_t tokens);

// Bytes of parameters one decoding step reads: every weight, but of a
// lookup table (embedding, positions) only its rows unless a tied head
// reads the whole of it (the rows, a few kB, are left out), at
// `bytes_per_parameter`: the numerator of the bandwidth ceiling.
double weight_bytes(const Model& m, double bytes_per_parameter);
// The same at a generation's precision: 4 bytes a parameter at fp32, 2 at
// bf16, 1 at int8 (every engine that generates below fp32 keeps its
// decoding step's weights at that precision: docs/generation.md).
double weight_bytes(const Model& m, const std::string& precision);

}  // namespace nnbench::model
