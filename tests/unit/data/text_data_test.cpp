// Character corpus (lstm_text_generation.py's windows) and Penn Treebank
// files (TensorFlow's ptb reader), written here; the default corpus that
// every Debian system has; malformed and missing files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>

#include "data/dataset.h"
#include "data_test_util.h"

namespace nnbench::data {
namespace {
namespace fs = std::filesystem;
using namespace testing;
using Ids = std::vector<int64_t>;

TEST(DataText, CharacterWindowsLikeTheKerasScript) {
  TempDir t;
  const fs::path f = t.path / "c.txt";
  // Read as Python does: "ab\ncabxa\ny"; ids \n 0, a 1, b 2, c 3, x 4, y 5.
  write_all(f, "Ab\r\ncABxa\ry");
  DatasetOptions o;
  o.seq_len = 3;
  const Dataset d = load_dataset("text", f.string(), o);
  EXPECT_EQ(d.train.input.shape, model::Shape{3});
  EXPECT_EQ(d.train.input.vocab, 6);
  EXPECT_EQ(d.train.classes, 6);
  EXPECT_EQ(d.train.label_shape, model::Shape{});
  ASSERT_EQ(d.train.size, 3);  // range(0, 10 - 3, 3)
  EXPECT_EQ(d.train.i, (Ids{1, 2, 0, 3, 1, 2, 4, 1, 0}));
  EXPECT_EQ(d.train.labels, (Ids{3, 4, 5}));
  EXPECT_EQ(d.test.size, 0);

  // Code points, not bytes: "é" is one character.
  write_all(f,
            "a\xc3\xa9"
            "a\xc3\xa9"
            "b");
  o.seq_len = 2;
  const Dataset u = load_dataset("text", f.string(), o);
  EXPECT_EQ(u.train.input.vocab, 3);
  EXPECT_EQ(u.train.i, (Ids{0, 2}));
  EXPECT_EQ(u.train.labels, (Ids{0}));
  // A larger id space is kept (a model built for 57 characters).
  o.vocab = 57;
  EXPECT_EQ(load_dataset("text", f.string(), o).train.input.vocab, 57);
  o.vocab = 2;
  EXPECT_TRUE(has(data_error([&] { load_dataset("text", f.string(), o); }),
                  "3 distinct characters"));
}

TEST(DataText, DefaultCorpusIsTheGplText) {
  const Dataset d = load_dataset("text", "");
  EXPECT_TRUE(has(d.source, "GPL-3"));
  std::ifstream in(d.source, std::ios::binary);
  std::string text{std::istreambuf_iterator<char>(in), {}};
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  const int64_t len = static_cast<int64_t>(text.size());  // ASCII
  EXPECT_EQ(d.train.size, (len - 41) / 3 + 1);
  EXPECT_EQ(
      d.train.input.vocab,
      static_cast<int64_t>(std::set<char>(text.begin(), text.end()).size()));
  // The label of window w is position 37 of window w + 1 (step 3).
  for (int64_t w = 0; w + 1 < d.train.size; w += 97) {
    EXPECT_EQ(d.train.labels[w], d.train.i[(w + 1) * 40 + 37]);
  }
}

TEST(DataText, MalformedCorporaAreDataErrors) {
  TempDir t;
  const fs::path f = t.path / "bad.txt";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"\xff"
       "abc",
       "invalid UTF-8 at byte 0"},
      {"ab\xc0\xaf", "invalid UTF-8 at byte 2"},  // overlong '/'
      {"ab\xe2\x82", "truncated UTF-8 sequence"},
      {"", "empty"},
      {"too short for forty", "19 characters, too short for a window of 40"},
  };
  for (const auto& [bytes, message] : cases) {
    write_all(f, bytes);
    const std::string e = data_error([&] { load_dataset("text", f.string()); });
    EXPECT_TRUE(has(e, f.string() + ": " + message)) << e;
  }
  const std::string e =
      data_error([&] { load_dataset("text", (t.path / "none").string()); });
  EXPECT_TRUE(has(e, "none: missing")) << e;
}

