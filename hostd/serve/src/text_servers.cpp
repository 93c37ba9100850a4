// SPDX-License-Identifier: GPL-2.0-or-later
#include "vcpufold/hostd/text_servers.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <array>
#include <cstring>
#include <deque>

#include "vcpufold/common/listen_address.h"

namespace vcpufold::hostd {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

constexpr std::size_t kMaxRequestBytes = 8192;
constexpr auto kClientTimeout = std::chrono::seconds(5);
constexpr auto kHttpDeadline = std::chrono::seconds(2);     // a whole exchange, from accept to close
constexpr std::size_t kMaxHttpConnections = 32;           // more: the oldest is closed
constexpr auto kAcceptBackoff = std::chrono::milliseconds(100);  // after EMFILE and the like
constexpr std::size_t kMaxControlRequestBytes = 256;             // a request line; longer: closed

// One HTTP exchange: read the request head (bounded), answer, close.
void serveHttp(std::shared_ptr<asio::ip::tcp::socket> socket, TextSource metrics, asio::io_context& io) {
  auto request = std::make_shared<asio::streambuf>(kMaxRequestBytes);
  auto timer = std::make_shared<asio::steady_timer>(io, kHttpDeadline);
  timer->async_wait([socket](const error_code& error) {
    if (!error) socket->close();
  });
  asio::async_read_until(*socket, *request, "\r\n\r\n",
                         [socket, request, timer, metrics](const error_code& error, std::size_t) {
                           if (error) {
                             timer->cancel();
                             return;
                           }
                           std::string line(asio::buffers_begin(request->data()), asio::buffers_end(request->data()));
                           line = line.substr(0, line.find("\r\n"));
                           std::string status = "200 OK";
                           std::string body;
                           if (line.rfind("GET /metrics ", 0) == 0 || line.rfind("GET /metrics?", 0) == 0)
                             body = metrics();
                           else {
                             status = "404 Not Found";
                             body = "vcpufold-hostd serves /metrics\n";
                           }
                           auto response = std::make_shared<std::string>(
                               "HTTP/1.1 " + status + "\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
                               "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
                           asio::async_write(*socket, asio::buffer(*response),
                                             [socket, response, timer](const error_code&, std::size_t) {
                                               timer->cancel();
                                               error_code ignored;
                                               socket->shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
                                             });
                         });
}

}  // namespace

struct MetricsServer::Impl : std::enable_shared_from_this<Impl> {
  Impl(asio::io_context& context, TextSource source)
      : io(context), acceptor(context), backoffTimer(context), metrics(std::move(source)) {}
  asio::io_context& io;
  asio::ip::tcp::acceptor acceptor;
  asio::steady_timer backoffTimer;
  TextSource metrics;
  // Open exchanges, oldest first: a local user holding connections open
  // costs hostd at most kMaxHttpConnections descriptors.
  std::deque<std::weak_ptr<asio::ip::tcp::socket>> open;
  std::uint64_t evicted = 0;
  std::uint64_t acceptErrors = 0;

  void admit(const std::shared_ptr<asio::ip::tcp::socket>& socket) {
    std::erase_if(open, [](const auto& weak) {
      const auto live = weak.lock();
      return !live || !live->is_open();
    });
    while (open.size() >= kMaxHttpConnections) {
      if (auto oldest = open.front().lock()) {
        error_code ignored;
        oldest->close(ignored);
        ++evicted;
      }
      open.pop_front();
    }
    open.push_back(socket);
  }

