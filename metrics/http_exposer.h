// A small HTTP/1.1 server that serves one exposition at GET /metrics, for the executor agent
// (metrics/registry.h) and the driver aggregator (metrics/prometheus_registry.h) alike.
//
// Not prometheus-cpp's pull server (civetweb): it has no deadline for a whole request and a fixed
// pool of worker threads, so two clients that never finish their request hold every scrape for
// civetweb's 30 s request timeout (measured: bench/RESULTS.md, "Driver exposition").
//
// Built on Boost.Beast/Asio (header-only, so the agent library still needs only libc): one
// background thread runs an event loop that serves every connection concurrently. A hostile or
// careless client cannot hold anything: each connection has one deadline for its whole request
// and response (not per read, so a client dripping a byte a second is cut off too), connections
// are capped (a new one evicts the oldest still sending its request, so idle clients cannot
// lock a scraper out), requests are capped in bytes, and Stop() closes every socket without
// waiting for any client. Nothing blocks the caller: Start() binds synchronously (errors are
// values) and returns.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/status.h"

namespace sparkprof::metrics {

struct HttpExposerLimits {
  // Accepted connections held at once; beyond it a new connection evicts the oldest one still
  // sending its request (or is closed when all are being answered). 64 x 8 KiB of requests.
  size_t max_connections = 64;
  // From accept to the last byte of the response. A scrape normally takes milliseconds;
  // Prometheus' own scrape timeout defaults to 10 s.
  int request_deadline_ms = 5000;
  // Called once (on the serving thread) if the server fails after Start (e.g. out of memory);
  // it then serves nothing more, and the process is unaffected.
  std::function<void(const std::string&)> on_failure;
};

class HttpExposer {
 public:
  // `bind_address` is "[HOST:]PORT" or "[HOST:]FIRST-LAST" (see ParseBindAddress); a range binds
  // the first free port in it.
  // `render` returns the exposition (text format 0.0.4); it runs on the serving thread.
  static Result<std::unique_ptr<HttpExposer>> Start(const std::string& bind_address,
                                                    std::function<std::string()> render,
                                                    HttpExposerLimits limits = {});
  ~HttpExposer();  // Stop()
  HttpExposer(const HttpExposer&) = delete;
  HttpExposer& operator=(const HttpExposer&) = delete;

  int port() const { return port_; }
  uint64_t requests_served() const { return requests_served_.load(); }
  // Connections closed because they were over the cap (evicted or refused).
  uint64_t connections_shed() const { return connections_shed_.load(); }
  // Connections closed at their deadline before a whole request arrived or the answer left.
  uint64_t connections_timed_out() const { return connections_timed_out_.load(); }
  // Closes the listener and every connection and joins the thread; waits for no client (at most
  // for one exposition in progress). Idempotent.
  void Stop();

  static constexpr size_t kMaxRequestBytes = 8192;

 private:
  struct Server;
  class Session;
  HttpExposer(std::unique_ptr<Server> server, int port);

  std::unique_ptr<Server> server_;
  int port_;
  std::atomic<uint64_t> requests_served_{0};
  std::atomic<uint64_t> connections_shed_{0};
  std::atomic<uint64_t> connections_timed_out_{0};
};

// Splits "[HOST:]PORT" or "[HOST:]FIRST-LAST"; exposed for tests and option parsing. HOST is a
// numeric IPv4 address, "localhost" (127.0.0.1, also when absent) or "0.0.0.0"/"*" for all
// interfaces. PORT 0 picks a free port. A range (FIRST <= LAST, at most kMaxPortRange ports) lets
// several processes on one host share one setting: each binds the first free port.
Status ParseBindAddress(const std::string& text, std::string* host, int* first_port,
                        int* last_port);
inline constexpr int kMaxPortRange = 1024;

}  // namespace sparkprof::metrics
