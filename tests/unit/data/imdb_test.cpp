// IMDb in the aclImdb layout, written here: tokenisation, ids as
// keras.datasets.imdb gives them, pad_sequences' 'pre' padding and
// truncation, and errors for a broken layout.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "data/dataset.h"
#include "data_test_util.h"

namespace nnbench::data {
namespace {
namespace fs = std::filesystem;
using namespace testing;
using Ids = std::vector<int64_t>;

void write_review(const fs::path& dir, const std::string& name,
                  const std::string& text) {
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << text;
}

// Training counts: good 4; bad, movie, the 3; best, end, was 1. Ids:
// good 4, bad 5, movie 6, the 7, best 8, end 9, was 10.
fs::path write_imdb(const fs::path& root) {
  const fs::path a = root / "aclImdb";
  write_review(a / "train/neg", "0_1.txt", "bad bad movie<br />the end.");
  write_review(a / "train/neg", "1_2.txt", "The movie was BAD!");
  write_review(a / "train/pos", "0_9.txt", "good movie, the best.");
  write_review(a / "train/pos", "1_8.txt", "Good good good!");
  write_review(a / "test/neg", "0_2.txt", "awful movie");
  std::string nine_goods;
  for (int k = 0; k < 9; ++k) nine_goods += "good ";
  write_review(a / "test/pos", "0_10.txt", nine_goods);
  // Not a review: ignored.
  write_review(a / "train/pos", "notes.md", "ignored ignored ignored");
  return a;
}

Ids row(const Split& s, int64_t n) {
  const int64_t t = s.input.shape[0];
  return Ids(s.i.begin() + n * t, s.i.begin() + (n + 1) * t);
}

TEST(DataImdb, Words) {
  EXPECT_EQ(
      imdb_words("Great movie!<br /><br />I LOVED it, didn't you? "
                 "'Quoted' caf\xc3\xa9 <BR/>x"),
      (std::vector<std::string>{"great", "movie", "i", "loved", "it", "didn't",
                                "you", "quoted", "caf\xc3\xa9", "x"}));
}

TEST(DataImdb, IdsPaddingAndTruncationLikeKeras) {
  TempDir t;
  write_imdb(t.path);
  DatasetOptions o;
  o.seq_len = 8;
  const Dataset d = load_dataset("imdb", t.path.string(), o);
  ASSERT_EQ(d.train.size, 4);
  ASSERT_EQ(d.test.size, 2);
  EXPECT_EQ(d.train.input.shape, model::Shape{8});
  EXPECT_EQ(d.train.input.dtype, model::DType::kInt64);
  EXPECT_EQ(d.train.input.vocab, 20000);
  EXPECT_EQ(d.train.classes, 2);
  EXPECT_EQ(d.train.labels, (Ids{0, 0, 1, 1}));
  EXPECT_EQ(row(d.train, 0), (Ids{0, 0, 1, 5, 5, 6, 7, 9}));
  EXPECT_EQ(row(d.train, 1), (Ids{0, 0, 0, 1, 7, 6, 10, 5}));
  EXPECT_EQ(row(d.train, 2), (Ids{0, 0, 0, 1, 4, 6, 7, 8}));
  EXPECT_EQ(row(d.train, 3), (Ids{0, 0, 0, 0, 1, 4, 4, 4}));
  // A word never seen in training is out-of-vocabulary (2); ten ids
  // truncated at the front keep the last eight.
  EXPECT_EQ(row(d.test, 0), (Ids{0, 0, 0, 0, 0, 1, 2, 6}));
  EXPECT_EQ(row(d.test, 1), (Ids(8, 4)));
  EXPECT_EQ(d.test.labels, (Ids{0, 1}));

  // num_words 8: ids 8 and above become 2.
  o.vocab = 8;
  const Dataset small = load_dataset("imdb", t.path.string(), o);
  EXPECT_EQ(small.train.input.vocab, 8);
  EXPECT_EQ(row(small.train, 0), (Ids{0, 0, 1, 5, 5, 6, 7, 2}));
  EXPECT_EQ(row(small.train, 1), (Ids{0, 0, 0, 1, 7, 6, 2, 5}));

  // The default maxlen is the zoo's imdb-fasttext (400).
  const Dataset def = load_dataset("imdb", t.path.string());
  EXPECT_EQ(def.train.input.shape, model::Shape{400});
}

TEST(DataImdb, BrokenLayoutsAreDataErrors) {
  TempDir t;
  const fs::path a = write_imdb(t.path);
  fs::remove_all(a / "test/pos");
  fs::create_directories(a / "test/pos");
  std::string e = data_error([&] { load_dataset("imdb", a.string()); });
  EXPECT_TRUE(has(e, (a / "test/pos").string() + ": holds no *.txt reviews"))
      << e;
  fs::remove_all(a / "train/neg");
  e = data_error([&] { load_dataset("imdb", a.string()); });
  EXPECT_TRUE(has(e, (a / "train/neg").string() + ": missing")) << e;
  e = data_error([] { load_dataset("imdb", ""); });
  EXPECT_TRUE(has(e, "needs a path")) << e;
  DatasetOptions o;
  o.vocab = 3;
  write_imdb(t.path);
  EXPECT_THROW(load_dataset("imdb", a.string(), o), nnbench::Error);
}

}  // namespace
}  // namespace nnbench::data
