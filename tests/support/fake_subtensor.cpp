// The loopback fake subtensor (fake_subtensor.hpp).
#include "support/fake_subtensor.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/websocket.hpp>

#include <cctype>
#include <deque>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace bt::test {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace websocket = boost::beast::websocket;
using tcp = net::ip::tcp;

namespace {

constexpr auto use_ec = net::as_tuple(net::use_awaitable);

bool is_hex(std::string_view s) {
  if (s.empty()) return false;
  for (unsigned char c : s) {
    if (!std::isxdigit(c)) return false;
  }
  return true;
}

/// The comparison form of params (see the header).
bt::json normalise(const bt::json& params) {
  bt::json out = bt::json::array();
  if (!params.is_array()) return params;
  for (const auto& p : params) {
    if (p.is_string()) {
      std::string s = p.get<std::string>();
      std::string_view v = s;
      if (v.size() >= 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) v.remove_prefix(2);
      if (is_hex(v) || v.empty()) {
        std::string h(v);
        for (auto& c : h) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        out.push_back(h);
        continue;
      }
    }
    out.push_back(p);
  }
  while (!out.empty() && out.back().is_null()) out.erase(out.size() - 1);
  return out;
}

std::string key(const std::string& method, const bt::json& params) {
  return method + "\n" + normalise(params).dump();
}

}  // namespace

fake_fault parse_fake_fault(std::string_view text) {
  fake_fault f;
  auto arg = [&](std::string_view prefix) -> std::size_t {
    const std::string n(text.substr(prefix.size()));
    if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos) {
      throw std::invalid_argument("fault argument is not a number: " + std::string(text));
    }
    return std::stoull(n);
  };
  if (text == "close") {
    f.what = fake_fault::kind::close_mid_response;
  } else if (text == "drop") {
    f.what = fake_fault::kind::drop;
  } else if (text == "malformed") {
    f.what = fake_fault::kind::malformed_frame;
  } else if (text.starts_with("oversized:")) {
    f.what = fake_fault::kind::oversized_frame;
    f.size = arg("oversized:");
  } else if (text.starts_with("delay:")) {
    f.what = fake_fault::kind::delay;
    f.delay = std::chrono::milliseconds(arg("delay:"));
  } else {
    throw std::invalid_argument(
        "unknown fault (close, drop, malformed, oversized:BYTES, delay:MS): " + std::string(text));
  }
  return f;
}

// The coroutines hold a plain pointer: the impl outlives its io_context's handlers, which are
// destroyed with the io_context (a member) when the impl is.
struct fake_subtensor::impl {
  net::io_context ioc{1};
  tcp::acceptor acceptor{ioc};
  std::thread thread;

  mutable std::mutex mutex;                 // guards everything below
  std::map<std::string, bt::json> answers;  // key -> response object
  std::map<std::string, bt::json> any;      // method -> response for any params
  struct gated_answer {
    std::string trigger;
    bt::json response;
  };
  std::map<std::string, gated_answer> gated;  // key -> answer once `trigger` was received
  std::set<std::string> methods;              // methods with at least one answer
  std::map<std::string, fake_fault> faults;   // method -> fault
  std::map<std::string, std::size_t> counts;
  std::function<void(const std::string&)> observer;
  std::size_t outstanding = 0;
  std::size_t max_outstanding = 0;
  std::size_t accepted = 0;

  struct session {
    websocket::stream<beast::tcp_stream> ws;
    // Frames to write, in order; `close_after` ends the connection after a partial frame.
    struct out {
      std::string text;
      bool partial_then_close = false;
    };
    std::deque<out> queue;
    bool writing = false;
    bool closed = false;
    explicit session(tcp::socket s) : ws(std::move(s)) {}
  };
  std::vector<std::weak_ptr<session>> sessions;  // on the I/O thread only

  static net::awaitable<void> accept_loop(impl* self) {
    for (;;) {
      auto [ec, sock] = co_await self->acceptor.async_accept(use_ec);
      if (ec) co_return;
      boost::system::error_code ignored;
      sock.set_option(tcp::no_delay(true), ignored);  // answers go out as soon as written
      auto s = std::make_shared<session>(std::move(sock));
      {
        std::lock_guard lock(self->mutex);
        ++self->accepted;
      }
      self->sessions.push_back(s);
      net::co_spawn(self->ioc, run_session(self, s), net::detached);
    }
  }

