// The dendrite's keep-alive connection pool (connection_pool.hpp states the contract).
#include "connection_pool.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <iterator>

namespace bt::detail {
namespace {

boost::system::error_code last_error() {
  return {errno, boost::asio::error::get_system_category()};
}

}  // namespace

boost::system::error_code start_connect(pooled_connection& c,
                                        const boost::asio::ip::tcp::endpoint& ep) {
  boost::system::error_code ec;
  c.socket.open(ep.protocol(), ec);
  if (!ec) c.socket.non_blocking(true, ec);
  if (ec) return ec;
  boost::system::error_code ignored;
  c.socket.set_option(boost::asio::ip::tcp::no_delay(true), ignored);
  if (::connect(c.socket.native_handle(), ep.data(), static_cast<socklen_t>(ep.size())) == 0)
    return {};
  return last_error();
}

boost::system::error_code connect_result(pooled_connection& c) {
  int err = 0;
  socklen_t len = sizeof err;
  if (::getsockopt(c.socket.native_handle(), SOL_SOCKET, SO_ERROR, &err, &len) != 0)
    return last_error();
  return {err, boost::asio::error::get_system_category()};
}

std::unique_ptr<pooled_connection> connection_pool::take(const endpoint& ep,
                                                         clock::time_point now) {
  for (;;) {
    std::unique_ptr<pooled_connection> c;
    {
      std::lock_guard lk(mu_);
      auto it = idle_.find(ep);
      if (it == idle_.end() || it->second.empty()) return nullptr;
      c = std::move(it->second.back());
      it->second.pop_back();
      // An emptied list stays (the sweep drops it): the next put() to this endpoint, as a
      // fan-out's every call makes, then neither allocates a map node nor grows a new vector.
      --idle_total_;
    }
    const auto idle_for = now - c->idle_since;
    if (idle_for >= limits_.idle_timeout) continue;
    if (idle_for < peek_after || still_open(*c)) return c;
    // expired or closed by the server: drop it (the destructor closes the descriptor)
  }
}

/// A non-blocking peek: the server's FIN (0) or unexpected bytes (> 0) make the connection
/// unusable; only "would block" means it is idle and open.
bool connection_pool::still_open(pooled_connection& c) {
  char b;
  const ssize_t r = ::recv(c.socket.native_handle(), &b, 1, MSG_PEEK | MSG_DONTWAIT);
  return r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

void connection_pool::put(const endpoint& ep, std::unique_ptr<pooled_connection> c,
                          clock::time_point now) {
  c->idle_since = now;
  if (c->body.capacity() > keep_buffer_bytes) std::string().swap(c->body);
  if (c->head.capacity() > keep_buffer_bytes) std::string().swap(c->head);
  if (c->buffer.capacity() > keep_buffer_bytes) c->buffer.shrink_to_fit();
  idle_list expired;  // closed outside the lock (declared first: destroyed after the lock)
  std::lock_guard lk(mu_);
  if (now - last_sweep_ > std::chrono::seconds(1)) {
    last_sweep_ = now;
    sweep_locked(now, expired);
  }
  if (closed_ || idle_total_ >= limits_.max_idle_total) return;  // `c` closes
  auto& v = idle_[ep];
  if (v.size() >= limits_.max_idle_per_endpoint) return;
  v.push_back(std::move(c));
  ++idle_total_;
}

void connection_pool::sweep_locked(clock::time_point now, idle_list& out) {
  for (auto it = idle_.begin(); it != idle_.end();) {
    auto& v = it->second;
    for (std::size_t i = 0; i < v.size();) {
      if (now - v[i]->idle_since >= limits_.idle_timeout) {
        out.push_back(std::move(v[i]));
        v.erase(v.begin() + static_cast<std::ptrdiff_t>(i));
        --idle_total_;
      } else {
        ++i;
      }
    }
    it = v.empty() ? idle_.erase(it) : std::next(it);
  }
}

void connection_pool::close_idle() {
  decltype(idle_) drop;  // closed outside the lock
  std::lock_guard lk(mu_);
  drop.swap(idle_);
  idle_total_ = 0;
}

void connection_pool::close() {
  decltype(idle_) drop;
  std::lock_guard lk(mu_);
  closed_ = true;
  drop.swap(idle_);
  idle_total_ = 0;
}

std::size_t connection_pool::idle_count() const {
  std::lock_guard lk(mu_);
  return idle_total_;
}

}  // namespace bt::detail
