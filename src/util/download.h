#pragma once
// One file fetched over HTTP(S) with libcurl, streamed to a callback so that
// nothing larger than a network buffer is held in memory. For datasets
// (data/fetch.h): bounded in size, in connection time and in stalls, so a
// wrong or dead host ends in an error naming the URL, never a hang.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace nnbench::util {

struct DownloadLimits {
  int64_t max_bytes = 0;      // more is an error; must be > 0
  long connect_seconds = 20;  // to open the connection
  long stall_seconds = 60;    // below 1 KiB/s for this long is an error
  int max_redirects = 5;
};

// Streams the body of `url` (http or https only, redirects followed) to
// `sink`; returns the bytes received. Throws nnbench::Error starting with
// the URL when the host cannot be reached, the reply is not 2xx, the
// transfer stalls or exceeds `limits.max_bytes`, or `sink` throws (its
// message is kept).
int64_t download(const std::string& url, const DownloadLimits& limits,
                 const std::function<void(std::string_view)>& sink);

}  // namespace nnbench::util
