#include "data/manifest.h"

#include <openssl/evp.h>

#include "data/dataset.h"
#include "data/sources.h"

namespace nnbench::data {

const std::vector<ManifestEntry>& manifest() {
  static const std::vector<ManifestEntry> entries = [] {
    // Debian's dataset-fashion-mnist (0.0~git20200523.55506a9-1): the files
    // of zalandoresearch/fashion-mnist, hashed once with sha256sum. Its
    // gzip headers differ from the download's (data/sources.cpp), which is
    // listed too: either copy is the real set.
    std::vector<ManifestEntry> e = {
        {"fashion-mnist", "train-images-idx3-ubyte.gz", 26421856,
         "b0564c3eedabfbf835052cff8503ea422014ce006caf5b757f851416ee8300c7"},
        {"fashion-mnist", "train-labels-idx1-ubyte.gz", 29491,
         "0ae29f65d86684f32d1b9c85147786c547b9c6aebcaf235f0400a0cce308b056"},
        {"fashion-mnist", "t10k-images-idx3-ubyte.gz", 4422079,
         "cc1d090a38ace84dfa1aa66e3ada7c336ef481a96936906477e6dd344da56eaa"},
        {"fashion-mnist", "t10k-labels-idx1-ubyte.gz", 5125,
         "8d3605d196f4be44669e46906da9733c8131fef761fdbfec72c424d5222f1a05"},
    };
    // Only Fashion-MNIST's: copies of the other sets come from many
    // mirrors (and tests make tiny ones under the same names), so they are
    // checked when `nnbench data fetch` downloads them (data/fetch.h).
    for (const auto& f : find_source("fashion-mnist")->files)
      e.push_back({"fashion-mnist", url_file_name(f.url), f.bytes, f.sha256});
    return e;
  }();
  return entries;
}

const ManifestEntry* find_manifest_entry(std::string_view dataset,
                                         std::string_view file) {
  for (const auto& e : manifest()) {
    if (e.dataset == dataset && e.file == file) return &e;
  }
  return nullptr;
}

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (ctx_ == nullptr || EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_),
                                           EVP_sha256(), nullptr) != 1)
    throw nnbench::Error("OpenSSL: SHA-256 failed");
}

Sha256::~Sha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Sha256::update(std::string_view bytes) {
  if (EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), bytes.data(),
                       bytes.size()) != 1)
    throw nnbench::Error("OpenSSL: SHA-256 failed");
}

std::string Sha256::hex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), digest, &len) != 1)
    throw nnbench::Error("OpenSSL: SHA-256 failed");
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < len; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

std::string sha256_hex(std::string_view bytes) {
  Sha256 h;
  h.update(bytes);
  return h.hex();
}

bool verify_file(std::string_view dataset, const std::filesystem::path& path,
                 std::string_view bytes) {
  const std::string file = path.filename().string();
  const auto size = static_cast<int64_t>(bytes.size());
  std::vector<const ManifestEntry*> known;
  for (const auto& e : manifest()) {
    if (e.dataset == dataset && e.file == file) known.push_back(&e);
  }
  if (known.empty()) return false;
  // The size first: it names the common failure (an interrupted copy)
  // precisely and costs nothing. Sizes not published (0) match any.
  std::vector<const ManifestEntry*> sized;
  for (const auto* e : known) {
    if (e->bytes == 0 || e->bytes == size) sized.push_back(e);
  }
  if (sized.empty()) {
    const int64_t want = known.front()->bytes;
    throw DataError(
        path.string() + ": " + std::to_string(size) + " bytes, expected " +
        std::to_string(want) +
        (known.size() > 1 ? " (or another known copy's size)" : "") + " (" +
        (size < want ? "truncated" : "extended") +
        "); reinstall or re-download it");
  }
  const std::string got = sha256_hex(bytes);
  std::string expected;
  for (const auto* e : sized) {
    if (got == e->sha256) return true;
    expected += (expected.empty() ? "" : " or ") + e->sha256;
  }
  throw DataError(path.string() + ": SHA-256 mismatch (corrupted or a " +
                  "different version): got " + got + ", expected " + expected);
}

}  // namespace nnbench::data
