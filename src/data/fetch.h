#pragma once
// `nnbench data fetch NAME`: a dataset downloaded from its canonical source
// (data/sources.h), checked against its published size and SHA-256 while it
// streams, unpacked where it is an archive, and moved into place whole: a
// failed or interrupted fetch leaves nothing a run could mistake for data.
#include <cstdint>
#include <functional>
#include <string>

#include "data/sources.h"

namespace nnbench::data {

// Where fetched datasets live: $XDG_DATA_HOME/nnbench/datasets/NAME (else
// ~/.local/share/...). load_dataset reads it when no path is given.
std::string fetched_dir(const std::string& dataset);

// Whether `dir` holds a completed fetch (its record file is there).
bool is_fetched(const std::string& dir);

struct FetchOptions {
  std::string dir;  // "": fetched_dir(dataset)
  // Replaces each URL's folder ("http://host:port/path"): a mirror holding
  // the same files under the same names (NNBENCH_DATA_MIRROR).
  std::string mirror;
  long connect_seconds = 20, stall_seconds = 60;
  std::function<void(const std::string&)> progress;  // one line per file
};

struct FetchResult {
  std::string dir;
  int64_t downloaded_bytes = 0;  // 0 when it was already there
  bool already_present = false;
};

// Throws DataError naming the URL (unreachable, HTTP error, stalled, too
// large, truncated, SHA-256 mismatch: each with the `--data synthetic`
// alternative) or the folder (exists but is not a fetch, not writable).
FetchResult fetch_dataset(const DatasetSource& source, const FetchOptions& o);

}  // namespace nnbench::data
