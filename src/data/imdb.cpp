// IMDb reviews from the aclImdb folder (Maas et al. 2011), encoded the way
// keras.datasets.imdb and the Keras IMDb examples see them, so the study's
// fastText and bidirectional-LSTM models get inputs of the same shape and
// id distribution.
#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "data/dataset.h"
#include "data/format_util.h"

namespace nnbench::data {
namespace fs = std::filesystem;
using internal::fail;

namespace {

constexpr int64_t kDefaultWords = 20000, kDefaultMaxlen = 400;
// keras.datasets.imdb: 0 padding, 1 start, 2 out-of-vocabulary; words are
// their 1-based frequency rank plus index_from=3, so 3 is never used.
constexpr int64_t kPad = 0, kStart = 1, kOov = 2, kIndexFrom = 3;

bool word_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '\'' || c >= 0x80;
}

// Calls fn(word) for every word of `text` (see imdb_words).
template <class Fn>
void for_each_word(std::string_view text, Fn&& fn) {
  std::string word;
  auto flush = [&] {
    size_t a = 0, b = word.size();
    while (a < b && word[a] == '\'') ++a;
    while (b > a && word[b - 1] == '\'') --b;
    if (b > a) fn(std::string_view(word).substr(a, b - a));
    word.clear();
  };
  const size_t n = text.size();
  for (size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    // The reviews carry HTML line breaks ("<br />"): drop the whole tag so
    // "br" does not become the most frequent word.
    if (c == '<' && i + 2 < n && (text[i + 1] | 0x20) == 'b' &&
        (text[i + 2] | 0x20) == 'r') {
      size_t j = i + 3;
      while (j < n && (text[j] == ' ' || text[j] == '/')) ++j;
      if (j < n && text[j] == '>') {
        flush();
        i = j;
        continue;
      }
    }
    if (word_byte(c)) {
      word += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    } else {
      flush();
    }
  }
  flush();
}

struct Reviews {
  std::vector<std::vector<int32_t>> words;  // provisional ids, -1 unknown
  std::vector<int64_t> labels;
};

// Provisional ids in order of first appearance, counted on train only:
// the vocabulary must not see the test split.
struct Dictionary {
  std::unordered_map<std::string, int32_t> ids;
  std::vector<std::string> words;
  std::vector<int64_t> counts;
};

std::vector<fs::path> review_files(const fs::path& dir) {
  internal::require_dir(dir, "a folder of *.txt reviews (aclImdb layout)");
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().extension() == ".txt") {
      files.push_back(e.path());
    }
  }
  if (files.empty()) fail(dir, "holds no *.txt reviews");
  // Directory order differs between file systems; sorted keeps loads
  // reproducible.
  std::sort(files.begin(), files.end());
  return files;
}

Reviews read_reviews(const fs::path& dir, Dictionary& dict, bool grow) {
  Reviews r;
  for (const auto& [sub, label] :
       {std::pair<const char*, int64_t>{"neg", 0}, {"pos", 1}}) {
    for (const auto& file : review_files(dir / sub)) {
      const std::string text = internal::read_file(file);
      std::vector<int32_t> ids;
      for_each_word(text, [&](std::string_view w) {
        auto it = dict.ids.find(std::string(w));
        if (it == dict.ids.end()) {
          if (!grow) {
            ids.push_back(-1);
            return;
          }
          it = dict.ids
                   .emplace(std::string(w),
                            static_cast<int32_t>(dict.words.size()))
                   .first;
          dict.words.emplace_back(w);
          dict.counts.push_back(0);
        }
        if (grow) ++dict.counts[it->second];
        ids.push_back(it->second);
      });
      r.words.push_back(std::move(ids));
      r.labels.push_back(label);
    }
  }
  return r;
}

Split encode(const Reviews& r, const std::vector<int64_t>& final_id,
             int64_t maxlen, int64_t vocab) {
  Split s;
  s.input = {{maxlen}, model::DType::kInt64, vocab};
  s.classes = 2;
  s.size = static_cast<int64_t>(r.words.size());
  s.labels = r.labels;
  s.i.assign(s.size * maxlen, kPad);
  std::vector<int64_t> seq;
  for (int64_t n = 0; n < s.size; ++n) {
    seq.assign(1, kStart);
    for (int32_t w : r.words[n]) seq.push_back(w < 0 ? kOov : final_id[w]);
    // pad_sequences defaults: padding='pre', truncating='pre' -- keep the
    // last maxlen ids, zeros in front of shorter ones.
    const int64_t len = static_cast<int64_t>(seq.size());
    const int64_t keep = std::min(len, maxlen);
    std::copy(seq.end() - keep, seq.end(),
              s.i.begin() + n * maxlen + (maxlen - keep));
  }
  return s;
}

}  // namespace

std::vector<std::string> imdb_words(std::string_view text) {
  std::vector<std::string> out;
  for_each_word(text, [&](std::string_view w) { out.emplace_back(w); });
  return out;
}

Dataset load_imdb(const std::string& path, const DatasetOptions& o) {
  internal::require_dir(path, dataset_help("imdb"));
  const fs::path dir = internal::maybe_sub(path, "aclImdb");
  const int64_t vocab = o.vocab > 0 ? o.vocab : kDefaultWords;
  const int64_t maxlen = o.seq_len > 0 ? o.seq_len : kDefaultMaxlen;
  if (vocab <= kIndexFrom) {
    throw nnbench::Error(
        "imdb: vocab must be at least 4 (ids 0-3 are "
        "reserved)");
  }
  Dictionary dict;
  const Reviews train = read_reviews(dir / "train", dict, true);
  const Reviews test = read_reviews(dir / "test", dict, false);

  // Frequency rank, ties by word so the ids do not depend on file order.
  std::vector<int32_t> order(dict.words.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    if (dict.counts[a] != dict.counts[b])
      return dict.counts[a] > dict.counts[b];
    return dict.words[a] < dict.words[b];
  });
  std::vector<int64_t> final_id(order.size());
  for (size_t r = 0; r < order.size(); ++r) {
    const int64_t id = static_cast<int64_t>(r) + 1 + kIndexFrom;
    final_id[order[r]] = id < vocab ? id : kOov;
  }

  Dataset d;
  d.source = dir.string();
  d.train = encode(train, final_id, maxlen, vocab);
  d.test = encode(test, final_id, maxlen, vocab);
  d.normalisation =
      "keras.datasets.imdb ids (0 pad, 1 start, 2 out-of-vocabulary, words "
      "from 4 by training frequency), num_words " +
      std::to_string(vocab) + " of " + std::to_string(dict.words.size()) +
      " distinct training words, maxlen " + std::to_string(maxlen) +
      ", padding and truncating 'pre'";
  d.integrity = "no SHA-256 known for imdb; folder layout checked";
  return d;
}

}  // namespace nnbench::data
