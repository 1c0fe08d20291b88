// Text for language models: a character corpus as Keras's
// lstm_text_generation.py reads it, and the Penn Treebank word files as
// TensorFlow's ptb reader reads them.
#include <algorithm>
#include <map>
#include <numeric>
#include <unordered_map>

#include "data/dataset.h"
#include "data/format_util.h"

namespace nnbench::data {
namespace fs = std::filesystem;
using internal::fail;

namespace {

constexpr int64_t kCharSeqLen = 40, kCharStep = 3, kPtbSeqLen = 32;

// Strict UTF-8 decoding (no overlong forms, surrogates or values past
// U+10FFFF): a binary file given by mistake fails here, naming the offset.
std::vector<char32_t> decode_utf8(const fs::path& file, const std::string& b) {
  std::vector<char32_t> out;
  out.reserve(b.size());
  const size_t n = b.size();
  for (size_t i = 0; i < n;) {
    const auto c = static_cast<unsigned char>(b[i]);
    int len = 0;
    char32_t cp = 0, min = 0;
    if (c < 0x80) {
      len = 1, cp = c;
    } else if ((c & 0xe0) == 0xc0) {
      len = 2, cp = c & 0x1f, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
      len = 3, cp = c & 0x0f, min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
      len = 4, cp = c & 0x07, min = 0x10000;
    } else {
      fail(file, "invalid UTF-8 at byte " + std::to_string(i));
    }
    if (i + len > n) fail(file, "truncated UTF-8 sequence at the end");
    for (int k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(b[i + k]);
      if ((cc & 0xc0) != 0x80) {
        fail(file, "invalid UTF-8 at byte " + std::to_string(i + k));
      }
      cp = (cp << 6) | (cc & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
      fail(file, "invalid UTF-8 at byte " + std::to_string(i));
    }
    out.push_back(cp);
    i += len;
  }
  return out;
}

// What Python's open(...).read().lower() gives the script, for ASCII:
// universal newlines ("\r\n" and "\r" become "\n") and lower case. Other
// scripts are left as they are (Python would also lower-case them).
std::vector<char32_t> as_python_reads(std::vector<char32_t> t) {
  std::vector<char32_t> out;
  out.reserve(t.size());
  for (size_t k = 0; k < t.size(); ++k) {
    char32_t c = t[k];
    if (c == U'\r') {
      if (k + 1 < t.size() && t[k + 1] == U'\n') ++k;
      c = U'\n';
    }
    if (c >= U'A' && c <= U'Z') c += 32;
    out.push_back(c);
  }
  return out;
}

Split token_split(int64_t seq_len, int64_t vocab, model::Shape label_shape) {
  Split s;
  s.input = {{seq_len}, model::DType::kInt64, vocab};
  s.label_shape = std::move(label_shape);
  s.classes = vocab;
  return s;
}

// Words of a PTB file with "<eos>" at every newline.
std::vector<std::string> ptb_words(const std::string& b) {
  std::vector<std::string> out;
  std::string word;
  for (char c : b) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' ||
        c == '\f') {
      if (!word.empty()) out.push_back(std::move(word));
      word.clear();
      if (c == '\n') out.emplace_back("<eos>");
    } else {
      word += c;
    }
  }
  if (!word.empty()) out.push_back(std::move(word));
  return out;
}

// Consecutive non-overlapping windows; labels are the inputs shifted by one.
Split ptb_split(const fs::path& file, const std::vector<int64_t>& tokens,
                int64_t seq_len, int64_t vocab) {
  Split s = token_split(seq_len, vocab, {seq_len});
  const int64_t n = static_cast<int64_t>(tokens.size());
  s.size = n > 0 ? (n - 1) / seq_len : 0;
  if (s.size == 0) {
    fail(file, std::to_string(n) + " tokens, too few for one window of " +
                   std::to_string(seq_len) + " plus the next token");
  }
  s.i.assign(tokens.begin(), tokens.begin() + s.size * seq_len);
  s.labels.assign(tokens.begin() + 1, tokens.begin() + 1 + s.size * seq_len);
  return s;
}

}  // namespace

