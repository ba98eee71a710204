// Fuzzes the /metrics server (metrics/http_exposer.h) as a client on the network reaches it: the
// input is sent over a loopback connection, the client half-closes, and the server must answer
// with one HTTP/1.1 status line or close, and go on serving: a well-formed scrape after every
// input must still get its 200. Seeds: corpus/http_request/ (the hostile-input review's slow,
// malformed and oversized requests). A failed scrape prints what came back before it traps.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "common/errno_text.h"
#include "metrics/http_exposer.h"
#include "metrics/registry.h"

namespace {

struct Server {
  sparkprof::metrics::Registry registry;
  std::unique_ptr<sparkprof::metrics::HttpExposer> exposer;

  Server() {
    auto counter = registry.AddCounter("fuzz_total", "Fuzz.");
    if (counter.ok()) (*counter)->WithLabels({{"label", "value"}}).Increment();
    sparkprof::metrics::HttpExposerLimits limits;
    limits.request_deadline_ms = 500;  // an input that stops short of a request ends quickly
    auto started = sparkprof::metrics::HttpExposer::Start(
        "127.0.0.1:0", [this] { return registry.Render(); }, limits);
    if (!started.ok()) __builtin_trap();
    exposer = std::move(*started);
  }
};

std::string Exchange(int port, std::string_view request) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  timeval timeout{10, 0};  // far beyond the server's deadline: hitting it is a finding
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  // A refused or failed connect is the machine's (ports in TIME_WAIT, a full backlog under load:
  // a clean-clone CI run at load 20 met one), not a finding: retry for a while.
  for (int attempt = 0; connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0;
       ++attempt) {
    if (attempt == 200) __builtin_trap();  // ~4 s without a connection: the server is gone
    close(fd);
    usleep(20'000);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  }
  // Closed with a reset, so thousands of runs leave no client ports in TIME_WAIT.
  linger reset{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
  // libFuzzer's -timeout watchdog is a SIGALRM every second: a blocked call can return EINTR.
  for (size_t sent = 0; sent < request.size();) {
    ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the server closed early (an oversized request's answer): allowed
    sent += static_cast<size_t>(n);
  }
  shutdown(fd, SHUT_WR);
  std::string response;
  char buffer[4096];
  ssize_t n;
  while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) response.append(buffer, n);
  }
  int error = n < 0 ? errno : 0;
  close(fd);
  if (error == EAGAIN || error == EWOULDBLOCK) __builtin_trap();
  if (error != 0) std::fprintf(stderr, "recv: %s\n", sparkprof::ErrnoText(error).c_str());
  return response;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Server* server = new Server();  // one server for the whole run, never destroyed
  const int port = server->exposer->port();
  std::string response =
      Exchange(port, std::string_view(reinterpret_cast<const char*>(data), size));
  if (!response.empty() && response.rfind("HTTP/1.1 ", 0) != 0) __builtin_trap();
  std::string scrape = Exchange(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  if (scrape.rfind("HTTP/1.1 200 OK\r\n", 0) != 0) {
    std::fprintf(stderr, "scrape answered %zu bytes: %.200s\n", scrape.size(), scrape.c_str());
    __builtin_trap();
  }
  return 0;
}
