// CIFAR-10, binary version (cifar-10-batches-bin): every record is one label
// byte then 3072 pixel bytes, the red, green and blue 32x32 planes in
// row-major order -- already the [C,H,W] layout of the description.
#include "data/dataset.h"
#include "data/format_util.h"

namespace nnbench::data {
namespace fs = std::filesystem;
using internal::fail;

namespace {

constexpr int64_t kChannels = 3, kSide = 32, kClasses = 10;
constexpr int64_t kPixels = kChannels * kSide * kSide;
constexpr int64_t kRecord = 1 + kPixels;

// Appends the records of one batch file to `im`.
void append_file(const fs::path& file, internal::ByteImages& im) {
  const std::string b = internal::read_file(file);
  const int64_t bytes = static_cast<int64_t>(b.size());
  // The format has no header: the size is the only structure to check, and
  // a partial record means truncation or the wrong file.
  if (bytes == 0) fail(file, "empty");
  if (bytes % kRecord != 0) {
    fail(file, std::to_string(bytes) +
                   " bytes is not a whole number of 3073-byte records "
                   "(1 label + 3x32x32 pixels): truncated or not the binary "
                   "CIFAR-10 version");
  }
  const int64_t n = bytes / kRecord;
  im.bytes.reserve(im.bytes.size() + n * kPixels);
  for (int64_t r = 0; r < n; ++r) {
    const char* p = b.data() + r * kRecord;
    const auto label = static_cast<unsigned char>(p[0]);
    if (label >= kClasses) {
      fail(file, "record " + std::to_string(r) + " has label " +
                     std::to_string(label) +
                     ", not a class in [0, 10) (CIFAR-100 or another file?)");
    }
    im.labels.push_back(label);
    im.bytes.append(p + 1, kPixels);
  }
  im.size += n;
}

}  // namespace

Dataset load_cifar10(const std::string& path, const DatasetOptions& /*o*/) {
  internal::require_dir(path, dataset_help("cifar10"));
  const fs::path dir = internal::maybe_sub(path, "cifar-10-batches-bin");
  Dataset d;
  d.source = dir.string();
  // Checks every file exists before reading 180 MB, so a missing test batch
  // is reported at once.
  std::vector<fs::path> train_files;
  for (int k = 1; k <= 5; ++k) {
    train_files.push_back(dir / ("data_batch_" + std::to_string(k) + ".bin"));
  }
  const fs::path test_file = dir / "test_batch.bin";
  std::vector<fs::path> all = train_files;
  all.push_back(test_file);
  for (const auto& f : all) {
    std::error_code ec;
    if (!fs::is_regular_file(f, ec)) {
      fail(f, "missing; expected " + dataset_help("cifar10"));
    }
  }
  internal::ByteImages train, test;
  train.shape = test.shape = {kChannels, kSide, kSide};
  for (const auto& f : train_files) append_file(f, train);
  append_file(test_file, test);
  internal::set_images(d, train, test, kClasses);
  d.integrity = "no SHA-256 known for cifar10; record sizes and labels checked";
  return d;
}

}  // namespace nnbench::data