// Tokens a b c <eos> a b <eos> b <eos>; ids <eos> 0, b 1, a 2, c 3 (ties by
// word: '<' sorts before letters).
void write_ptb(const fs::path& dir,
               const std::string& test = " a d \n b b \n") {
  fs::create_directories(dir);
  write_all(dir / "ptb.train.txt", " a b c \n a b \n b \n");
  write_all(dir / "ptb.valid.txt", " c a \n");
  write_all(dir / "ptb.test.txt", test);
}

TEST(DataText, PtbWindowsAndNextTokenLabels) {
  TempDir t;
  write_ptb(t.path / "data");
  DatasetOptions o;
  o.seq_len = 2;
  // simple-examples/ (holding data/) is accepted as well as data/ itself.
  const Dataset d = load_dataset("ptb", t.path.string(), o);
  EXPECT_EQ(d.train.input.shape, model::Shape{2});
  EXPECT_EQ(d.train.label_shape, model::Shape{2});
  EXPECT_EQ(d.train.input.vocab, 4);
  EXPECT_EQ(d.train.classes, 4);
  ASSERT_EQ(d.train.size, 4);  // (9 - 1) / 2
  EXPECT_EQ(d.train.i, (Ids{2, 1, 3, 0, 2, 1, 0, 1}));
  EXPECT_EQ(d.train.labels, (Ids{1, 3, 0, 2, 1, 0, 1, 0}));
  EXPECT_EQ(d.valid.size, 1);
  EXPECT_EQ(d.valid.i, (Ids{3, 2}));
  EXPECT_EQ(d.valid.labels, (Ids{2, 0}));
  // "d" is not in the training vocabulary and there is no <unk>: dropped,
  // as TensorFlow's reader does.
  EXPECT_EQ(d.test.i, (Ids{2, 0, 1, 1}));
  EXPECT_EQ(d.test.labels, (Ids{0, 1, 1, 0}));
  EXPECT_TRUE(has(d.normalisation, "1 unknown words dropped"));
}

TEST(DataText, PtbVocabularyLimitUsesUnk) {
  TempDir t;
  write_all(t.path / "ptb.train.txt", " <unk> a a \n <unk> b \n");
  write_all(t.path / "ptb.valid.txt", " a b \n");
  write_all(t.path / "ptb.test.txt", " b z \n");
  DatasetOptions o;
  o.seq_len = 2;
  o.vocab = 3;  // keeps <eos> 0, <unk> 1, a 2; b and z become <unk>
  const Dataset d = load_dataset("ptb", t.path.string(), o);
  EXPECT_EQ(d.train.input.vocab, 3);
  EXPECT_EQ(d.train.i, (Ids{1, 2, 2, 0, 1, 1}));
  EXPECT_EQ(d.valid.i, (Ids{2, 1}));
  EXPECT_EQ(d.test.i, (Ids{1, 1}));
}

TEST(DataText, PtbMissingAndMalformedFiles) {
  TempDir t;
  DatasetOptions o;
  o.seq_len = 2;
  auto load = [&] { load_dataset("ptb", t.path.string(), o); };
  write_ptb(t.path);
  fs::remove(t.path / "ptb.valid.txt");
  std::string e = data_error(load);
  EXPECT_TRUE(has(e, (t.path / "ptb.valid.txt").string() + ": missing")) << e;
  write_ptb(t.path, " \n\n");
  e = data_error(load);
  EXPECT_TRUE(has(e, "ptb.test.txt: 2 tokens, too few")) << e;
  write_ptb(t.path, "   ");
  e = data_error(load);
  EXPECT_TRUE(has(e, "ptb.test.txt: holds no words")) << e;
  write_ptb(t.path);
  o.vocab = 2;  // would drop words, and there is no <unk>
  e = data_error(load);
  EXPECT_TRUE(has(e, "ptb.train.txt: 4 distinct words")) << e;
  EXPECT_TRUE(has(data_error([] { load_dataset("ptb", ""); }), "needs a path"));
}

}  // namespace
}  // namespace nnbench::data
