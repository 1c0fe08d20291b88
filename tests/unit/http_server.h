#pragma once
// A one-thread HTTP server on 127.0.0.1 for tests of clients that must
// never hang: the cloud metadata lookup (machine/instance.h) and dataset
// downloads (data/fetch.h).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <string>
#include <thread>

namespace nnbench {

// Answers `requests` connections on 127.0.0.1 with `reply(request text)`
// (a whole HTTP response); an empty reply answers nothing and waits for
// the client to give up.
class Server {
 public:
  Server(int requests, std::function<std::string(const std::string&)> reply)
      : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    bind(fd_, reinterpret_cast<sockaddr*>(&a), len);
    listen(fd_, 4);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this, requests, reply] {
      for (int i = 0; i < requests; ++i) {
        const int c = accept(fd_, nullptr, nullptr);
        if (c < 0) return;
        std::string req;
        char buf[2048];
        while (req.find("\r\n\r\n") == std::string::npos) {
          const ssize_t n = read(c, buf, sizeof buf);
          if (n <= 0) break;
          req.append(buf, static_cast<size_t>(n));
        }
        seen_ += req;
        const std::string out = reply(req);
        if (out.empty()) {
          while (read(c, buf, sizeof buf) > 0) {  // until the client leaves
          }
        } else {
          (void)!write(c, out.data(), out.size());
        }
        close(c);
      }
    });
  }
  ~Server() {
    thread_.join();
    close(fd_);
  }
  std::string endpoint(const std::string& provider) const {
    return provider + "=127.0.0.1:" + std::to_string(port_);
  }
  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(port_);
  }
  const std::string& seen() const { return seen_; }

 private:
  int fd_, port_ = 0;
  std::string seen_;
  std::thread thread_;
};

// A whole "200 OK" response carrying `body`, the connection closed after.
inline std::string http_ok(const std::string& body) {
  return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
}

}  // namespace nnbench
