#include "metrics/http_exposer.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <signal.h>

#include <algorithm>
#include <array>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <chrono>
#include <list>
#include <string_view>
#include <thread>

namespace sparkprof::metrics {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

// The JVM may fork (ProcessBuilder, or native code): a child must not inherit our sockets.
template <typename Socket>
void SetCloseOnExec(Socket& socket) {
  int fd = socket.native_handle();
  if (fd >= 0) fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC);
}

bool IsHttpParseError(const beast::error_code& error) {
  return error.category() == http::make_error_code(http::error::bad_method).category();
}

}  // namespace

struct HttpExposer::Server {
  Server(std::function<std::string()> render, HttpExposerLimits limits)
      : render(std::move(render)), limits(std::move(limits)) {}

  void Accept();
  void Admit(tcp::socket socket);
  void CloseEverything();  // only while the event loop is not running
  void Fail(const std::string& message);

  const std::function<std::string()> render;
  const HttpExposerLimits limits;
  HttpExposer* owner = nullptr;  // its counters
  // Connections held, oldest first. Declared before `io`, whose destruction destroys the
  // sessions its queued handlers still own, and they remove themselves from this list.
  std::list<Session*> sessions;
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  asio::steady_timer accept_retry{io};
  std::thread thread;
  std::atomic<bool> stopping{false};
};

// One connection: read one request within the deadline, answer it, close. Everything runs on the
// serving thread; a session lives as long as a pending operation holds it.
class HttpExposer::Session : public std::enable_shared_from_this<Session> {
 public:
  Session(Server& server, tcp::socket socket)
      : server_(server), stream_(std::move(socket)), buffer_(kMaxRequestBytes) {
    position_ = server_.sessions.insert(server_.sessions.end(), this);
  }
  ~Session() { Unlist(); }

  void Start() {
    // Beast bounds the request line and the header fields apart (8 KiB each, and the buffer
    // holds at most 8 KiB at a time); OnRead holds the whole request to kMaxRequestBytes.
    parser_.header_limit(kMaxRequestBytes);
    parser_.body_limit(kMaxRequestBytes);  // a GET has no body; a small one is read and ignored
    // One deadline for the whole exchange: Beast's stream keeps the expiry across every read
    // and write until it is changed, so dripping bytes does not extend it.
    stream_.expires_after(std::chrono::milliseconds(server_.limits.request_deadline_ms));
    http::async_read(stream_, buffer_, parser_,
                     [self = shared_from_this()](beast::error_code error, size_t bytes) {
                       self->OnRead(error, bytes);
                     });
  }

  // Reading a request or lingering after the answer: such a connection may be evicted.
  bool answering() const { return answering_; }

  // Pending operations complete with operation_aborted and drop their hold on the session.
  void Close() {
    Unlist();
    beast::error_code ignored;
    stream_.socket().close(ignored);
  }

 private:
  void Unlist() {
    if (!listed_) return;
    server_.sessions.erase(position_);
    listed_ = false;
  }

  void OnRead(beast::error_code error, size_t request_bytes) {
    if (error == http::error::header_limit || error == http::error::buffer_overflow ||
        (!error && request_bytes > kMaxRequestBytes)) {
      Respond(http::status::request_header_fields_too_large, "request too large\n", true);
    } else if (error == http::error::body_limit) {
      Respond(http::status::payload_too_large, "request too large\n", true);
    } else if (error == beast::error::timeout) {
      server_.owner->connections_timed_out_.fetch_add(1);
      Close();
    } else if (error && IsHttpParseError(error) && error != http::error::end_of_stream &&
               error != http::error::partial_message) {
      Respond(http::status::bad_request, "bad request\n", true);
    } else if (error) {
      Close();  // closed, reset or evicted: nobody to answer
    } else {
      Route(parser_.get());
    }
  }

  void Route(const http::request<http::empty_body>& request) {
    http::verb method = request.method();
    std::string_view target(request.target().data(), request.target().size());
    std::string_view path = target.substr(0, target.find('?'));
    if (method != http::verb::get && method != http::verb::head) {
      Respond(http::status::method_not_allowed, "only GET /metrics\n", true);
    } else if (path != "/metrics") {
      Respond(http::status::not_found, "only GET /metrics\n", method == http::verb::get);
    } else {
      response_.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
      Respond(http::status::ok, server_.render(), method == http::verb::get);
      server_.owner->requests_served_.fetch_add(1);
    }
  }

