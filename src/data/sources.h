#pragma once
// Where each dataset comes from: its canonical download URLs with their
// sizes and SHA-256, the catalog `nnbench data fetch` (data/fetch.h) reads
// and the file manifest (data/manifest.h) checks loaded copies against.
#include <cstdint>
#include <string>
#include <vector>

namespace nnbench::data {

struct SourceFile {
  std::string url;
  int64_t bytes = 0;    // 0: not published; the SHA-256 alone decides
  std::string sha256;   // lower-case hex
  bool unpack = false;  // a .tar.gz unpacked into the dataset's folder
};

struct DatasetSource {
  std::string dataset;  // load_dataset name
  std::vector<SourceFile> files;
  std::string hashes_from;  // who published the SHA-256s
};

const std::vector<DatasetSource>& dataset_sources();

// nullptr when `dataset` has no download (text: any local file will do).
const DatasetSource* find_source(const std::string& dataset);

// The last segment of a URL's path: the file name it is saved under.
std::string url_file_name(const std::string& url);

}  // namespace nnbench::data
