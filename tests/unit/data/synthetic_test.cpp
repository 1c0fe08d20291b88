// `--data synthetic` (data/dataset.h): each data set's real sizes, shapes,
// classes and vocabulary (the figures below are the real sets', written
// here from their sources, not read from nnbench), seeded values that are
// the same on every load, and values that vary as real data do.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "data/dataset.h"

namespace nnbench::data {
namespace {

TEST(SyntheticData, MnistHasTheRealSetsSizesShapesAndClassesAndRepeats) {
  const Dataset a = load_dataset("mnist", "synthetic");
  EXPECT_TRUE(a.synthetic);
  EXPECT_EQ(a.train.size, 60000);  // train-images-idx3-ubyte
  EXPECT_EQ(a.test.size, 10000);   // t10k-images-idx3-ubyte
  EXPECT_EQ(a.train.input.shape, (model::Shape{1, 28, 28}));
  EXPECT_EQ(a.train.classes, 10);
  ASSERT_EQ(a.train.f.size(), 60000u * 784);
  ASSERT_EQ(a.train.labels.size(), 60000u);
  // N(0, 1): the mean and variance of 47 million draws are within 0.01.
  double sum = 0, sq = 0;
  for (float v : a.train.f) sum += v, sq += double(v) * v;
  const double n = static_cast<double>(a.train.f.size());
  EXPECT_NEAR(sum / n, 0, 0.01);
  EXPECT_NEAR(sq / n - (sum / n) * (sum / n), 1, 0.01);
  EXPECT_EQ(
      std::set<int64_t>(a.train.labels.begin(), a.train.labels.end()).size(),
      10u);
  const Dataset b = load_dataset("mnist", "synthetic");
  EXPECT_EQ(a.train.f, b.train.f);
  EXPECT_EQ(a.test.labels, b.test.labels);
  EXPECT_NE(a.train.f, load_dataset("fashion-mnist", "synthetic").train.f);
}

TEST(SyntheticData, TokenSetsHaveTheRealCountsAndIdsInTheVocabulary) {
  DatasetOptions o;
  o.seq_len = 100;  // imdb_bidirectional_lstm.py's maxlen
  const Dataset imdb = load_dataset("imdb", "synthetic", o);
  EXPECT_EQ(imdb.train.size, 25000);  // aclImdb's train and test halves
  EXPECT_EQ(imdb.test.size, 25000);
  EXPECT_EQ(imdb.train.input.shape, (model::Shape{100}));
  EXPECT_EQ(imdb.train.input.vocab, 20000);  // num_words
  EXPECT_EQ(imdb.train.classes, 2);
  int64_t lo = 1 << 30, hi = -1;
  for (int64_t v : imdb.train.i) lo = std::min(lo, v), hi = std::max(hi, v);
  EXPECT_EQ(lo, 1);  // 0 is padding
  EXPECT_EQ(hi, 19999);

  // nietzsche.txt: 600,893 characters, windows of 40 every 3 characters:
  // Python's len(range(0, 600893 - 40, 3)).
  const Dataset text = load_dataset("text", "synthetic");
  EXPECT_EQ(text.train.size, (600893 - 40 + 2) / 3);
  EXPECT_EQ(text.train.size, 200285);
  EXPECT_EQ(text.train.input.vocab, 57);
  EXPECT_EQ(text.test.size, 0);

  // ptb: 929,589 / 73,760 / 82,430 tokens, windows of 32 and the next.
  const Dataset ptb = load_dataset("ptb", "synthetic");
  EXPECT_EQ(ptb.train.size, 29049);
  EXPECT_EQ(ptb.valid.size, 2304);
  EXPECT_EQ(ptb.test.size, 2575);
  EXPECT_EQ(ptb.train.label_shape, (model::Shape{32}));
  EXPECT_EQ(ptb.train.labels.size(), 29049u * 32);

  EXPECT_THROW(load_dataset("imagenet", "synthetic"), nnbench::Error);
}

}  // namespace
}  // namespace nnbench::data
