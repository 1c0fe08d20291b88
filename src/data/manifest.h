#pragma once
// SHA-256 and sizes of data files nnbench knows, shipped in the code so that
// a corrupted or different copy is caught before it produces numbers.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace nnbench::data {

struct ManifestEntry {
  std::string dataset;  // load_dataset name
  std::string file;     // file name inside the dataset's folder
  int64_t bytes = 0;
  std::string sha256;  // lower-case hex
};

const std::vector<ManifestEntry>& manifest();

// nullptr when the manifest has no entry for (dataset, file name).
const ManifestEntry* find_manifest_entry(std::string_view dataset,
                                         std::string_view file);

// SHA-256 (OpenSSL EVP) fed in pieces, for bytes that stream by
// (data/fetch.cpp); hex() is lower-case and ends it.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(std::string_view bytes);
  std::string hex();

 private:
  void* ctx_;  // EVP_MD_CTX
};

// Lower-case hex SHA-256 of `bytes`.
std::string sha256_hex(std::string_view bytes);

// Compares `bytes`, the content of `path`, with the entry for (dataset,
// path's file name). Returns false when there is none; throws DataError
// naming the file on a size mismatch (truncated or extended) or a hash
// mismatch (corrupted or a different version).
bool verify_file(std::string_view dataset, const std::filesystem::path& path,
                 std::string_view bytes);

}  // namespace nnbench::data
