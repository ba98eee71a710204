#include "metrics/http_exposer.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace sparkprof::metrics {
namespace {

// Sends `request` to 127.0.0.1:port and returns everything the server answers.
std::string Exchange(int port, const std::string& request) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return "connect failed";
  }
  send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string response;
  char buffer[4096];
  ssize_t n;
  while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0) response.append(buffer, n);
  close(fd);
  return response;
}

TEST(HttpExposerTest, ServesMetricsAndRejectsOtherRequests) {
  Registry registry;
  auto counter = registry.AddCounter("hits_total", "Hits.");
  ASSERT_TRUE(counter.ok());
  (*counter)->WithLabels().Increment(7);
  auto exposer = HttpExposer::Start("127.0.0.1:0", registry);
  ASSERT_TRUE(exposer.ok()) << exposer.status().ToString();
  int port = (*exposer)->port();
  ASSERT_GT(port, 0);

  std::string ok = Exchange(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(ok.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << ok;
  EXPECT_NE(ok.find("text/plain; version=0.0.4"), std::string::npos);
  EXPECT_NE(ok.find("hits_total 7\n"), std::string::npos);

  EXPECT_EQ(Exchange(port, "GET / HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 404", 0), 0u);
  EXPECT_EQ(Exchange(port, "POST /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 405", 0), 0u);
  EXPECT_EQ(Exchange(port, "garbage\r\n\r\n").rfind("HTTP/1.1 400", 0), 0u);
  std::string huge = "GET /metrics HTTP/1.1\r\nX: " + std::string(20000, 'a');
  EXPECT_EQ(Exchange(port, huge).rfind("HTTP/1.1 431", 0), 0u);
  EXPECT_EQ((*exposer)->requests_served(), 1u);
  (*exposer)->Stop();
}

TEST(HttpExposerTest, ParsesBindAddresses) {
  std::string host;
  int port = -1;
  ASSERT_TRUE(ParseBindAddress("9404", &host, &port).ok());
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(port, 9404);
  ASSERT_TRUE(ParseBindAddress("*:80", &host, &port).ok());
  EXPECT_EQ(host, "0.0.0.0");
  EXPECT_FALSE(ParseBindAddress("example.com:80", &host, &port).ok());
  EXPECT_FALSE(ParseBindAddress("127.0.0.1:99999", &host, &port).ok());
  EXPECT_FALSE(ParseBindAddress("127.0.0.1:", &host, &port).ok());
}

TEST(HttpExposerTest, ReportsBindFailureAsStatus) {
  Registry registry;
  auto first = HttpExposer::Start("127.0.0.1:0", registry);
  ASSERT_TRUE(first.ok());
  auto second = HttpExposer::Start("127.0.0.1:" + std::to_string((*first)->port()), registry);
  EXPECT_FALSE(second.ok());
}

}  // namespace
}  // namespace sparkprof::metrics