  static net::awaitable<void> run_session(impl* self, std::shared_ptr<session> s) {
    s->ws.read_message_max(1u << 20);
    auto [aec] = co_await s->ws.async_accept(use_ec);
    if (aec) co_return;
    beast::flat_buffer buf;
    for (;;) {
      buf.clear();
      auto [ec, n] = co_await s->ws.async_read(buf, use_ec);
      if (ec || s->closed) co_return;
      const auto data = buf.cdata();
      std::string text(static_cast<const char*>(data.data()), data.size());
      net::co_spawn(self->ioc, handle(self, s, std::move(text)), net::detached);
    }
  }

  static net::awaitable<void> handle(impl* self, std::shared_ptr<session> s, std::string text) {
    bt::json req = bt::json::parse(text, nullptr, false);
    bt::json id = nullptr;
    if (req.is_object() && req.contains("id")) id = req["id"];
    bt::json response;
    fake_fault fault;
    std::function<void(const std::string&)> observe;
    std::string method_seen;
    {
      std::lock_guard lock(self->mutex);
      ++self->outstanding;
      self->max_outstanding = std::max(self->max_outstanding, self->outstanding);
      if (!req.is_object() || !req.contains("method") || !req["method"].is_string()) {
        response = {{"error", {{"code", -32600}, {"message", "Invalid request"}}}};
      } else {
        const std::string method = req["method"].get<std::string>();
        const bt::json params = req.value("params", bt::json::array());
        ++self->counts[method];
        observe = self->observer;
        method_seen = method;
        if (auto f = self->faults.find(method); f != self->faults.end()) {
          fault = f->second;
          if (f->second.times != 0 && --f->second.times == 0) self->faults.erase(f);
        }
        const std::string k = key(method, params);
        const auto g = self->gated.find(k);
        if (g != self->gated.end() && self->counts[g->second.trigger] > 0) {
          response = g->second.response;
        } else if (auto a = self->answers.find(k); a != self->answers.end()) {
          response = a->second;
        } else if (auto w = self->any.find(method); w != self->any.end()) {
          response = w->second;
        } else if (!self->methods.count(method)) {
          response = {{"error", {{"code", -32601}, {"message", "Method not found"}}}};
        } else {
          response = {{"error",
                       {{"code", -32602},
                        {"message", "fake subtensor: no recorded answer for " + method + " " +
                                        params.dump()}}}};
        }
      }
    }
    if (observe) observe(method_seen);
    bt::json msg = {{"jsonrpc", "2.0"}};
    for (auto& [k, v] : response.items()) msg[k] = v;
    msg["id"] = id;
    session::out o;
    switch (fault.what) {
      case fake_fault::kind::none:
        o.text = msg.dump();
        break;
      case fake_fault::kind::drop:  // no answer: the connection is closed below
        break;
      case fake_fault::kind::delay: {
        net::steady_timer t(self->ioc);
        t.expires_after(fault.delay);
        co_await t.async_wait(use_ec);
        o.text = msg.dump();
        break;
      }
      case fake_fault::kind::close_mid_response:
        o.text = msg.dump();
        o.partial_then_close = true;
        break;
      case fake_fault::kind::malformed_frame:
        o.text = "{\"jsonrpc\":\"2.0\",\"id\":" + id.dump() + ",\"result\":[\"0x01";
        break;
      case fake_fault::kind::oversized_frame: {
        std::string head = "{\"jsonrpc\":\"2.0\",\"id\":" + id.dump() + ",\"result\":\"0x";
        const std::size_t fill = fault.size > head.size() + 2 ? fault.size - head.size() - 2 : 0;
        o.text = head + std::string(fill, '0') + "\"}";
        break;
      }
    }
    {
      std::lock_guard lock(self->mutex);
      --self->outstanding;
    }
    if (fault.what == fake_fault::kind::drop) {
      s->closed = true;
      beast::get_lowest_layer(s->ws).close();
      co_return;
    }
    s->queue.push_back(std::move(o));
    if (!s->writing) co_await write_queue(s);
  }

  static net::awaitable<void> write_queue(std::shared_ptr<session> s) {
    s->writing = true;
    while (!s->queue.empty() && !s->closed) {
      auto o = std::move(s->queue.front());
      s->queue.pop_front();
      s->ws.text(true);
      if (o.partial_then_close) {
        const std::size_t half = std::max<std::size_t>(1, o.text.size() / 2);
        auto [ec, n] =
            co_await s->ws.async_write_some(false, net::buffer(o.text.data(), half), use_ec);
        (void)ec;
        (void)n;
        s->closed = true;
        beast::get_lowest_layer(s->ws).close();
        break;
      }
      auto [ec, n] = co_await s->ws.async_write(net::buffer(o.text), use_ec);
      if (ec) {
        s->closed = true;
        break;
      }
    }
    s->writing = false;
  }

