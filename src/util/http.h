#pragma once
// One plain-HTTP request with a hard deadline: what a cloud's metadata
// service (a link-local address, no TLS) needs, and nothing more. The
// deadline covers connecting, sending and reading, so a machine with no
// such service costs at most that long and never hangs.
#include <optional>
#include <string>
#include <vector>

namespace nnbench::util {

struct HttpRequest {
  std::string host;  // an IPv4 address or a name resolved with getaddrinfo
  int port = 80;
  std::string method = "GET", path = "/";
  std::vector<std::string> headers;  // "Name: value"
  int deadline_ms = 500;
};

// The body of a 200 reply; none for any other status, a refused or
// unreachable host, a malformed reply, or the deadline passing.
std::optional<std::string> http_body(const HttpRequest& r);

}  // namespace nnbench::util
