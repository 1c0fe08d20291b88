#include "data/dataset.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>

#include "data/fetch.h"
#include "data/format_util.h"
#include "data/manifest.h"
#include "model/analysis.h"
#include "util/clock.h"

namespace nnbench::data {
namespace fs = std::filesystem;

namespace {

std::string format_floats(const std::vector<float>& v) {
  std::ostringstream s;
  s.precision(4);
  s << "[";
  for (size_t k = 0; k < v.size(); ++k) s << (k ? ", " : "") << v[k];
  s << "]";
  return s.str();
}

}  // namespace

namespace internal {

void fail(const fs::path& file, const std::string& what) {
  throw DataError(file.string() + ": " + what);
}

std::string read_file(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(file, ec)) fail(file, "missing");
  if (!fs::is_regular_file(file, ec)) fail(file, "not a regular file");
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(file, "cannot open for reading");
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size < 0) fail(file, "cannot determine its size");
  std::string bytes(static_cast<size_t>(size), '\0');
  if (size > 0 && !in.read(bytes.data(), size)) fail(file, "read error");
  return bytes;
}

void require_dir(const fs::path& dir, const std::string& need) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) fail(dir, "missing; expected " + need);
  if (!fs::is_directory(dir, ec)) {
    fail(dir, "not a directory; expected " + need);
  }
}

fs::path maybe_sub(const fs::path& dir, const std::string& sub) {
  std::error_code ec;
  return fs::is_directory(dir / sub, ec) ? dir / sub : dir;
}

bool check_manifest(const std::string& dataset, const fs::path& file,
                    const std::string& bytes, bool verify) {
  return verify && verify_file(dataset, file, bytes);
}

void set_images(Dataset& d, const ByteImages& train, const ByteImages& test,
                int64_t classes) {
  const int64_t channels = train.shape.at(0);
  const int64_t plane = train.shape.at(1) * train.shape.at(2);
  // Exact per-channel histograms of the training bytes, four interleaved
  // per channel: runs of one value (black backgrounds) would otherwise
  // serialise on one counter.
  std::vector<std::array<int64_t, 4 * 256>> hist(channels);
  for (auto& h : hist) h.fill(0);
  const auto* px =
      reinterpret_cast<const unsigned char*>(train.bytes.data() + train.offset);
  for (int64_t n = 0; n < train.size; ++n) {
    for (int64_t c = 0; c < channels; ++c, px += plane) {
      int64_t* h = hist[c].data();
      int64_t k = 0;
      for (; k + 4 <= plane; k += 4) {
        ++h[px[k]], ++h[256 + px[k + 1]], ++h[512 + px[k + 2]],
            ++h[768 + px[k + 3]];
      }
      for (; k < plane; ++k) ++h[px[k]];
    }
  }
  std::vector<float> mean(channels), stdev(channels);
  std::vector<std::array<float, 256>> lut(channels);
  for (int64_t c = 0; c < channels; ++c) {
    double count = 0, sum = 0, sq = 0;
    for (int v = 0; v < 256; ++v) {
      const auto& h = hist[c];
      const double x = v / 255.0,
                   w = static_cast<double>(h[v] + h[256 + v] + h[512 + v] +
                                           h[768 + v]);
      count += w, sum += w * x, sq += w * x * x;
    }
    const double m = count > 0 ? sum / count : 0.0;
    const double var = count > 0 ? sq / count - m * m : 0.0;
    // A constant channel would divide by zero; leave its scale alone.
    const double sd = var > 1e-12 ? std::sqrt(var) : 1.0;
    mean[c] = static_cast<float>(m);
    stdev[c] = static_cast<float>(sd);
    for (int v = 0; v < 256; ++v) {
      lut[c][v] = static_cast<float>((v / 255.0 - m) / sd);
    }
  }
  auto convert = [&](const ByteImages& in, Split& out) {
    out.input.shape = in.shape;
    out.input.dtype = model::DType::kFloat32;
    out.label_shape = {};
    out.classes = classes;
    out.size = in.size;
    out.labels = in.labels;
    out.channel_mean = mean;
    out.channel_std = stdev;
    out.f.resize(in.size * channels * plane);
    const auto* p =
        reinterpret_cast<const unsigned char*>(in.bytes.data() + in.offset);
    float* f = out.f.data();
    for (int64_t n = 0; n < in.size; ++n) {
      for (int64_t c = 0; c < channels; ++c, p += plane, f += plane) {
        const float* l = lut[c].data();
        for (int64_t k = 0; k < plane; ++k) f[k] = l[p[k]];
      }
    }
  };
  convert(train, d.train);
  convert(test, d.test);
  d.normalisation = "pixels/255, then per channel (x - mean) / std with mean " +
                    format_floats(mean) + " std " + format_floats(stdev) +
                    " from the training split";
}

}  // namespace internal

