// The transformer families (issue 33): a GPT-2-small-sized decoder and a
// BERT-base-sized encoder, with tiny variants of each for tests. Weights
// are synthetic and seeded as every zoo model's.
#include <string>

#include "model/zoo/builder.h"
#include "model/zoo/models.h"

namespace nnbench::model::zoo {
namespace {

struct Shape {
  int64_t layers, width, heads, vocab, positions, sequence;
};

std::string block(int i) { return "h" + std::to_string(i) + "."; }

// The MLP of a block: width -> 4 width -> GELU -> width.
int mlp(Builder& b, int x, const Shape& s, int i, bool tanh_gelu) {
  const int up = b.linear(x, 4 * s.width, block(i) + "mlp.c_fc");
  return b.linear(b.gelu(up, tanh_gelu), s.width, block(i) + "mlp.c_proj");
}

struct Embedded {
  int tokens, positions;  // layer indices
};

// A model of token ids with its card: the token embedding (named
// `embedding`) and the learned positions added to it (named `positions`).
Embedded embeddings(Model& m, Builder& b, const Shape& s,
                    const std::string& name, const std::string& source,
                    const std::string& notes, const std::string& embedding,
                    const std::string& positions) {
  m.name = name;
  m.study = kStudyTransformers;
  m.source = source;
  m.notes = notes;
  m.input = {{s.sequence}, DType::kInt64, s.vocab};
  const int tokens = b.embedding(-1, s.vocab, s.width, embedding);
  return {tokens, b.positions(tokens, s.positions, positions)};
}

// GPT-2: token and learned position embeddings, pre-norm blocks (layer
// norm, causal attention, residual; layer norm, MLP with GPT-2's tanh
// GELU, residual), a final layer norm and the output tied to the token
// embedding.
Model gpt2(const std::string& name, const Shape& s, const std::string& notes) {
  Model m;
  Builder b(m);
  const Embedded e = embeddings(m, b, s, name,
                                "Radford et al. 2019, Language Models are "
                                "Unsupervised Multitask Learners; layer names "
                                "of Hugging Face's GPT2LMHeadModel",
                                notes, "wte", "wpe");
  int x = e.positions;
  for (int i = 0; i < s.layers; ++i) {
    const int ln1 = b.layer_norm(x, 1e-5, block(i) + "ln_1");
    x = b.add_(x, b.attention(ln1, s.heads, true, block(i) + "attn"));
    const int ln2 = b.layer_norm(x, 1e-5, block(i) + "ln_2");
    x = b.add_(x, mlp(b, ln2, s, i, true));
  }
  b.tied_linear(b.layer_norm(x, 1e-5, "ln_f"), e.tokens, "lm_head");
  m.loss = Loss::kSoftmaxCrossEntropy;  // the next token at every position
  return m;
}

// BERT: token and position embeddings, a layer norm, post-norm blocks
// (attention, residual, layer norm; MLP with the exact GELU, residual,
// layer norm), the pooler on the first position ([CLS]) and a two-class
// head: sequence classification, the training step of a fine-tune.
Model bert(const std::string& name, const Shape& s, const std::string& notes) {
  Model m;
  Builder b(m);
  const Embedded e =
      embeddings(m, b, s, name,
                 "Devlin et al. 2019, BERT; layer names of "
                 "Hugging Face's BertForSequenceClassification",
                 notes, "word_embeddings", "position_embeddings");
  int x = b.layer_norm(e.positions, 1e-12, "embeddings.LayerNorm");
  for (int i = 0; i < s.layers; ++i) {
    const int a = b.attention(x, s.heads, false, block(i) + "attention");
    x = b.layer_norm(b.add_(x, a), 1e-12, block(i) + "attention.LayerNorm");
    x = b.layer_norm(b.add_(x, mlp(b, x, s, i, false)), 1e-12,
                     block(i) + "output.LayerNorm");
  }
  const int pooled = b.linear(b.seq_first(x), s.width, "pooler");
  Layer tanh;
  tanh.op = Op::kTanh;
  b.linear(b.add(tanh, {pooled}), 2, "classifier");
  m.loss = Loss::kSoftmaxCrossEntropy;
  return m;
}

}  // namespace

Model gpt2_small() {
  return gpt2("gpt2-small", {12, 768, 12, 50257, 1024, 128},
              "GPT-2 small: 12 layers, width 768, 12 heads, vocabulary "
              "50,257, 1,024 learned positions, output tied to the token "
              "embedding; 124,439,808 parameters, as published. Steps read "
              "128 tokens per sample (a fine-tune's length).");
}

Model gpt2_tiny() {
  return gpt2("gpt2-tiny", {2, 64, 4, 512, 64, 32},
              "GPT-2's structure at test size: 2 layers, width 64, 4 "
              "heads, vocabulary 512, 64 positions, 32 tokens per sample.");
}

Model bert_base(int64_t sequence) {
  return bert(sequence == 128 ? "bert-base" : "bert-base-384",
              {12, 768, 12, 30522, 512, sequence},
              "BERT-base: 12 layers, width 768, 12 heads, vocabulary "
              "30,522, 512 learned positions, pooler and a two-class head; " +
                  std::to_string(sequence) +
                  " tokens per sample. One segment: the published model's "
                  "1,536 token-type parameters are left out (109,482,242 "
                  "here against 109,483,778 for "
                  "BertForSequenceClassification with two labels).");
}

Model bert_tiny() {
  return bert("bert-tiny", {2, 64, 4, 512, 64, 32},
              "BERT's structure at test size: 2 layers, width 64, 4 heads, "
              "vocabulary 512, 64 positions, 32 tokens per sample, two "
              "classes.");
}

}  // namespace nnbench::model::zoo
