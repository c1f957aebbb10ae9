// JSON Lines over TCP for serve-reward's Slurm workers; see LineSocket.h.
#include "server/LineSocket.h"

#include <cerrno>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace stitch::server {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kSlice = std::chrono::milliseconds(100);  // how often a wait looks at its cancel token

// Keep-alive probes, so that a peer whose machine vanished is noticed by the kernel eventually even when
// nothing is sent (the service also watches squeue, which notices sooner).
void keepAlive(int fd) {
  int on = 1, idle = 30, interval = 10, count = 3;
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

}  // namespace

LineSocket::~LineSocket() { ::close(fd_); }

std::variant<std::unique_ptr<LineSocket>, std::string> LineSocket::connect(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0)
    return "cannot resolve " + host + ": " + ::gai_strerror(rc);
  std::string error = "no address for " + host;
  for (addrinfo* a = found; a; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
      ::freeaddrinfo(found);
      keepAlive(fd);
      return std::make_unique<LineSocket>(fd);
    }
    error = "cannot connect to " + host + ":" + std::to_string(port) + ": " + std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return error;
}

bool LineSocket::send(const std::string& line) {
  const std::string data = line + "\n";
  for (std::size_t sent = 0; sent < data.size();) {
    const ssize_t n = ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

LineSocket::Read LineSocket::read(std::string& line, std::optional<Clock::time_point> until,
                                  const agents::CancelToken* cancel) {
  for (;;) {
    if (const auto end = pending_.find('\n'); end != std::string::npos) {
      line = pending_.substr(0, end);
      pending_.erase(0, end + 1);
      return Read::line;
    }
    if (cancel && cancel->cancelled()) return Read::cancelled;
    auto wait = kSlice;
    if (until) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*until - Clock::now());
      if (left.count() <= 0) return Read::timeout;
      wait = std::min(wait, left);
    }
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(wait.count()));
    if (ready < 0 && errno != EINTR) return Read::closed;
    if (ready <= 0) continue;
    char buffer[65536];
    const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return Read::closed;
    pending_.append(buffer, static_cast<std::size_t>(n));
  }
}

bool LineSocket::readableNow() const {
  pollfd p{fd_, POLLIN, 0};
  return ::poll(&p, 1, 0) != 0;
}

void LineSocket::shutdown() { ::shutdown(fd_, SHUT_RDWR); }

LineListener::~LineListener() { ::close(fd_); }

std::variant<std::unique_ptr<LineListener>, std::string> LineListener::open() {
  const int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::string("cannot open a socket: ") + std::strerror(errno);
  int off = 0, on = 1;
  ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);  // IPv4 clients too
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in6 address{};
  address.sin6_family = AF_INET6;
  address.sin6_addr = in6addr_any;
  socklen_t length = sizeof address;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(fd, 64) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const std::string why = std::string("cannot listen for the workers: ") + std::strerror(errno);
    ::close(fd);
    return why;
  }
  return std::unique_ptr<LineListener>(new LineListener(fd, ntohs(address.sin6_port)));
}

std::unique_ptr<LineSocket> LineListener::accept(std::chrono::milliseconds wait) {
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(wait.count())) <= 0) return nullptr;
  const int fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return nullptr;
  keepAlive(fd);
  return std::make_unique<LineSocket>(fd);
}

}  // namespace stitch::server
