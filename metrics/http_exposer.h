// A tiny HTTP/1.1 server that serves one Registry at GET /metrics.
//
// One background thread accepts and answers connections one at a time; requests are bounded
// (8 KiB, 2 s per read) so a slow or hostile client cannot hold it forever, and nothing it does
// blocks the caller: Start() binds synchronously (so errors are values) and returns.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "common/status.h"
#include "metrics/registry.h"

namespace sparkprof::metrics {

class HttpExposer {
 public:
  // `bind_address` is "HOST:PORT" or "PORT" (then 127.0.0.1). HOST is a numeric IPv4 address,
  // "localhost" or "0.0.0.0"/"*" for all interfaces. PORT 0 picks a free port (see port()).
  static Result<std::unique_ptr<HttpExposer>> Start(const std::string& bind_address,
                                                    const Registry& registry);
  ~HttpExposer();  // stops and joins the thread
  HttpExposer(const HttpExposer&) = delete;
  HttpExposer& operator=(const HttpExposer&) = delete;

  int port() const { return port_; }
  uint64_t requests_served() const { return requests_served_.load(); }
  void Stop();

  static constexpr size_t kMaxRequestBytes = 8192;

 private:
  HttpExposer(int listen_fd, int wake_fd, int port, const Registry& registry);
  void Serve();
  void HandleConnection(int fd);

  int listen_fd_;
  int wake_fd_;  // eventfd: written by Stop() to wake poll()
  int port_;
  const Registry& registry_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> requests_served_{0};
  std::thread thread_;
};

// Splits "HOST:PORT" / "PORT"; exposed for tests and option parsing.
Status ParseBindAddress(const std::string& text, std::string* host, int* port);

}  // namespace sparkprof::metrics
