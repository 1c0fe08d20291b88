#include "data/manifest.h"

#include <openssl/evp.h>

#include "data/dataset.h"

namespace nnbench::data {

const std::vector<ManifestEntry>& manifest() {
  // Debian's dataset-fashion-mnist (0.0~git20200523.55506a9-1): the files of
  // zalandoresearch/fashion-mnist, hashed once with sha256sum.
  static const std::vector<ManifestEntry> entries = {
      {"fashion-mnist", "train-images-idx3-ubyte.gz", 26421856,
       "b0564c3eedabfbf835052cff8503ea422014ce006caf5b757f851416ee8300c7"},
      {"fashion-mnist", "train-labels-idx1-ubyte.gz", 29491,
       "0ae29f65d86684f32d1b9c85147786c547b9c6aebcaf235f0400a0cce308b056"},
      {"fashion-mnist", "t10k-images-idx3-ubyte.gz", 4422079,
       "cc1d090a38ace84dfa1aa66e3ada7c336ef481a96936906477e6dd344da56eaa"},
      {"fashion-mnist", "t10k-labels-idx1-ubyte.gz", 5125,
       "8d3605d196f4be44669e46906da9733c8131fef761fdbfec72c424d5222f1a05"},
  };
  return entries;
}

const ManifestEntry* find_manifest_entry(std::string_view dataset,
                                         std::string_view file) {
  for (const auto& e : manifest()) {
    if (e.dataset == dataset && e.file == file) return &e;
  }
  return nullptr;
}

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(),
                 nullptr) != 1) {
    throw nnbench::Error("OpenSSL: SHA-256 failed");
  }
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < len; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

bool verify_file(std::string_view dataset, const std::filesystem::path& path,
                 std::string_view bytes) {
  const ManifestEntry* e =
      find_manifest_entry(dataset, path.filename().string());
  if (e == nullptr) return false;
  // The size first: it names the common failure (an interrupted copy)
  // precisely and costs nothing.
  if (static_cast<int64_t>(bytes.size()) != e->bytes) {
    throw DataError(path.string() + ": " + std::to_string(bytes.size()) +
                    " bytes, expected " + std::to_string(e->bytes) + " (" +
                    (static_cast<int64_t>(bytes.size()) < e->bytes
                         ? "truncated"
                         : "extended") +
                    "); reinstall or re-download it");
  }
  const std::string got = sha256_hex(bytes);
  if (got != e->sha256) {
    throw DataError(path.string() + ": SHA-256 mismatch (corrupted or a " +
                    "different version): got " + got + ", expected " +
                    e->sha256);
  }
  return true;
}

}  // namespace nnbench::data
