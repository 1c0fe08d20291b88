// Fashion-MNIST as installed by scripts/setup, and MNIST-format IDX files
// written here: valid ones load, damaged ones fail with a DataError naming
// the file before any timing could start.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>

#include "data/dataset.h"
#include "data/manifest.h"
#include "data_test_util.h"

namespace nnbench::data {
namespace {
namespace fs = std::filesystem;
using namespace testing;

constexpr char kFashion[] = "/usr/share/datasets/fashion-mnist";

// An unsigned-byte IDX file: magic 0 0 0x08 ndims, big-endian dims, data.
std::string idx_bytes(const std::vector<uint32_t>& dims,
                      const std::vector<uint8_t>& data) {
  std::string b = {0, 0, 0x08, static_cast<char>(dims.size())};
  for (uint32_t d : dims) {
    for (int s = 24; s >= 0; s -= 8) b += static_cast<char>((d >> s) & 255);
  }
  b.append(data.begin(), data.end());
  return b;
}

void write_gz(const fs::path& p, const std::string& b) {
  gzFile f = gzopen(p.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, b.data(), static_cast<unsigned>(b.size())),
            static_cast<int>(b.size()));
  gzclose(f);
}

// A tiny MNIST folder: n_train and n_test 4x5 images, labels k % 10.
void write_mnist(const fs::path& dir, int n_train = 20, int n_test = 10) {
  for (auto [prefix, n] : {std::pair{"train", n_train}, {"t10k", n_test}}) {
    std::vector<uint8_t> pixels(n * 20), labels(n);
    for (size_t k = 0; k < pixels.size(); ++k) pixels[k] = (k * 37) % 256;
    for (int k = 0; k < n; ++k) labels[k] = k % 10;
    write_gz(dir / (std::string(prefix) + "-images-idx3-ubyte.gz"),
             idx_bytes({uint32_t(n), 4, 5}, pixels));
    write_gz(dir / (std::string(prefix) + "-labels-idx1-ubyte.gz"),
             idx_bytes({uint32_t(n)}, labels));
  }
}

TEST(DataIdx, FashionMnistInstalledFilesLoadAndVerify) {
  ASSERT_TRUE(fs::exists(kFashion)) << "run scripts/setup";
  const Dataset d = load_dataset("fashion-mnist", "");
  std::printf("fashion-mnist load: %.3f s (%s)\n", d.load_seconds,
              d.integrity.c_str());
  EXPECT_EQ(d.train.size, 60000);
  EXPECT_EQ(d.test.size, 10000);
  EXPECT_EQ(d.train.input.shape, (model::Shape{1, 28, 28}));
  EXPECT_EQ(d.train.label_shape, model::Shape{});
  EXPECT_EQ(d.train.classes, 10);
  EXPECT_EQ(d.train.f.size(), 60000u * 784u);
  EXPECT_TRUE(has(d.integrity, "4 of 4 files verified")) << d.integrity;
  std::vector<int> hist(10, 0), test_hist(10, 0);
  for (int64_t l : d.train.labels) ++hist.at(l);
  for (int64_t l : d.test.labels) ++test_hist.at(l);
  for (int c = 0; c < 10; ++c) {
    EXPECT_EQ(hist[c], 6000) << c;
    EXPECT_EQ(test_hist[c], 1000) << c;
  }
  double sum = 0, sq = 0;
  for (float v : d.train.f) sum += v, sq += double(v) * v;
  const double mean = sum / d.train.f.size();
  EXPECT_NEAR(mean, 0.0, 1e-3);
  EXPECT_NEAR(std::sqrt(sq / d.train.f.size() - mean * mean), 1.0, 1e-3);
  // The published statistics of Fashion-MNIST's training pixels.
  EXPECT_NEAR(d.train.channel_mean.at(0), 0.2860, 1e-3);
  EXPECT_NEAR(d.train.channel_std.at(0), 0.3530, 1e-3);
}

TEST(DataIdx, TinyMnistLoadsCompressedOrNot) {
  TempDir t;
  write_mnist(t.path);
  Dataset d = load_dataset("mnist", t.path.string());
  EXPECT_EQ(d.train.size, 20);
  EXPECT_EQ(d.test.size, 10);
  EXPECT_EQ(d.train.input.shape, (model::Shape{1, 4, 5}));
  EXPECT_EQ(d.train.labels[13], 3);
  EXPECT_TRUE(has(d.integrity, "no SHA-256 known")) << d.integrity;
  // Pixel 7 of the training split is (7*37 mod 256)/255, standardised.
  const float m = d.train.channel_mean[0], s = d.train.channel_std[0];
  EXPECT_NEAR(d.train.f[7], (3 / 255.f - m) / s, 1e-5);
  // Unpacked files read the same.
  for (const char* base :
       {"train-images-idx3-ubyte", "t10k-labels-idx1-ubyte"}) {
    gzFile f = gzopen((t.path / (std::string(base) + ".gz")).c_str(), "rb");
    std::string raw(1 << 16, '\0');
    raw.resize(gzread(f, raw.data(), raw.size()));
    gzclose(f);
    fs::remove(t.path / (std::string(base) + ".gz"));
    write_all(t.path / base, raw);
  }
  const Dataset u = load_dataset("mnist", t.path.string());
  EXPECT_EQ(u.train.f, d.train.f);
  EXPECT_EQ(u.test.labels, d.test.labels);
}

TEST(DataIdx, MalformedFilesAreDataErrorsNamingTheFile) {
  TempDir t;
  const std::string dir = t.path.string();
  const fs::path images = t.path / "train-images-idx3-ubyte.gz";
  const fs::path labels = t.path / "train-labels-idx1-ubyte.gz";
  auto load = [&] { load_dataset("mnist", dir); };
  struct Case {
    std::string name;
    std::function<void()> damage;
    fs::path file;
    std::string message;
  };
  const std::vector<uint8_t> px(19 * 20, 1);
  const std::vector<Case> cases = {
      {"bad magic",
       [&] { write_gz(images, "\x01\x02\x08\x03" + std::string(50, 0)); },
       images, "bad magic"},
      {"truncated data",
       [&] {
         write_gz(images, idx_bytes({20, 4, 5}, px));
       },
       images,
       "truncated: the header declares 400 data bytes, the file holds 380"},
      {"wrong dimension count",
       [&] {
         write_gz(images, idx_bytes({20, 20}, std::vector<uint8_t>(400)));
       },
       images, "2 dimensions, expected 3"},
      {"wrong element type",
       [&] {
         std::string b = idx_bytes({20, 4, 5}, std::vector<uint8_t>(400));
         b[2] = 0x0d;
         write_gz(images, b);
       },
       images, "element type 0x0d"},
      {"trailing bytes",
       [&] { write_gz(labels, idx_bytes({20}, std::vector<uint8_t>(21))); },
       labels, "1 unexpected bytes"},
      {"count mismatch",
       [&] { write_gz(labels, idx_bytes({19}, std::vector<uint8_t>(19))); },
       labels, "19 labels but"},
      {"label out of range",
       [&] { write_gz(labels, idx_bytes({20}, std::vector<uint8_t>(20, 10))); },
       labels, "label 10 of sample 0"},
      {"missing file", [&] { fs::remove(labels); }, labels, "missing"},
      {"truncated gzip",
       [&] {
         const std::string b = read_all(images);
         write_all(images, b.substr(0, b.size() - 12));
       },
       images, "truncated gzip stream"},
      {"header only", [&] { write_gz(images, std::string("\0\0", 2)); }, images,
       "too short for an IDX header"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    write_mnist(t.path);
    c.damage();
    const std::string e = data_error(load);
    EXPECT_TRUE(has(e, c.file.string())) << e;
    EXPECT_TRUE(has(e, c.message)) << e;
  }
}

TEST(DataIdx, RandomDamageNeverCrashes) {
  // Unpacked files, so damage reaches the IDX parser instead of gzip's CRC.
  TempDir t;
  write_mnist(t.path);
  const std::string images = "train-images-idx3-ubyte";
  const std::string labels = "t10k-labels-idx1-ubyte";
  const std::string good_images =
      idx_bytes({20, 4, 5}, std::vector<uint8_t>(400, 3));
  const std::string good_labels = idx_bytes({10}, std::vector<uint8_t>(10, 3));
  fs::remove(t.path / (images + ".gz"));
  fs::remove(t.path / (labels + ".gz"));
  write_all(t.path / images, good_images);
  write_all(t.path / labels, good_labels);
  std::mt19937 rng(11);
  for (int iter = 0; iter < 120; ++iter) {
    const bool img = iter % 2;
    const std::string& base = img ? images : labels;
    std::string b = img ? good_images : good_labels;
    if (iter % 3 == 0) {
      b.resize(rng() % b.size());
    } else {
      for (int k = 0; k < 3; ++k) b[rng() % b.size()] = char(rng());
    }
    write_all(t.path / base, b);
    try {
      load_dataset("mnist", t.path.string());
    } catch (const DataError& e) {
      EXPECT_TRUE(has(e.what(), base)) << e.what();
    }
    write_all(t.path / base, img ? good_images : good_labels);
  }
}

TEST(DataIdx, ChecksumMismatchOfACopiedFashionMnistFile) {
  ASSERT_TRUE(fs::exists(kFashion)) << "run scripts/setup";
  TempDir t;
  for (const auto& e : fs::directory_iterator(kFashion)) {
    fs::copy_file(e.path(), t.path / e.path().filename());
  }
  // One changed byte in the deflate data of the training labels.
  const fs::path labels = t.path / "train-labels-idx1-ubyte.gz";
  std::string b = read_all(labels);
  b[b.size() / 2] ^= 0x5a;
  write_all(labels, b);
  std::string e =
      data_error([&] { load_dataset("fashion-mnist", t.path.string()); });
  EXPECT_TRUE(has(e, labels.string() + ": SHA-256 mismatch")) << e;
  // Truncated: the size check names it before hashing.
  write_all(labels, b.substr(0, 1000));
  e = data_error([&] { load_dataset("fashion-mnist", t.path.string()); });
  EXPECT_TRUE(has(e, labels.string() + ": 1000 bytes, expected 29491")) << e;
  // Without verification the damage still cannot pass silently: gzip's CRC
  // or the IDX sizes catch it.
  DatasetOptions off;
  off.verify_checksums = false;
  e = data_error([&] { load_dataset("fashion-mnist", t.path.string(), off); });
  EXPECT_TRUE(has(e, labels.string())) << e;
}

TEST(DataIdx, ManifestAndNamesAndPaths) {
  EXPECT_EQ(sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  ASSERT_NE(find_manifest_entry("fashion-mnist", "t10k-labels-idx1-ubyte.gz"),
            nullptr);
  EXPECT_EQ(find_manifest_entry("mnist", "t10k-labels-idx1-ubyte.gz"), nullptr);
  EXPECT_EQ(dataset_names(),
            (std::vector<std::string>{"fashion-mnist", "mnist", "cifar10",
                                      "imdb", "text", "ptb"}));
  EXPECT_THROW(load_dataset("imagenet", ""), nnbench::Error);
  const char* xdg = std::getenv("XDG_DATA_HOME");
  const std::string saved = xdg ? xdg : "";
  setenv("XDG_DATA_HOME", "/nonexistent", 1);  // no fetched copy either
  const std::string e = data_error([] { load_dataset("mnist", ""); });
  if (xdg)
    setenv("XDG_DATA_HOME", saved.c_str(), 1);
  else
    unsetenv("XDG_DATA_HOME");
  EXPECT_TRUE(has(e, "needs a path")) << e;
  EXPECT_TRUE(has(data_error([] { load_dataset("mnist", "/nonexistent"); }),
                  "/nonexistent: missing"));
}

}  // namespace
}  // namespace nnbench::data
