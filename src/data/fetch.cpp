#include "data/fetch.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "data/dataset.h"
#include "data/manifest.h"
#include "util/atomic_file.h"
#include "util/download.h"
#include "util/error.h"
#include "util/paths.h"
#include "util/unpack.h"

namespace nnbench::data {
namespace {

namespace fs = std::filesystem;

constexpr const char* kRecord = "nnbench-fetch.json";
// For the one file whose size is not published (PTB's train split, 5 MB).
constexpr int64_t kUnpublishedSizeBound = int64_t{64} << 20;

// A sibling of the destination (so the final rename stays on one file
// system), removed with its content unless kept.
class Staging {
 public:
  explicit Staging(const fs::path& dest) {
    std::string t = (dest.parent_path() /
                     ("." + dest.filename().string() + ".partial-XXXXXX"))
                        .string();
    if (mkdtemp(t.data()) == nullptr)
      throw DataError(dest.parent_path().string() +
                      ": cannot create a folder to download into");
    path_ = t;
  }
  ~Staging() {
    std::error_code ec;
    if (!kept_) fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  void keep() { kept_ = true; }

 private:
  fs::path path_;
  bool kept_ = false;
};

std::string alternative() {
  return "; without this download, copy the files from elsewhere and pass "
         "their folder (--data PATH), or time the task on --data synthetic "
         "(the real set's shapes and sizes, accuracy not measured)";
}

std::string source_url(const SourceFile& f, const std::string& mirror) {
  if (mirror.empty()) return f.url;
  return mirror + (mirror.back() == '/' ? "" : "/") + url_file_name(f.url);
}

// Downloads `f` into `dir`, hashing as it streams; returns the bytes.
int64_t fetch_file(const SourceFile& f, const std::string& url,
                   const fs::path& file, const FetchOptions& o) {
  std::ofstream out(file, std::ios::binary);
  if (!out) throw DataError(file.string() + ": cannot be written");
  Sha256 sha;
  util::DownloadLimits limits;
  limits.max_bytes = f.bytes > 0 ? f.bytes : kUnpublishedSizeBound;
  limits.connect_seconds = o.connect_seconds;
  limits.stall_seconds = o.stall_seconds;
  int64_t got = 0;
  try {
    got = util::download(url, limits, [&](std::string_view chunk) {
      sha.update(chunk);
      out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      if (!out) throw DataError(file.string() + ": write failed (disk full?)");
    });
  } catch (const DataError&) {
    throw;
  } catch (const nnbench::Error& e) {
    throw DataError(std::string(e.what()) + alternative());
  }
  out.close();
  if (f.bytes > 0 && got != f.bytes) {
    throw DataError(url + ": " + std::to_string(got) + " bytes, expected " +
                    std::to_string(f.bytes) + " (truncated)" + alternative());
  }
  const std::string got_sha = sha.hex();
  if (got_sha != f.sha256) {
    throw DataError(url + ": SHA-256 " + got_sha + ", expected " + f.sha256 +
                    " (a different or damaged file; nothing was kept)" +
                    alternative());
  }
  return got;
}

}  // namespace

std::string fetched_dir(const std::string& dataset) {
  return util::data_dir() + "/datasets/" + dataset;
}

bool is_fetched(const std::string& dir) {
  std::error_code ec;
  return fs::is_regular_file(fs::path(dir) / kRecord, ec);
}

FetchResult fetch_dataset(const DatasetSource& source, const FetchOptions& o) {
  fs::path dest =
      fs::absolute(fs::path(o.dir.empty() ? fetched_dir(source.dataset) : o.dir)
                       .lexically_normal());
  if (!dest.has_filename()) dest = dest.parent_path();  // "dir/"
  FetchResult r;
  r.dir = dest.string();
  std::error_code ec;
  if (fs::exists(dest, ec)) {
    if (is_fetched(dest.string())) {
      r.already_present = true;
      return r;
    }
    throw DataError(dest.string() +
                    ": exists and is not a completed fetch; remove it or "
                    "fetch into another folder (--dir)");
  }
  fs::create_directories(dest.parent_path(), ec);
  if (ec) throw DataError(dest.parent_path().string() + ": " + ec.message());
  Staging staging(dest);
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : source.files) {
    const std::string url = source_url(f, o.mirror);
    const fs::path file = staging.path() / url_file_name(f.url);
    if (o.progress) o.progress(url);
    r.downloaded_bytes += fetch_file(f, url, file, o);
    if (f.unpack) {
      try {
        util::unpack_tar_gz(file.string(), staging.path().string());
      } catch (const nnbench::Error& e) {
        throw DataError(e.what());
      }
      fs::remove(file, ec);
    }
    files.push_back(
        {{"url", url}, {"sha256", f.sha256}, {"unpacked", f.unpack}});
  }
  util::write_file_atomically(
      (staging.path() / kRecord).string(),
      nlohmann::json{{"dataset", source.dataset},
                     {"files", files},
                     {"hashes_from", source.hashes_from}}
              .dump(2) +
          "\n");
  fs::rename(staging.path(), dest, ec);
  if (ec)
    throw DataError(dest.string() +
                    ": cannot move into place: " + ec.message());
  staging.keep();
  return r;
}

}  // namespace nnbench::data
