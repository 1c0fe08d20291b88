#include "util/download.h"

#include <curl/curl.h>

#include <exception>
#include <memory>
#include <mutex>

#include "util/error.h"

namespace nnbench::util {
namespace {

struct Transfer {
  const std::function<void(std::string_view)>* sink;
  int64_t max_bytes, received = 0;
  bool too_large = false;
  std::exception_ptr failure;  // the sink's own error, kept whole
};

size_t on_data(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  t->received += static_cast<int64_t>(n);
  if (t->received > t->max_bytes) {
    t->too_large = true;
    return 0;  // anything but n aborts the transfer
  }
  try {
    (*t->sink)(std::string_view(data, n));
  } catch (...) {
    t->failure = std::current_exception();
    return 0;
  }
  return n;
}

}  // namespace

int64_t download(const std::string& url, const DownloadLimits& limits,
                 const std::function<void(std::string_view)>& sink) {
  if (limits.max_bytes <= 0) throw Error(url + ": no size bound given");
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  std::unique_ptr<CURL, void (*)(CURL*)> curl(curl_easy_init(),
                                              curl_easy_cleanup);
  if (!curl) throw Error(url + ": libcurl could not start a transfer");
  Transfer t{&sink, limits.max_bytes};
  char message[CURL_ERROR_SIZE] = "";
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  // A redirect must not lead to file:// or another scheme.
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS,
                   static_cast<long>(limits.max_redirects));
  curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, limits.connect_seconds);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1024L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, limits.stall_seconds);
  curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE,
                   static_cast<curl_off_t>(limits.max_bytes));
  curl_easy_setopt(c, CURLOPT_USERAGENT, "nnbench");
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, message);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  const CURLcode rc = curl_easy_perform(c);
  if (t.failure) std::rethrow_exception(t.failure);
  if (t.too_large || rc == CURLE_FILESIZE_EXCEEDED) {
    throw Error(url + ": larger than the " + std::to_string(limits.max_bytes) +
                " bytes expected; stopped");
  }
  if (rc != CURLE_OK) {
    throw Error(url + ": " +
                (message[0] ? std::string(message) : curl_easy_strerror(rc)));
  }
  return t.received;
}

}  // namespace nnbench::util
