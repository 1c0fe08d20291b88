#pragma once
// Real datasets, loaded whole into memory before any timing starts, so that
// reading, decompressing, checksumming and tokenising never leak into a
// measured step. data/loader.h turns a Split into batches.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/model.h"
#include "util/error.h"

namespace nnbench::data {

// A missing, truncated, corrupted or malformed data file. Messages start with
// the file (or directory) they are about.
class DataError : public nnbench::Error {
 public:
  using Error::Error;
};

struct Split {
  model::InputSpec input;    // per-sample shape, dtype, vocab
  model::Shape label_shape;  // {}: one class label per sample; {T} for PTB
  int64_t classes = 0;
  int64_t size = 0;
  std::vector<float> f;         // size * numel(input.shape), standardised
  std::vector<int64_t> i;       // token ids, size * numel(input.shape)
  std::vector<int64_t> labels;  // size * numel(label_shape)
  // Images only: the per-channel statistics `f` was standardised with (of
  // [0,1] pixels, from the training split). The loader needs them to pad
  // augmented crops with what black becomes after standardisation.
  std::vector<float> channel_mean, channel_std;
};

struct Dataset {
  std::string name;
  std::string source;         // the files it came from
  Split train, test;          // text: test is empty (size 0), see below
  Split valid;                // PTB only (ptb.valid.txt); size 0 elsewhere
  std::string normalisation;  // how inputs were standardised or encoded
  std::string integrity;      // what was checked: SHA-256 or sizes only
  double load_seconds = 0;    // reading, decoding and checksumming
  // Seeded random values in the real set's shapes (`--data synthetic`):
  // steps time as with real data; accuracy means nothing.
  bool synthetic = false;
};

struct DatasetOptions {
  // Sequence length of text datasets; 0: the dataset's default (imdb 400,
  // text 40, ptb 32 -- the zoo's imdb-fasttext, lstm-text-gen, lstm-ptb).
  int64_t seq_len = 0;
  // imdb: num_words (0: 20,000). ptb: most frequent words kept, the rest
  // become <unk> (0: every training word). text: the id space, at least the
  // corpus's distinct characters (0: exactly those). A vocabulary larger
  // than the data needs is kept so ids fit a model built for it.
  int64_t vocab = 0;
  // Compare files nnbench knows (data/manifest.h) with their SHA-256.
  bool verify_checksums = true;
};

// fashion-mnist mnist cifar10 imdb text ptb
std::vector<std::string> dataset_names();

// One line per dataset: what `path` must point to and the default.
std::string dataset_help(const std::string& name);

// The file or folder load_dataset reads for `name`: `path`, or the default
// where there is one; throws nnbench::Error for an unknown name and
// DataError when there is no default (naming what `path` must be). For
// checks before a run starts: nothing is read.
std::string dataset_path(const std::string& name, const std::string& path);

// Loads both splits. `path` is a directory (a file for "text"); "" means the
// default where there is one (fashion-mnist: the Debian package's folder,
// text: /usr/share/common-licenses/GPL-3) and is an error naming what is
// needed otherwise. Throws DataError for any problem with the files and
// nnbench::Error for an unknown name or invalid option.
//
// Encodings:
//  - fashion-mnist, mnist, cifar10: float [C,H,W], pixels/255 then
//    standardised per channel with the training split's mean and std (the
//    same statistics are applied to test). Labels are class ids.
//  - imdb: int64 [seq_len] ids like keras.datasets.imdb: 0 padding, 1 start,
//    2 out-of-vocabulary, words from 4 by frequency rank in the training
//    split (index_from=3 on a 1-based rank: 3 is never used, as in Keras),
//    ids >= vocab become 2; pad and truncate at the front (pad_sequences
//    defaults). Labels 0 negative, 1 positive.
//  - text: the file is UTF-8 decoded into code points and ASCII lower-cased
//    (lstm_text_generation.py lower-cases; other scripts are left alone);
//    ids are ranks in the sorted distinct code points. Windows of seq_len
//    starting every 3 characters, label the next character. The script
//    trains on the whole text, so there is no test split.
//  - ptb: whitespace-separated words, <eos> for every newline (TensorFlow's
//    ptb reader); ids by training frequency (ties by word). Consecutive
//    non-overlapping windows of seq_len tokens, labels the next token at
//    every position (label shape {seq_len}).
Dataset load_dataset(const std::string& name, const std::string& path,
                     const DatasetOptions& o = {});

// The path that asks for synthetic data ("./synthetic" names a folder).
inline constexpr const char* kSyntheticData = "synthetic";

// The real set's train/test (ptb: valid) sizes, per-sample shape, label
// shape, classes and vocabulary (o.seq_len and o.vocab as load_dataset
// takes them), filled with seeded values: N(0, 1) floats or uniform token
// ids in [1, vocab), uniform labels; the same on every machine. Sizes:
// mnist and fashion-mnist 60,000/10,000, cifar10 50,000/10,000, imdb
// 25,000/25,000, text the windows of nietzsche.txt (600,893 characters,
// 57 distinct, no test split), ptb TensorFlow's reader's token counts.
Dataset synthetic_dataset(const std::string& name, const DatasetOptions& o);

// Per-format loaders behind load_dataset; `path` already resolved (no
// defaults); load_seconds is left to load_dataset.
Dataset load_idx(const std::string& name, const std::string& dir,
                 const DatasetOptions& o);
Dataset load_cifar10(const std::string& dir, const DatasetOptions& o);
Dataset load_imdb(const std::string& dir, const DatasetOptions& o);
Dataset load_char_text(const std::string& file, const DatasetOptions& o);
Dataset load_ptb(const std::string& dir, const DatasetOptions& o);

// IMDb tokenisation: "<br />" and every character other than letters,
// digits, apostrophes and non-ASCII bytes separate words; ASCII is
// lower-cased; apostrophes at either end of a word are dropped.
std::vector<std::string> imdb_words(std::string_view text);

}  // namespace nnbench::data