  void Respond(http::status status, std::string body, bool include_body) {
    answering_ = true;
    response_.version(11);
    response_.result(status);
    if (status != http::status::ok) response_.set(http::field::content_type, "text/plain");
    response_.keep_alive(false);
    response_.content_length(body.size());  // HEAD: the length of the body it would get
    if (include_body) response_.body() = std::move(body);
    http::async_write(stream_, response_,
                      [self = shared_from_this()](beast::error_code error, size_t) {
                        if (error == beast::error::timeout) {
                          self->server_.owner->connections_timed_out_.fetch_add(1);
                        }
                        if (error) {
                          self->Close();
                        } else {
                          self->Linger();
                        }
                      });
  }

  // Closing a socket with unread request bytes sends a reset, which can destroy the answer
  // before the client reads it (a 431 to an oversized request, say). So: end our side, then
  // read and drop what the client still sends until it closes, for at most kLingerMs.
  void Linger() {
    answering_ = false;  // evictable again
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(
        std::chrono::milliseconds(std::min(kLingerMs, server_.limits.request_deadline_ms)));
    DrainUntilClosed();
  }

  void DrainUntilClosed() {
    stream_.async_read_some(asio::buffer(drain_),
                            [self = shared_from_this()](beast::error_code error, size_t) {
                              if (error) {
                                self->Close();
                              } else {
                                self->DrainUntilClosed();
                              }
                            });
  }

  static constexpr int kLingerMs = 1000;

  Server& server_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  http::request_parser<http::empty_body> parser_;
  http::response<http::string_body> response_;
  std::array<char, 512> drain_;
  std::list<Session*>::iterator position_;
  bool listed_ = true;
  bool answering_ = false;
};

void HttpExposer::Server::Accept() {
  acceptor.async_accept([this](beast::error_code error, tcp::socket socket) {
    if (error == asio::error::operation_aborted || stopping.load()) return;
    if (error) {
      // Out of descriptors or memory: try again shortly rather than spin on the same error.
      accept_retry.expires_after(std::chrono::milliseconds(100));
      accept_retry.async_wait([this](beast::error_code wait_error) {
        if (!wait_error) Accept();
      });
      return;
    }
    Admit(std::move(socket));
    Accept();
  });
}

void HttpExposer::Server::Admit(tcp::socket socket) {
  SetCloseOnExec(socket);
  if (sessions.size() >= limits.max_connections) {
    owner->connections_shed_.fetch_add(1);
    Session* oldest_reading = nullptr;
    for (Session* session : sessions) {
      if (!session->answering()) {
        oldest_reading = session;
        break;
      }
    }
    if (oldest_reading == nullptr) return;  // all are being answered: `socket` closes here
    oldest_reading->Close();
  }
  std::make_shared<Session>(*this, std::move(socket))->Start();
}

void HttpExposer::Server::CloseEverything() {
  beast::error_code ignored;
  accept_retry.cancel();
  acceptor.close(ignored);
  while (!sessions.empty()) sessions.front()->Close();
}

void HttpExposer::Server::Fail(const std::string& message) {
  CloseEverything();
  if (limits.on_failure) limits.on_failure("/metrics server stopped: " + message);
}

