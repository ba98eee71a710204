#include "metrics/http_exposer.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "metrics/registry.h"

namespace sparkprof::metrics {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A connected socket to 127.0.0.1:port (-1 on failure). Reads give up after 30 s, so a broken
// server fails the test instead of hanging it.
int Connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  timeval timeout{30, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

std::string ReadAll(int fd) {
  std::string response;
  char buffer[4096];
  ssize_t n;
  while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0) response.append(buffer, n);
  return response;
}

// Sends `request` to 127.0.0.1:port and returns everything the server answers.
std::string Exchange(int port, const std::string& request) {
  int fd = Connect(port);
  if (fd < 0) return "connect failed";
  send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  shutdown(fd, SHUT_WR);  // a request without its end is a bad request, not a wait
  std::string response = ReadAll(fd);
  close(fd);
  return response;
}

struct Served {
  Registry registry;
  std::unique_ptr<HttpExposer> exposer;
  int port = -1;

  explicit Served(HttpExposerLimits limits = {}) {
    auto counter = registry.AddCounter("hits_total", "Hits.");
    EXPECT_TRUE(counter.ok());
    (*counter)->WithLabels().Increment(7);
    auto started = HttpExposer::Start(
        "127.0.0.1:0", [this] { return registry.Render(); }, std::move(limits));
    EXPECT_TRUE(started.ok()) << started.status().ToString();
    exposer = std::move(*started);
    port = exposer->port();
  }
};

HttpExposerLimits Limits(size_t max_connections, int request_deadline_ms) {
  HttpExposerLimits limits;
  limits.max_connections = max_connections;
  limits.request_deadline_ms = request_deadline_ms;
  return limits;
}

const char kScrape[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";

bool IsOkScrape(const std::string& response) {
  return response.rfind("HTTP/1.1 200 OK\r\n", 0) == 0 &&
         response.find("hits_total 7\n") != std::string::npos;
}

TEST(HttpExposerTest, ServesMetricsAndRejectsOtherRequests) {
  Served served;
  ASSERT_GT(served.port, 0);
  int port = served.port;

  std::string ok = Exchange(port, kScrape);
  EXPECT_TRUE(IsOkScrape(ok)) << ok;
  EXPECT_NE(ok.find("text/plain; version=0.0.4"), std::string::npos);
  std::string head = Exchange(port, "HEAD /metrics HTTP/1.1\r\n\r\n");
  EXPECT_EQ(head.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << head;
  EXPECT_EQ(head.find("hits_total"), std::string::npos) << head;
  EXPECT_NE(head.find("Content-Length: "), std::string::npos) << head;
  EXPECT_TRUE(IsOkScrape(Exchange(port, "GET /metrics?name[]=x HTTP/1.0\r\n\r\n")));

  EXPECT_EQ(Exchange(port, "GET / HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 404", 0), 0u);
  EXPECT_EQ(Exchange(port, "POST /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 405", 0), 0u);
  EXPECT_EQ(Exchange(port, "garbage\r\n\r\n").rfind("HTTP/1.1 400", 0), 0u);
  std::string huge = "GET /metrics HTTP/1.1\r\nX: " + std::string(20000, 'a');
  EXPECT_EQ(Exchange(port, huge).rfind("HTTP/1.1 431", 0), 0u);
  EXPECT_EQ(served.exposer->requests_served(), 3u);
}

// kMaxRequestBytes of request line and headers are served; one byte more is 431.
TEST(HttpExposerTest, RequestSizeAtAndPastTheLimit) {
  Served served;
  const std::string head = "GET /metrics HTTP/1.1\r\nX: ";
  const std::string end = "\r\n\r\n";
  std::string at_limit =
      head + std::string(HttpExposer::kMaxRequestBytes - head.size() - end.size(), 'a') + end;
  ASSERT_EQ(at_limit.size(), HttpExposer::kMaxRequestBytes);
  EXPECT_TRUE(IsOkScrape(Exchange(served.port, at_limit)));
  std::string past_limit = head + "a" + at_limit.substr(head.size());
  ASSERT_EQ(past_limit.size(), HttpExposer::kMaxRequestBytes + 1);
  std::string past = Exchange(served.port, past_limit);
  EXPECT_EQ(past.rfind("HTTP/1.1 431", 0), 0u) << past.substr(0, 40);
}

// max_connections idle connections are all held; one more sheds the oldest.
TEST(HttpExposerTest, ConnectionsAtAndPastTheLimit) {
  Served served(Limits(/*max_connections=*/8, /*request_deadline_ms=*/60'000));
  std::vector<int> idle;
  for (int i = 0; i < 8; ++i) idle.push_back(Connect(served.port));
  // A scrape is the 9th connection: wait until it is answered, so all 8 were accepted first.
  EXPECT_TRUE(IsOkScrape(Exchange(served.port, kScrape)));
  EXPECT_EQ(served.exposer->connections_shed(), 1u);  // the scrape evicted the oldest idle one
  EXPECT_EQ(ReadAll(idle[0]), "");                    // closed
  for (int fd : idle) close(fd);
}

// The malformed requests of the hostile-input review: each is answered 4xx or closed, and the
// server goes on serving.
TEST(HttpExposerTest, SurvivesMalformedRequests) {
  HttpExposerLimits limits;
  limits.request_deadline_ms = 1000;
  Served served(limits);
  const std::vector<std::string> malformed = {
      std::string("\0\0\0\0\r\n\r\n", 8),
      "GET /metrics HTTP/9.9\r\n\r\n",
      "GET /metrics HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
      "GET /metrics HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n",
      "GET /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n",
      "GET /metrics HTTP/1.1\r\nX: " + std::string(9000, 'a') + "\r\n\r\n",
      "GET " + std::string(9000, '/') + " HTTP/1.1\r\n\r\n",
      "GET /metrics HTTP/1.1\r\n\x01\x02: \xff\r\n\r\n",
      "\r\n\r\n\r\n",
      "GET /metrics HTTP/1.1\r\n",
  };
  for (const std::string& request : malformed) {
    std::string response = Exchange(served.port, request);
    EXPECT_TRUE(response.empty() || response.rfind("HTTP/1.1 4", 0) == 0) << response;
  }
  EXPECT_TRUE(IsOkScrape(Exchange(served.port, kScrape)));
}

// A client dripping one byte every 300 ms is cut off at the deadline of its whole request, not
// kept alive by each byte; meanwhile other clients are served.
TEST(HttpExposerTest, DeadlineCoversTheWholeRequest) {
  HttpExposerLimits limits;
  limits.request_deadline_ms = 1000;
  Served served(limits);
  int dripping = Connect(served.port);
  ASSERT_GE(dripping, 0);
  std::string request = std::string(kScrape).substr(0, 20);
  auto start = Clock::now();
  bool cut_off = false;
  for (char c : request) {
    if (send(dripping, &c, 1, MSG_NOSIGNAL) != 1) {
      cut_off = true;
      break;
    }
    EXPECT_TRUE(IsOkScrape(Exchange(served.port, kScrape)));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  if (!cut_off) {  // closed without an answer
    EXPECT_EQ(ReadAll(dripping), "");
  }
  // 20 bytes at 300 ms would take 6 s: the 1 s deadline ended it well before (generous bound).
  EXPECT_LT(SecondsSince(start), 5.5);
  close(dripping);
  EXPECT_GE(served.exposer->connections_timed_out(), 1u);
}

// 30 idle connections (the old server queued a scrape behind 2 s per connection: 60 s).
TEST(HttpExposerTest, ScrapeAnswersWhileIdleClientsAreConnected) {
  Served served;
  std::vector<int> idle;
  for (int i = 0; i < 30; ++i) {
    int fd = Connect(served.port);
    ASSERT_GE(fd, 0);
    idle.push_back(fd);
  }
  auto start = Clock::now();
  EXPECT_TRUE(IsOkScrape(Exchange(served.port, kScrape)));
  EXPECT_LT(SecondsSince(start), 3.0);  // milliseconds in practice
  for (int fd : idle) close(fd);
}

// More idle connections than the cap: the oldest are evicted, so a scrape still gets through and
// the server holds at most max_connections.
TEST(HttpExposerTest, FloodOfConnectionsIsBounded) {
  Served served(Limits(/*max_connections=*/8, /*request_deadline_ms=*/60'000));
  std::vector<int> flood;
  for (int i = 0; i < 100; ++i) {
    int fd = Connect(served.port);
    if (fd >= 0) flood.push_back(fd);
  }
  auto start = Clock::now();
  EXPECT_TRUE(IsOkScrape(Exchange(served.port, kScrape)));
  EXPECT_LT(SecondsSince(start), 3.0);
  EXPECT_GE(served.exposer->connections_shed(), 100u - 8u);
  // Complete requests pipelined from many clients at once are all answered.
  std::vector<int> clients;
  for (int i = 0; i < 8; ++i) {
    int fd = Connect(served.port);
    ASSERT_GE(fd, 0);
    send(fd, kScrape, sizeof(kScrape) - 1, MSG_NOSIGNAL);
    clients.push_back(fd);
  }
  for (int fd : clients) {
    EXPECT_TRUE(IsOkScrape(ReadAll(fd)));
    close(fd);
  }
  for (int fd : flood) close(fd);
}

// Stop() (the JVM's exit, the driver's stop) never waits for a client: the old server joined a
// thread that was blocked on a dripping client.
TEST(HttpExposerTest, StopReturnsPromptlyWhileAClientDrips) {
  HttpExposerLimits limits;
  limits.request_deadline_ms = 60'000;
  Served served(limits);
  int dripping = Connect(served.port);
  ASSERT_GE(dripping, 0);
  send(dripping, "GET /met", 8, MSG_NOSIGNAL);
  std::thread dripper([dripping] {
    for (int i = 0; i < 20; ++i) {
      if (send(dripping, "r", 1, MSG_NOSIGNAL) != 1) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto start = Clock::now();
  served.exposer->Stop();
  EXPECT_LT(SecondsSince(start), 2.0);
  EXPECT_EQ(ReadAll(dripping), "");  // closed
  dripper.join();
  close(dripping);
  EXPECT_EQ(Connect(served.port), -1);  // nothing listens any more
  served.exposer->Stop();               // idempotent
}

TEST(HttpExposerTest, ReportsAFailureOnTheServingThread) {
  Registry registry;
  auto gauge = registry.AddGauge("g", "G.");
  ASSERT_TRUE(gauge.ok());
  registry.AddCollectCallback([] { throw std::bad_alloc(); });
  std::atomic<int> failures{0};
  HttpExposerLimits limits;
  limits.on_failure = [&failures](const std::string&) { failures.fetch_add(1); };
  auto exposer = HttpExposer::Start(
      "127.0.0.1:0", [&registry] { return registry.Render(); }, limits);
  ASSERT_TRUE(exposer.ok());
  EXPECT_EQ(Exchange((*exposer)->port(), kScrape), "");
  for (int i = 0; i < 100 && failures.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(failures.load(), 1);
  (*exposer)->Stop();
}

TEST(HttpExposerTest, ParsesBindAddresses) {
  std::string host;
  int first = -1;
  int last = -1;
  ASSERT_TRUE(ParseBindAddress("9404", &host, &first, &last).ok());
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(first, 9404);
  EXPECT_EQ(last, 9404);
  ASSERT_TRUE(ParseBindAddress("*:80", &host, &first, &last).ok());
  EXPECT_EQ(host, "0.0.0.0");
  ASSERT_TRUE(ParseBindAddress("0.0.0.0:9404-9419", &host, &first, &last).ok());
  EXPECT_EQ(first, 9404);
  EXPECT_EQ(last, 9419);
  EXPECT_FALSE(ParseBindAddress("example.com:80", &host, &first, &last).ok());
  EXPECT_FALSE(ParseBindAddress("127.0.0.1:99999", &host, &first, &last).ok());
  EXPECT_FALSE(ParseBindAddress("127.0.0.1:", &host, &first, &last).ok());
  EXPECT_FALSE(ParseBindAddress("9419-9404", &host, &first, &last).ok());
  EXPECT_FALSE(ParseBindAddress("0-10", &host, &first, &last).ok());
  EXPECT_FALSE(ParseBindAddress("1000-3000", &host, &first, &last).ok());
  EXPECT_FALSE(ParseBindAddress("9404-", &host, &first, &last).ok());
}

TEST(HttpExposerTest, ReportsBindFailureAsStatus) {
  auto render = [] { return std::string(); };
  auto first = HttpExposer::Start("127.0.0.1:0", render);
  ASSERT_TRUE(first.ok());
  auto second = HttpExposer::Start("127.0.0.1:" + std::to_string((*first)->port()), render);
  EXPECT_FALSE(second.ok());
}

// Several executors on one host share one setting: each binds the next free port of the range.
TEST(HttpExposerTest, PortRangeBindsTheFirstFreePort) {
  auto render = [] { return std::string(); };
  auto probe = HttpExposer::Start("127.0.0.1:0", render);
  ASSERT_TRUE(probe.ok());
  int base = (*probe)->port();
  (*probe)->Stop();
  probe->reset();
  std::string range = "127.0.0.1:" + std::to_string(base) + "-" + std::to_string(base + 20);
  std::vector<std::unique_ptr<HttpExposer>> executors;
  for (int i = 0; i < 3; ++i) {
    auto started = HttpExposer::Start(range, render);
    if (!started.ok()) continue;  // another process took a port of the range: try on
    executors.push_back(std::move(*started));
  }
  ASSERT_GE(executors.size(), 2u);
  EXPECT_NE(executors[0]->port(), executors[1]->port());
  for (const auto& exposer : executors) {
    EXPECT_GE(exposer->port(), base);
    EXPECT_LE(exposer->port(), base + 20);
  }
}

}  // namespace
}  // namespace sparkprof::metrics
