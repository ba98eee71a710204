#!/usr/bin/env bash
# Where Debian's prometheus-cpp (prometheus-cpp-dev 1.0.1) fits, measured (issue 31; the decision
# is written in docs/agent.md, "Libraries"):
#   1. the agent: a probe .so linked as libsparkprof.so is (-static-libstdc++ -static-libgcc,
#      --no-undefined) against prometheus-cpp's registry and text serializer: what it NEEDs;
#   2. the /metrics server: prometheus-cpp's pull server (civetweb) with 0, 1 and 2 clients that
#      sent an unfinished request: how long a scrape then waits (ours: metrics/http_exposer_test.cc
#      holds the same clients to its 5 s deadline and evicts them).
# Usage: bench/prometheus_cpp_fit.sh   (needs g++ and prometheus-cpp-dev; about 35 s)
set -euo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/probe.cc" <<'CC'
#include <prometheus/counter.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
extern "C" __attribute__((visibility("default"))) int probe_exposition_bytes() {
  prometheus::Registry registry;
  prometheus::BuildCounter().Name("x_total").Help("x").Register(registry).Add({}).Increment();
  return static_cast<int>(prometheus::TextSerializer().Serialize(registry.Collect()).size());
}
CC
g++ -std=c++20 -O2 -fPIC -shared -fvisibility=hidden "$work/probe.cc" -o "$work/libprobe.so" \
  -Wl,--no-undefined -static-libstdc++ -static-libgcc -lprometheus-cpp-core
echo "== 1. a libc-only .so (as libsparkprof.so) with prometheus-cpp"
ls /usr/lib/x86_64-linux-gnu/libprometheus-cpp-core.a 2>/dev/null ||
  echo "static archive: none (Debian ships libprometheus-cpp-core.so only)"
echo "NEEDED: $(readelf -d "$work/libprobe.so" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')"
echo "loads with it: $(ldd "$work/libprobe.so" | awk '{print $1}' | grep -v -E 'vdso|ld-linux|libc.so' | tr '\n' ' ')"
core=$(readlink -f /usr/lib/x86_64-linux-gnu/libprometheus-cpp-core.so.1.0)
cxx=$(readlink -f /usr/lib/x86_64-linux-gnu/libstdc++.so.6)
echo "sizes: $(basename "$core") $(stat -c %s "$core") B, $(basename "$cxx") $(stat -c %s "$cxx") B"

cat >"$work/pull.cc" <<'CC'
#include <arpa/inet.h>
#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/registry.h>
#include <sys/socket.h>
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
int Connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(0x7f000001);
  return connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 ? fd : -1;
}
int main(int argc, char** argv) {
  const int unfinished = std::atoi(argv[1]);
  prometheus::Exposer exposer{"127.0.0.1:0"};  // civetweb, its default 2 worker threads
  auto registry = std::make_shared<prometheus::Registry>();
  prometheus::BuildCounter().Name("x_total").Help("x").Register(*registry).Add({}).Increment();
  exposer.RegisterCollectable(registry);
  const int port = exposer.GetListeningPorts()[0];
  for (int i = 0; i < unfinished; ++i) {  // a request line, and never the end of the headers
    if (write(Connect(port), "GET /metrics HTTP/1.1\r\n", 23) < 0) return 1;
  }
  usleep(200000);
  const auto start = std::chrono::steady_clock::now();
  const int fd = Connect(port);
  const char* scrape = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  if (write(fd, scrape, std::strlen(scrape)) < 0) return 1;
  char buffer[4096];
  const ssize_t got = read(fd, buffer, sizeof buffer);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("%d unfinished requests: the scrape answered after %.0f ms (%zd bytes)\n",
              unfinished, ms, got);
}
CC
g++ -std=c++20 -O2 "$work/pull.cc" -o "$work/pull" -lprometheus-cpp-pull -lprometheus-cpp-core
echo "== 2. prometheus-cpp's pull server and slow clients"
for clients in 0 1 2; do timeout 60 "$work/pull" "$clients"; done
