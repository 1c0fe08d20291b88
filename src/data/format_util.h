#pragma once
// Helpers the format parsers and the loader share (out-of-line ones in
// dataset.cpp). Not part of the public interface: include data/dataset.h
// and data/loader.h instead.
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>

#include "data/dataset.h"

namespace nnbench::data::internal {

// Seeds and draws of the loader (the splitmix64 finaliser).
inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Hashing instead of adding keeps (seed 1, epoch 1) and (seed 2, epoch 0)
// apart.
inline uint64_t mix_seed(uint64_t a, uint64_t b) {
  return splitmix64(a ^ splitmix64(b));
}

// Uniform in [0, n) by rejection. Written out rather than
// std::uniform_int_distribution, whose algorithm differs between standard
// libraries: the same seed gives the same order everywhere (mt19937_64
// itself is fully specified).
inline uint64_t uniform_below(std::mt19937_64& rng, uint64_t n) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t r;
  do r = rng();
  while (r >= limit);
  return r % n;
}

// Throws DataError "<file>: <what>".
[[noreturn]] void fail(const std::filesystem::path& file,
                       const std::string& what);

// The whole file. A missing file, a directory or a read error is a
// DataError naming it.
std::string read_file(const std::filesystem::path& file);

// `dir` must be an existing directory; `need` says what it should hold.
void require_dir(const std::filesystem::path& dir, const std::string& need);

// `dir/sub` when that directory exists, else `dir`: users may point at the
// archive's folder or at its parent.
std::filesystem::path maybe_sub(const std::filesystem::path& dir,
                                const std::string& sub);

// Checks `bytes` of `file` against the manifest entry of (dataset, file
// name) when there is one and `verify` is on. Returns true when a SHA-256
// was compared; throws DataError on a size or hash mismatch.
bool check_manifest(const std::string& dataset,
                    const std::filesystem::path& file, const std::string& bytes,
                    bool verify);

// Images as the files hold them: bytes, [C,H,W] per sample.
struct ByteImages {
  model::Shape shape;  // [C,H,W]
  int64_t size = 0;
  std::string bytes;  // size * C*H*W pixels from `offset` on
  size_t offset = 0;
  std::vector<int64_t> labels;
};

// Sets d.train and d.test to float images: pixels/255, then (x - mean) / std
// per channel with the statistics of `train` (applied to test too), and
// records them in the splits and d.normalisation. Statistics come from
// byte histograms (exact) and the conversion is one table lookup per
// pixel: on Fashion-MNIST this is about a third of the load time.
void set_images(Dataset& d, const ByteImages& train, const ByteImages& test,
                int64_t classes);

}  // namespace nnbench::data::internal
