#include "metrics/http_exposer.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

namespace sparkprof::metrics {
namespace {

constexpr int kReadTimeoutMs = 2000;

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void SendResponse(int fd, std::string_view status, std::string_view content_type,
                  std::string_view body, bool include_body) {
  std::string head = "HTTP/1.1 ";
  head += status;
  head += "\r\nContent-Type: ";
  head += content_type;
  head += "\r\nContent-Length: ";
  head += std::to_string(body.size());
  head += "\r\nConnection: close\r\n\r\n";
  if (SendAll(fd, head) && include_body) SendAll(fd, body);
}

}  // namespace

Status ParseBindAddress(const std::string& text, std::string* host, int* port) {
  std::string port_text = text;
  *host = "127.0.0.1";
  size_t colon = text.rfind(':');
  if (colon != std::string::npos) {
    *host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
    if (host->empty()) *host = "127.0.0.1";
  }
  if (*host == "localhost") *host = "127.0.0.1";
  if (*host == "*") *host = "0.0.0.0";
  in_addr parsed{};
  if (inet_pton(AF_INET, host->c_str(), &parsed) != 1) {
    return InvalidArgument("bind address '" + text + "': host must be an IPv4 address, localhost or *");
  }
  if (port_text.empty() || port_text.size() > 5 ||
      port_text.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidArgument("bind address '" + text + "': port must be a number 0..65535");
  }
  *port = std::stoi(port_text);
  if (*port > 65535) return InvalidArgument("bind address '" + text + "': port above 65535");
  return Status::Ok();
}

Result<std::unique_ptr<HttpExposer>> HttpExposer::Start(const std::string& bind_address,
                                                        const Registry& registry) {
  std::string host;
  int port = 0;
  SPARKPROF_RETURN_IF_ERROR(ParseBindAddress(bind_address, &host, &port));
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return IoError(std::string("socket: ") + strerror(errno));
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, host.c_str(), &address.sin_addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 || listen(fd, 16) != 0) {
    std::string error = strerror(errno);
    close(fd);
    return IoError("cannot listen on " + bind_address + ": " + error);
  }
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  int wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd < 0) {
    close(fd);
    return IoError(std::string("eventfd: ") + strerror(errno));
  }
  std::unique_ptr<HttpExposer> exposer(
      new HttpExposer(fd, wake_fd, ntohs(address.sin_port), registry));
  return exposer;
}

HttpExposer::HttpExposer(int listen_fd, int wake_fd, int port, const Registry& registry)
    : listen_fd_(listen_fd), wake_fd_(wake_fd), port_(port), registry_(registry) {
  // The serving thread must never take the profiler's signals or the JVM's.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &previous);
  thread_ = std::thread([this] { Serve(); });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

HttpExposer::~HttpExposer() {
  Stop();
  close(listen_fd_);
  close(wake_fd_);
}

void HttpExposer::Stop() {
  if (stopping_.exchange(true)) {
    if (thread_.joinable()) thread_.join();
    return;
  }
  uint64_t one = 1;
  ssize_t ignored = write(wake_fd_, &one, sizeof(one));
  (void)ignored;
  if (thread_.joinable()) thread_.join();
}

void HttpExposer::Serve() {
  while (!stopping_.load()) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    int ready = poll(fds, 2, -1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if (fds[0].revents & POLLIN) {
      int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      HandleConnection(fd);
      close(fd);
    }
  }
}

void HttpExposer::HandleConnection(int fd) {
  timeval timeout{kReadTimeoutMs / 1000, (kReadTimeoutMs % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  std::string request;
  char buffer[1024];
  while (request.find("\r\n\r\n") == std::string::npos) {
    if (request.size() >= kMaxRequestBytes) {
      SendResponse(fd, "431 Request Header Fields Too Large", "text/plain", "request too large\n", true);
      return;
    }
    ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // closed or timed out: nothing to answer
    request.append(buffer, static_cast<size_t>(n));
  }
  std::string_view line(request);
  line = line.substr(0, line.find("\r\n"));
  size_t first_space = line.find(' ');
  size_t second_space = line.find(' ', first_space + 1);
  if (first_space == std::string_view::npos || second_space == std::string_view::npos) {
    SendResponse(fd, "400 Bad Request", "text/plain", "bad request line\n", true);
    return;
  }
  std::string_view method = line.substr(0, first_space);
  std::string_view target = line.substr(first_space + 1, second_space - first_space - 1);
  std::string_view path = target.substr(0, target.find('?'));
  if (method != "GET" && method != "HEAD") {
    SendResponse(fd, "405 Method Not Allowed", "text/plain", "only GET /metrics\n", true);
    return;
  }
  if (path != "/metrics") {
    SendResponse(fd, "404 Not Found", "text/plain", "only GET /metrics\n", method == "GET");
    return;
  }
  std::string body = registry_.Render();
  SendResponse(fd, "200 OK", "text/plain; version=0.0.4; charset=utf-8", body, method == "GET");
  requests_served_.fetch_add(1);
}

}  // namespace sparkprof::metrics
