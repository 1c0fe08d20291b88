// CIFAR-10 binary batches written here: layout, labels and per-channel
// standardisation, and the errors for damaged or missing files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include "data/dataset.h"
#include "data_test_util.h"

namespace nnbench::data {
namespace {
namespace fs = std::filesystem;
using namespace testing;

// Pixel c,y,x of record r of file f: distinct per channel so the
// per-channel statistics differ.
uint8_t pixel(int f, int r, int c, int y, int x) {
  return static_cast<uint8_t>(c * 80 + (f * 7 + r * 3 + y + x) % 60);
}

std::string records(int f, int n, int label_base = 0) {
  std::string b;
  for (int r = 0; r < n; ++r) {
    b += static_cast<char>((label_base + f + r) % 10);
    for (int c = 0; c < 3; ++c) {
      for (int y = 0; y < 32; ++y) {
        for (int x = 0; x < 32; ++x)
          b += static_cast<char>(pixel(f, r, c, y, x));
      }
    }
  }
  return b;
}

// data_batch_1..5 with 3 records each, test_batch with 4.
fs::path write_cifar(const fs::path& root) {
  const fs::path dir = root / "cifar-10-batches-bin";
  fs::create_directories(dir);
  for (int f = 1; f <= 5; ++f) {
    write_all(dir / ("data_batch_" + std::to_string(f) + ".bin"),
              records(f, 3));
  }
  write_all(dir / "test_batch.bin", records(0, 4));
  return dir;
}

TEST(DataCifar, TinyBatchesLoadAsStandardisedChw) {
  TempDir t;
  const fs::path dir = write_cifar(t.path);
  // Both the batches folder and its parent are accepted.
  const Dataset d = load_dataset("cifar10", t.path.string());
  const Dataset same = load_dataset("cifar10", dir.string());
  EXPECT_EQ(d.train.f, same.train.f);
  EXPECT_EQ(d.train.size, 15);
  EXPECT_EQ(d.test.size, 4);
  EXPECT_EQ(d.train.input.shape, (model::Shape{3, 32, 32}));
  EXPECT_EQ(d.train.classes, 10);
  EXPECT_EQ(d.train.labels[0], 1);   // file 1, record 0
  EXPECT_EQ(d.train.labels[14], 7);  // file 5, record 2
  EXPECT_EQ(d.test.labels[3], 3);

  // Per-channel statistics computed here from the raw bytes.
  for (int c = 0; c < 3; ++c) {
    double sum = 0, sq = 0;
    for (int f = 1; f <= 5; ++f) {
      for (int r = 0; r < 3; ++r) {
        for (int y = 0; y < 32; ++y) {
          for (int x = 0; x < 32; ++x) {
            const double v = pixel(f, r, c, y, x) / 255.0;
            sum += v, sq += v * v;
          }
        }
      }
    }
    const double n = 15 * 1024, m = sum / n, s = std::sqrt(sq / n - m * m);
    EXPECT_NEAR(d.train.channel_mean[c], m, 1e-5);
    EXPECT_NEAR(d.train.channel_std[c], s, 1e-5);
    // Test record 2, channel c, pixel (5, 9): the training statistics.
    const float got = d.test.f[((2 * 3 + c) * 32 + 5) * 32 + 9];
    EXPECT_NEAR(got, (pixel(0, 2, c, 5, 9) / 255.0 - m) / s, 1e-4);
  }
  EXPECT_TRUE(has(d.normalisation, "from the training split"));
}

TEST(DataCifar, DamagedFilesAreDataErrorsNamingTheFile) {
  TempDir t;
  const fs::path dir = t.path / "cifar-10-batches-bin";
  const fs::path b3 = dir / "data_batch_3.bin", test = dir / "test_batch.bin";
  struct Case {
    std::string name;
    std::function<void()> damage;
    fs::path file;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"truncated", [&] { write_all(b3, records(3, 3).substr(0, 5000)); }, b3,
       "not a whole number of 3073-byte records"},
      {"empty", [&] { write_all(b3, ""); }, b3, "empty"},
      {"label out of range",
       [&] {
         std::string b = records(3, 3);
         b[3073] = 12;
         write_all(b3, b);
       },
       b3, "record 1 has label 12"},
      {"missing test batch", [&] { fs::remove(test); }, test, "missing"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    write_cifar(t.path);
    c.damage();
    const std::string e =
        data_error([&] { load_dataset("cifar10", t.path.string()); });
    EXPECT_TRUE(has(e, c.file.string())) << e;
    EXPECT_TRUE(has(e, c.message)) << e;
  }
  const std::string e = data_error([] { load_dataset("cifar10", ""); });
  EXPECT_TRUE(has(e, "needs a path")) << e;
}

}  // namespace
}  // namespace nnbench::data