Dataset load_char_text(const std::string& path, const DatasetOptions& o) {
  const fs::path file = path;
  const int64_t seq_len = o.seq_len > 0 ? o.seq_len : kCharSeqLen;
  const std::string bytes = internal::read_file(file);
  if (bytes.empty()) fail(file, "empty");
  const std::vector<char32_t> text = as_python_reads(decode_utf8(file, bytes));

  std::vector<char32_t> chars = text;
  std::sort(chars.begin(), chars.end());
  chars.erase(std::unique(chars.begin(), chars.end()), chars.end());
  const int64_t distinct = static_cast<int64_t>(chars.size());
  if (o.vocab > 0 && distinct > o.vocab) {
    fail(file, std::to_string(distinct) +
                   " distinct characters, more than the vocabulary of " +
                   std::to_string(o.vocab));
  }
  const int64_t vocab = o.vocab > 0 ? o.vocab : distinct;
  std::vector<int64_t> ids(text.size());
  for (size_t k = 0; k < text.size(); ++k) {
    ids[k] =
        std::lower_bound(chars.begin(), chars.end(), text[k]) - chars.begin();
  }

  // range(0, len(text) - maxlen, step) in the script.
  const int64_t len = static_cast<int64_t>(text.size());
  const int64_t windows =
      len > seq_len ? (len - seq_len - 1) / kCharStep + 1 : 0;
  if (windows == 0) {
    fail(file, std::to_string(len) + " characters, too short for a window of " +
                   std::to_string(seq_len) + " plus the next character");
  }
  Dataset d;
  d.source = file.string();
  d.train = token_split(seq_len, vocab, {});
  d.test = token_split(seq_len, vocab, {});
  Split& s = d.train;
  s.size = windows;
  s.i.resize(windows * seq_len);
  s.labels.resize(windows);
  for (int64_t w = 0; w < windows; ++w) {
    const int64_t start = w * kCharStep;
    std::copy(ids.begin() + start, ids.begin() + start + seq_len,
              s.i.begin() + w * seq_len);
    s.labels[w] = ids[start + seq_len];
  }
  d.normalisation =
      "characters as ids of the " + std::to_string(distinct) +
      " distinct code points, sorted (UTF-8, ASCII lower-cased, newlines "
      "normalised); windows of " +
      std::to_string(seq_len) + " every " + std::to_string(kCharStep) +
      " characters, label the next; no test split (the script trains on the "
      "whole text)";
  d.integrity = "no SHA-256 for user text; UTF-8 validated";
  return d;
}

Dataset load_ptb(const std::string& path, const DatasetOptions& o) {
  internal::require_dir(path, dataset_help("ptb"));
  const fs::path dir = internal::maybe_sub(path, "data");
  const int64_t seq_len = o.seq_len > 0 ? o.seq_len : kPtbSeqLen;
  const fs::path files[3] = {dir / "ptb.train.txt", dir / "ptb.valid.txt",
                             dir / "ptb.test.txt"};
  std::vector<std::string> words[3];
  for (int k = 0; k < 3; ++k) {
    words[k] = ptb_words(internal::read_file(files[k]));
    if (words[k].empty()) fail(files[k], "holds no words");
  }

  // ptb_word_lm's reader: ids by training frequency, ties by word.
  std::map<std::string, int64_t> counts;
  for (const auto& w : words[0]) ++counts[w];
  std::vector<std::pair<std::string, int64_t>> ranked(counts.begin(),
                                                      counts.end());
  std::stable_sort(
      ranked.begin(), ranked.end(),
      [](const auto& a, const auto& b) { return a.second > b.second; });
  const int64_t distinct = static_cast<int64_t>(ranked.size());
  const int64_t kept = o.vocab > 0 ? std::min(o.vocab, distinct) : distinct;
  std::unordered_map<std::string, int64_t> id;
  for (int64_t r = 0; r < kept; ++r) id[ranked[r].first] = r;
  const auto unk = id.find("<unk>");
  if (kept < distinct && unk == id.end()) {
    fail(files[0], std::to_string(distinct) +
                       " distinct words do not fit a "
                       "vocabulary of " +
                       std::to_string(kept) +
                       " and <unk> is not among the most frequent to stand for "
                       "the rest");
  }
  const int64_t vocab = o.vocab > 0 ? o.vocab : distinct;

  Dataset d;
  d.source = dir.string();
  Split* splits[3] = {&d.train, &d.valid, &d.test};
  int64_t dropped = 0;
  for (int k = 0; k < 3; ++k) {
    std::vector<int64_t> tokens;
    tokens.reserve(words[k].size());
    for (const auto& w : words[k]) {
      const auto it = id.find(w);
      if (it != id.end()) {
        tokens.push_back(it->second);
      } else if (unk != id.end()) {
        tokens.push_back(unk->second);
      } else {
        ++dropped;  // TensorFlow's reader skips words outside the vocabulary
      }
    }
    *splits[k] = ptb_split(files[k], tokens, seq_len, vocab);
  }
  d.normalisation =
      "word ids by training frequency (" + std::to_string(kept) + " of " +
      std::to_string(distinct) + " words, <eos> per line end" +
      (dropped ? ", " + std::to_string(dropped) + " unknown words dropped"
               : std::string()) +
      "); non-overlapping windows of " + std::to_string(seq_len) +
      ", labels the next token at every position";
  d.integrity = "no SHA-256 known for ptb; files and sizes checked";
  return d;
}

}  // namespace nnbench::data