Status ParseBindAddress(const std::string& text, std::string* host, int* first_port,
                        int* last_port) {
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
    return InvalidArgument("bind address '" + text +
                           "': host must be an IPv4 address, localhost or *");
  }
  auto parse_port = [&text](std::string_view digits, int* port) {
    if (digits.empty() || digits.size() > 5 ||
        digits.find_first_not_of("0123456789") != std::string_view::npos) {
      return InvalidArgument("bind address '" + text +
                             "': port must be a number 0..65535 or a range FIRST-LAST");
    }
    *port = std::stoi(std::string(digits));
    if (*port > 65535) return InvalidArgument("bind address '" + text + "': port above 65535");
    return Status::Ok();
  };
  size_t dash = port_text.find('-');
  SPARKPROF_RETURN_IF_ERROR(parse_port(std::string_view(port_text).substr(0, dash), first_port));
  *last_port = *first_port;
  if (dash == std::string::npos) return Status::Ok();
  SPARKPROF_RETURN_IF_ERROR(parse_port(std::string_view(port_text).substr(dash + 1), last_port));
  if (*first_port == 0 || *last_port < *first_port || *last_port - *first_port >= kMaxPortRange) {
    return InvalidArgument("bind address '" + text + "': a port range is FIRST-LAST with " +
                           "0 < FIRST <= LAST and at most " + std::to_string(kMaxPortRange) +
                           " ports");
  }
  return Status::Ok();
}

Result<std::unique_ptr<HttpExposer>> HttpExposer::Start(const std::string& bind_address,
                                                        std::function<std::string()> render,
                                                        HttpExposerLimits limits) {
  std::string host;
  int first_port = 0;
  int last_port = 0;
  SPARKPROF_RETURN_IF_ERROR(ParseBindAddress(bind_address, &host, &first_port, &last_port));
  if (limits.max_connections == 0) limits.max_connections = 1;
  if (limits.request_deadline_ms <= 0) limits.request_deadline_ms = 1;
  std::unique_ptr<Server> server;
  try {
    server = std::make_unique<Server>(std::move(render), std::move(limits));
  } catch (const std::exception& e) {
    return IoError(std::string("cannot start the /metrics server: ") + e.what());
  }
  beast::error_code error;
  asio::ip::address_v4 address = asio::ip::make_address_v4(host, error);
  if (error) return InvalidArgument("bind address '" + bind_address + "': " + error.message());
  tcp::acceptor& acceptor = server->acceptor;
  int bound_port = -1;
  for (int port = first_port; port <= last_port; ++port) {
    beast::error_code ignored;
    acceptor.close(ignored);
    acceptor.open(tcp::v4(), error);
    if (error) break;
    SetCloseOnExec(acceptor);
    acceptor.set_option(asio::socket_base::reuse_address(true), ignored);
    acceptor.bind(tcp::endpoint(address, static_cast<uint16_t>(port)), error);
    if (error == asio::error::address_in_use && port < last_port) continue;
    if (!error) acceptor.listen(asio::socket_base::max_listen_connections, error);
    if (error) break;
    bound_port = acceptor.local_endpoint(ignored).port();
    break;
  }
  if (bound_port < 0) {
    beast::error_code ignored;
    acceptor.close(ignored);
    return IoError("cannot listen on " + bind_address + ": " + error.message());
  }
  std::unique_ptr<HttpExposer> exposer(new HttpExposer(std::move(server), bound_port));
  if (!exposer->server_->thread.joinable()) {
    return IoError("cannot listen on " + bind_address + ": cannot start a thread");
  }
  return exposer;
}

HttpExposer::HttpExposer(std::unique_ptr<Server> server, int port)
    : server_(std::move(server)), port_(port) {
  server_->owner = this;
  server_->Accept();
  // The serving thread must never take the profiler's signals or the JVM's.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &previous);
  try {
    Server* server_pointer = server_.get();
    server_->thread = std::thread([server_pointer] {
      try {
        server_pointer->io.run();
      } catch (const std::exception& e) {
        server_pointer->Fail(e.what());
      } catch (...) {
        server_pointer->Fail("unknown error");
      }
    });
  } catch (const std::exception&) {
    server_->CloseEverything();  // Start reports it: the thread is not joinable
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

HttpExposer::~HttpExposer() {
  // Stop() joins the server's thread; a join that throws (the thread cannot be joined) leaves
  // nothing more a destructor could do, and must not end the process.
  try {
    Stop();
  } catch (...) {  // see above
  }
}

void HttpExposer::Stop() {
  if (server_->stopping.exchange(true)) return;
  // stop() makes run() return after the handler in progress, if any; every socket is then
  // closed here, so no client can hold the caller.
  server_->io.stop();
  if (server_->thread.joinable()) server_->thread.join();
  server_->CloseEverything();
}

}  // namespace sparkprof::metrics