  void load(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("fake subtensor: session file not found: " + path);
    std::stringstream ss;
    ss << in.rdbuf();
    bt::json j = bt::json::parse(ss.str(), nullptr, false);
    if (!j.is_object() || !j.contains("calls") || !j["calls"].is_array()) {
      throw std::runtime_error("fake subtensor: not a session file ({\"calls\": [...]}): " + path);
    }
    std::lock_guard lock(mutex);
    for (auto& c : j["calls"]) {
      const std::string method = c.at("method").get<std::string>();
      const bt::json& params = c.at("params");
      if (params == "*") {
        any[method] = c.at("response");
      } else if (c.contains("after")) {
        gated[key(method, params)] = {c.at("after").get<std::string>(), c.at("response")};
      } else {
        answers[key(method, params)] = c.at("response");
      }
      methods.insert(method);
    }
  }
};

fake_subtensor::fake_subtensor(const std::string& session_path, std::uint16_t port)
    : impl_(std::make_shared<impl>()) {
  if (!session_path.empty()) impl_->load(session_path);
  tcp::endpoint ep(net::ip::make_address("127.0.0.1"), port);
  impl_->acceptor.open(ep.protocol());
  impl_->acceptor.set_option(tcp::acceptor::reuse_address(true));
  impl_->acceptor.bind(ep);
  impl_->acceptor.listen();
  net::co_spawn(impl_->ioc, impl::accept_loop(impl_.get()), net::detached);
  impl_->thread = std::thread([i = impl_.get()] { i->ioc.run(); });
}

fake_subtensor::~fake_subtensor() {
  impl_->ioc.stop();
  impl_->thread.join();
}

std::uint16_t fake_subtensor::port() const noexcept {
  boost::system::error_code ec;
  return impl_->acceptor.local_endpoint(ec).port();
}

std::string fake_subtensor::url() const {
  return "ws://127.0.0.1:" + std::to_string(port());
}

void fake_subtensor::load(const std::string& session_path) {
  impl_->load(session_path);
}

void fake_subtensor::set_response(const std::string& method, const bt::json& params,
                                  bt::json response) {
  std::lock_guard lock(impl_->mutex);
  impl_->answers[key(method, params)] = std::move(response);
  impl_->methods.insert(method);
}

void fake_subtensor::set_any_response(const std::string& method, bt::json response) {
  std::lock_guard lock(impl_->mutex);
  impl_->any[method] = std::move(response);
  impl_->methods.insert(method);
}

void fake_subtensor::set_response_after(const std::string& trigger, const std::string& method,
                                        const bt::json& params, bt::json response) {
  std::lock_guard lock(impl_->mutex);
  impl_->gated[key(method, params)] = {trigger, std::move(response)};
  impl_->methods.insert(method);
}

void fake_subtensor::remove_method(const std::string& method) {
  std::lock_guard lock(impl_->mutex);
  impl_->any.erase(method);
  for (auto it = impl_->gated.begin(); it != impl_->gated.end();) {
    if (it->first.starts_with(method + "\n")) {
      it = impl_->gated.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = impl_->answers.begin(); it != impl_->answers.end();) {
    if (it->first.starts_with(method + "\n")) {
      it = impl_->answers.erase(it);
    } else {
      ++it;
    }
  }
  impl_->methods.erase(method);
}

void fake_subtensor::set_fault(const std::string& method, fake_fault f) {
  std::lock_guard lock(impl_->mutex);
  impl_->faults[method] = f;
}

void fake_subtensor::set_request_observer(std::function<void(const std::string&)> observer) {
  std::lock_guard lock(impl_->mutex);
  impl_->observer = std::move(observer);
}

void fake_subtensor::clear_faults() {
  std::lock_guard lock(impl_->mutex);
  impl_->faults.clear();
}

std::size_t fake_subtensor::requests(const std::string& method) const {
  std::lock_guard lock(impl_->mutex);
  auto it = impl_->counts.find(method);
  return it == impl_->counts.end() ? 0 : it->second;
}

std::size_t fake_subtensor::max_outstanding() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->max_outstanding;
}

std::size_t fake_subtensor::connections() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->accepted;
}

void fake_subtensor::drop_connections() {
  std::promise<void> done;
  net::post(impl_->ioc, [this, &done] {
    for (auto& w : impl_->sessions) {
      if (auto s = w.lock()) {
        s->closed = true;
        beast::get_lowest_layer(s->ws).close();
      }
    }
    impl_->sessions.clear();
    done.set_value();
  });
  done.get_future().wait();
}

}  // namespace bt::test