  void accept() {
    auto socket = std::make_shared<asio::ip::tcp::socket>(io);
    acceptor.async_accept(*socket, [self = shared_from_this(), socket](const error_code& error) {
      if (error == asio::error::operation_aborted) return;
      if (error) {
        // Out of descriptors (EMFILE, ENFILE) or memory: the listen queue keeps
        // the client; try again shortly instead of spinning on the error.
        ++self->acceptErrors;
        self->backoffTimer.expires_after(kAcceptBackoff);
        self->backoffTimer.async_wait([self](const error_code& waited) {
          if (!waited) self->accept();
        });
        return;
      }
      self->admit(socket);
      serveHttp(socket, self->metrics, self->io);
      self->accept();
    });
  }
};

MetricsServer::MetricsServer(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
MetricsServer::~MetricsServer() {
  error_code ignored;
  impl_->acceptor.close(ignored);
  impl_->backoffTimer.cancel();
  for (const auto& weak : impl_->open)
    if (auto socket = weak.lock()) socket->close(ignored);
}
std::uint64_t MetricsServer::evictedConnections() const { return impl_->evicted; }
std::uint64_t MetricsServer::acceptErrors() const { return impl_->acceptErrors; }
unsigned short MetricsServer::port() const { return impl_->acceptor.local_endpoint().port(); }

Expected<std::unique_ptr<MetricsServer>> MetricsServer::start(asio::io_context& io, const std::string& address,
                                                              TextSource metrics) {
  auto parsed = parseListenAddress(address, "metrics.address");
  if (!parsed) return parsed.error();
  error_code error;
  const auto host = asio::ip::make_address(parsed->host, error);
  if (error) return Error{"metrics.address \"" + address + "\": " + error.message()};
  const auto port = parsed->port;
  auto impl = std::make_shared<Impl>(io, std::move(metrics));
  const asio::ip::tcp::endpoint endpoint(host, static_cast<unsigned short>(port));
  impl->acceptor.open(endpoint.protocol(), error);
  if (!error) impl->acceptor.set_option(asio::socket_base::reuse_address(true), error);
  if (!error) impl->acceptor.bind(endpoint, error);
  if (!error) impl->acceptor.listen(asio::socket_base::max_listen_connections, error);
  if (error) return Error{"metrics on " + address + ": " + error.message()};
  impl->accept();
  return std::unique_ptr<MetricsServer>(new MetricsServer(impl));
}

struct ControlServer::Impl : std::enable_shared_from_this<Impl> {
  Impl(asio::io_context& context, std::string socketPath, ControlSources sources)
      : io(context), acceptor(context), path(std::move(socketPath)), pages(std::move(sources)) {}
  asio::io_context& io;
  asio::local::stream_protocol::acceptor acceptor;
  std::string path;
  ControlSources pages;

  void accept() {
    auto socket = std::make_shared<asio::local::stream_protocol::socket>(io);
    acceptor.async_accept(*socket, [self = shared_from_this(), socket](const error_code& error) {
      if (error == asio::error::operation_aborted) return;
      if (!error) self->serve(socket);
      self->accept();
    });
  }

  // The answer to one request line.
  std::string answer(std::string request) const {
    if (!request.empty() && request.back() == '\r') request.pop_back();
    if (request == kControlStatusRequest) return pages.table();
    if (request == kControlStatusJsonRequest) return pages.json();
    return "error: unknown request (this vcpufold-hostd answers \"" + std::string(kControlStatusRequest) + "\" and \"" +
           kControlStatusJsonRequest + "\")\n";
  }

  void serve(const std::shared_ptr<asio::local::stream_protocol::socket>& socket) {
    // The file mode already keeps others out; the peer's credentials say so again.
    ucred peer{};
    socklen_t length = sizeof peer;
    if (::getsockopt(socket->native_handle(), SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0 ||
        (peer.uid != 0 && peer.uid != ::geteuid()))
      return;
    // The whole exchange, request and answer, within the client timeout.
    auto timer = std::make_shared<asio::steady_timer>(io, kClientTimeout);
    timer->async_wait([socket](const error_code& error) {
      if (!error) socket->close();
    });
    auto request = std::make_shared<asio::streambuf>(kMaxControlRequestBytes);
    asio::async_read_until(
        *socket, *request, '\n',
        [self = shared_from_this(), socket, request, timer](const error_code& error, std::size_t bytes) {
          if (error) {
            timer->cancel();
            return;  // no line within the bound, or the client went away
          }
          std::string line(asio::buffers_begin(request->data()),
                           asio::buffers_begin(request->data()) + static_cast<std::ptrdiff_t>(bytes - 1));
          auto text = std::make_shared<std::string>(self->answer(std::move(line)));
          asio::async_write(*socket, asio::buffer(*text), [socket, text, timer](const error_code&, std::size_t) {
            timer->cancel();
            error_code ignored;
            socket->shutdown(asio::local::stream_protocol::socket::shutdown_both, ignored);
          });
        });
  }
};

ControlServer::ControlServer(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
ControlServer::~ControlServer() {
  error_code ignored;
  impl_->acceptor.close(ignored);
  ::unlink(impl_->path.c_str());
}

Expected<std::unique_ptr<ControlServer>> ControlServer::start(asio::io_context& io, const std::string& socketPath,
                                                              ControlSources pages) {
  auto impl = std::make_shared<Impl>(io, socketPath, std::move(pages));
  ::unlink(socketPath.c_str());  // a stale socket of an earlier run
  error_code error;
  const asio::local::stream_protocol::endpoint endpoint(socketPath);
  impl->acceptor.open(endpoint.protocol(), error);
  if (!error) impl->acceptor.bind(endpoint, error);
  if (!error && ::chmod(socketPath.c_str(), 0600) != 0) error = error_code(errno, boost::system::system_category());
  if (!error) impl->acceptor.listen(16, error);
  if (error) return Error{"control socket " + socketPath + ": " + error.message()};
  impl->accept();
  return std::unique_ptr<ControlServer>(new ControlServer(impl));
}

Expected<std::string> readControlSocket(const std::string& socketPath, const std::string& request,
                                        std::chrono::milliseconds timeout) {
  if (socketPath.size() > 107) return Error{socketPath + ": path too long for a UNIX socket"};
  asio::io_context io;
  asio::local::stream_protocol::socket socket(io);
  asio::steady_timer deadline(io, timeout);
  std::string text;
  const auto line = std::make_shared<std::string>(request + "\n");
  auto buffer = std::make_shared<std::array<char, 4096>>();
  error_code result;
  bool timedOut = false;
  deadline.async_wait([&](const error_code& error) {
    if (error) return;
    timedOut = true;
    error_code ignored;
    socket.close(ignored);
  });
  std::function<void()> readMore = [&] {
    socket.async_read_some(asio::buffer(*buffer), [&](const error_code& error, std::size_t n) {
      text.append(buffer->data(), n);
      if (error) {
        result = error;
        deadline.cancel();
        return;
      }
      readMore();
    });
  };
  socket.async_connect(asio::local::stream_protocol::endpoint(socketPath), [&](const error_code& error) {
    if (error) {
      result = error;
      deadline.cancel();
      return;
    }
    asio::async_write(socket, asio::buffer(*line), [&, line](const error_code& written, std::size_t) {
      if (written) {
        result = written;
        deadline.cancel();
        return;
      }
      readMore();
    });
  });
  io.run();
  if (timedOut)
    return Error{socketPath + ": no answer within " + std::to_string(timeout.count()) + " ms (is vcpufold-hostd wedged?)"};
  if (result != asio::error::eof)
    return Error{socketPath + ": " + result.message() + " (is vcpufold-hostd running? are you root?)"};
  return text;
}

}  // namespace vcpufold::hostd
