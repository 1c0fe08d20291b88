#include "util/http.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace nnbench::util {
namespace {

using Clock = std::chrono::steady_clock;

int left_ms(Clock::time_point end) {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now())
          .count();
  return ms > 0 ? static_cast<int>(ms) : 0;
}

bool wait_for(int fd, short events, Clock::time_point end) {
  pollfd p{fd, events, 0};
  for (;;) {
    const int n = poll(&p, 1, left_ms(end));
    if (n > 0) return true;
    if (n == 0 || errno != EINTR) return false;
  }
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

std::optional<std::string> http_body(const HttpRequest& r) {
  const auto end = Clock::now() + std::chrono::milliseconds(r.deadline_ms);
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  // Numeric hosts only skip DNS; a name (a test's "localhost") resolves.
  addrinfo* found = nullptr;
  if (getaddrinfo(r.host.c_str(), std::to_string(r.port).c_str(), &hints,
                  &found) != 0 ||
      !found)
    return std::nullopt;
  Fd s;
  s.fd =
      socket(found->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const int rc =
      s.fd < 0 ? -1 : connect(s.fd, found->ai_addr, found->ai_addrlen);
  freeaddrinfo(found);
  if (s.fd < 0 || (rc != 0 && errno != EINPROGRESS)) return std::nullopt;
  if (rc != 0) {
    if (!wait_for(s.fd, POLLOUT, end)) return std::nullopt;
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(s.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0)
      return std::nullopt;
  }
  std::string out = r.method + " " + r.path + " HTTP/1.0\r\nHost: " + r.host +
                    "\r\nConnection: close\r\n";
  for (const auto& h : r.headers) out += h + "\r\n";
  out += "\r\n";
  for (size_t sent = 0; sent < out.size();) {
    if (!wait_for(s.fd, POLLOUT, end)) return std::nullopt;
    const ssize_t n =
        send(s.fd, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EINTR) return std::nullopt;
    if (n > 0) sent += static_cast<size_t>(n);
  }
  // Metadata replies are a few bytes; anything past 64 KiB is not one.
  constexpr size_t kMaxReply = 64 * 1024;
  std::string reply;
  char buf[4096];
  for (;;) {
    if (!wait_for(s.fd, POLLIN, end)) return std::nullopt;
    const ssize_t n = recv(s.fd, buf, sizeof buf, 0);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return std::nullopt;
    }
    reply.append(buf, static_cast<size_t>(n));
    if (reply.size() > kMaxReply) return std::nullopt;
  }
  // "HTTP/1.x 200 ...", then headers, a blank line and the body.
  if (reply.compare(0, 5, "HTTP/") != 0) return std::nullopt;
  const size_t sp = reply.find(' ');
  if (sp == std::string::npos || reply.compare(sp + 1, 3, "200") != 0)
    return std::nullopt;
  const size_t body = reply.find("\r\n\r\n");
  if (body == std::string::npos) return std::nullopt;
  return reply.substr(body + 4);
}

}  // namespace nnbench::util