namespace {

constexpr char kFashionMnistDir[] = "/usr/share/datasets/fashion-mnist";
// Installed on every Debian system (base-files), so the character model
// always has a corpus.
constexpr char kDefaultText[] = "/usr/share/common-licenses/GPL-3";

}  // namespace

std::vector<std::string> dataset_names() {
  return {"fashion-mnist", "mnist", "cifar10", "imdb", "text", "ptb"};
}

std::string dataset_help(const std::string& name) {
  if (name == "fashion-mnist") {
    return std::string(
               "folder of {train,t10k}-{images-idx3,labels-idx1}-"
               "ubyte.gz (default ") +
           kFashionMnistDir + ", Debian package dataset-fashion-mnist)";
  }
  if (name == "mnist") {
    return "folder of MNIST's {train,t10k}-{images-idx3,labels-idx1}-ubyte"
           "[.gz] (default: a copy `nnbench data fetch` made)";
  }
  if (name == "cifar10") {
    return "the cifar-10-batches-bin folder (data_batch_1..5.bin, "
           "test_batch.bin) or its parent (default: a copy `nnbench data "
           "fetch` made)";
  }
  if (name == "imdb") {
    return "the aclImdb folder (train/{pos,neg}/*.txt, test/{pos,neg}/*.txt) "
           "or its parent (default: a copy `nnbench data fetch` made)";
  }
  if (name == "text") {
    return std::string("any UTF-8 text file (default ") + kDefaultText + ")";
  }
  if (name == "ptb") {
    return "folder of ptb.train.txt, ptb.valid.txt, ptb.test.txt, or the "
           "simple-examples folder holding data/ (default: a copy `nnbench "
           "data fetch` made)";
  }
  throw nnbench::Error("unknown dataset '" + name + "'");
}

std::string dataset_path(const std::string& name, const std::string& path) {
  const auto names = dataset_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    throw nnbench::Error("unknown dataset '" + name + "' (known: " + list +
                         ")");
  }
  if (!path.empty()) return path;
  std::error_code ec;
  if (name == "text") return kDefaultText;
  if (name == "fashion-mnist" && fs::is_directory(kFashionMnistDir, ec))
    return kFashionMnistDir;
  if (is_fetched(fetched_dir(name))) return fetched_dir(name);
  if (name == "fashion-mnist")
    return kFashionMnistDir;  // names what is missing
  throw DataError("dataset '" + name + "' needs a path: " + dataset_help(name) +
                  "; or download it once with `nnbench data fetch " + name +
                  "`");
}

Dataset load_dataset(const std::string& name, const std::string& path,
                     const DatasetOptions& o) {
  if (o.seq_len < 0) throw nnbench::Error("seq_len must be >= 0");
  if (o.vocab < 0) throw nnbench::Error("vocab must be >= 0");
  if (path == kSyntheticData) {
    const auto t0 = util::Clock::now();
    Dataset d = synthetic_dataset(name, o);
    d.load_seconds = util::seconds_since(t0);
    return d;
  }
  const std::string where = dataset_path(name, path);
  const auto t0 = util::Clock::now();
  Dataset d;
  if (name == "fashion-mnist" || name == "mnist") {
    d = load_idx(name, where, o);
  } else if (name == "cifar10") {
    d = load_cifar10(where, o);
  } else if (name == "imdb") {
    d = load_imdb(where, o);
  } else if (name == "text") {
    d = load_char_text(where, o);
  } else {
    d = load_ptb(where, o);
  }
  d.name = name;
  if (is_fetched(where) && d.integrity.rfind("SHA-256 of", 0) != 0) {
    d.integrity = "SHA-256 checked when `nnbench data fetch` downloaded it (" +
                  where + "/nnbench-fetch.json); " + d.integrity;
  }
  d.load_seconds = util::seconds_since(t0);
  return d;
}

}  // namespace nnbench::data
