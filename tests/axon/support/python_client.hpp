// Test clients for the axon: requests built exactly as a Python dendrite builds them
// (PROTOCOL 4: preprocess_synapse_for_request, to_headers, json.dumps body, sr25519 signature),
// sent over a raw loopback socket so that tests can tamper with any byte, and the answer read
// back with Beast. Blocking, each operation bounded by a timeout.
#pragma once

#include <bt/body_hash.hpp>
#include <bt/header_codec.hpp>
#include <bt/hex.hpp>
#include <bt/json_body.hpp>
#include <bt/keypair.hpp>
#include <bt/sha3.hpp>
#include <bt/synapse.hpp>
#include <bt/version.hpp>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bt::test {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using namespace std::chrono_literals;

inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// What a Python dendrite puts in one request, before it is turned into bytes.
struct request_parts {
  std::string path;                                          // "/Dummy"
  std::vector<std::pair<std::string, std::string>> headers;  // bt headers in to_headers order
  std::string body;                                          // json.dumps(model_dump())
  std::string signed_message;

  /// Replaces (or appends) a header.
  void set(const std::string& name, std::string value) {
    for (auto& [n, v] : headers)
      if (n == name) {
        v = std::move(value);
        return;
      }
    headers.emplace_back(name, std::move(value));
  }
  void erase(const std::string& name) {
    std::erase_if(headers, [&](const auto& h) { return h.first == name; });
  }
  const std::string* find(const std::string& name) const {
    for (const auto& [n, v] : headers)
      if (n == name) return &v;
    return nullptr;
  }

  /// The request as aiohttp sends it (4.5): POST, Host, Accept, User-Agent, Content-Type,
  /// Content-Length, then the bt headers, then the body.
  std::string wire(std::uint16_t port, bool keep_alive = true) const {
    std::string out =
        "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
        "\r\nAccept: */*\r\nAccept-Encoding: gzip, deflate\r\nUser-Agent: Python/3.11 aiohttp/3.9.5"
        "\r\nContent-Type: application/json\r\nContent-Length: " +
        std::to_string(body.size()) + "\r\n";
    if (!keep_alive) out += "Connection: close\r\n";
    for (const auto& [n, v] : headers) out += n + ": " + v + "\r\n";
    out += "\r\n";
    out += body;
    return out;
  }
};

/// A uuid in the form a Python dendrite sends (str(uuid.uuid1()): lower-case hex, 8-4-4-4-12,
/// which the axon requires, PROTOCOL D29), distinct for each `label` and the same every run:
/// for tests that need one caller endpoint (hotkey + uuid) per request or per scenario.
inline std::string test_uuid(std::string_view label) {
  const std::string h = sha3_256_hex(label);
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-1" + h.substr(13, 3) + "-8" + h.substr(17, 3) +
         "-" + h.substr(20, 12);
}

struct python_request_options {
  double timeout = 12.0;
  std::optional<std::int64_t> nonce{};  // default: now
  std::string uuid = "5ecbd69c-1cec-11ee-b0dc-e29ce36fec1a";
  std::int64_t version = version_as_int;
  std::uint16_t axon_port = 8091;
  bool sign = true;
};

/// preprocess_synapse_for_request + to_headers + json.dumps, for synapse `syn` sent by `caller`
/// to an axon whose hotkey is `axon_hotkey`.
template <class T>
request_parts python_request(T syn, const keypair& caller, const std::string& axon_hotkey,
                             const python_request_options& o = {}) {
  syn.timeout = o.timeout;
  syn.dendrite = terminal_info{};
  syn.dendrite.ip = "127.0.0.1";
  syn.dendrite.version = o.version;
  syn.dendrite.nonce = o.nonce ? *o.nonce : now_ns();
  syn.dendrite.uuid = o.uuid;
  syn.dendrite.hotkey = caller.ss58_address();
  syn.axon = terminal_info{};
  syn.axon.ip = "127.0.0.1";
  syn.axon.port = o.axon_port;
  syn.axon.hotkey = axon_hotkey;
  request_parts r;
  r.path = descriptor_for(syn).route();
  r.signed_message = std::to_string(*syn.dendrite.nonce) + "." + *syn.dendrite.hotkey + "." +
                     axon_hotkey + "." + *syn.dendrite.uuid + "." + body_hash(syn);
  if (o.sign)
    syn.dendrite.signature = "0x" + to_hex(caller.sign(std::string_view(r.signed_message)));
  header_list hl;
  to_headers(syn, hl);
  r.headers = std::move(hl.items);
  r.body = to_json_body(syn, json_style::python_dumps);
  return r;
}

/// An HTTP answer as the test sees it.
struct reply {
  int status = 0;
  std::string body;
  http::response<http::string_body> message;
  /// Value of a header (case-insensitive name), or nullopt.
  std::optional<std::string> header(const std::string& name) const {
    auto it = message.find(name);
    if (it == message.end()) return std::nullopt;
    return std::string(it->value());
  }
  bool has_header(const std::string& name) const { return message.find(name) != message.end(); }
};

/// A blocking loopback connection with timeouts.
class raw_client {
 public:
  explicit raw_client(std::uint16_t port) : stream_(ioc_) {
    stream_.expires_after(5s);
    beast::error_code ec;
    bool done = false;
    stream_.async_connect(net::ip::tcp::endpoint(net::ip::make_address("127.0.0.1"), port),
                          [&](beast::error_code e) {
                            ec = e;
                            done = true;
                          });
    run(done);
    if (ec) throw std::runtime_error("connect: " + ec.message());
  }

  void send(const std::string& bytes, std::chrono::milliseconds timeout = 5000ms) {
    stream_.expires_after(timeout);
    beast::error_code ec;
    bool done = false;
    net::async_write(stream_, net::buffer(bytes), [&](beast::error_code e, std::size_t) {
      ec = e;
      done = true;
    });
    run(done);
    if (ec) throw std::runtime_error("send: " + ec.message());
  }

  /// Reads one response; throws on timeout or when the connection closes first.
  reply read(std::chrono::milliseconds timeout = 10000ms) {
    std::optional<reply> r = try_read(timeout);
    if (!r) throw std::runtime_error("read: " + last_error_.message());
    return std::move(*r);
  }

  /// Reads one response, or nullopt (last_error() says why).
  std::optional<reply> try_read(std::chrono::milliseconds timeout = 10000ms) {
    stream_.expires_after(timeout);
    http::response_parser<http::string_body> parser;
    parser.body_limit(1 << 26);
    beast::error_code ec;
    bool done = false;
    http::async_read(stream_, buffer_, parser, [&](beast::error_code e, std::size_t) {
      ec = e;
      done = true;
    });
    run(done);
    last_error_ = ec;
    if (ec) return std::nullopt;
    reply r;
    r.message = parser.release();
    r.status = static_cast<int>(r.message.result_int());
    r.body = r.message.body();
    return r;
  }

  /// True when the server closes the connection (EOF or reset) within `timeout` without sending
  /// anything more.
  bool closed_by_peer(std::chrono::milliseconds timeout = 5000ms) {
    if (buffer_.size() > 0) return false;
    stream_.expires_after(timeout);
    char byte;
    beast::error_code ec;
    bool done = false;
    std::size_t got = 0;
    stream_.async_read_some(net::buffer(&byte, 1), [&](beast::error_code e, std::size_t n) {
      ec = e;
      got = n;
      done = true;
    });
    run(done);
    return got == 0 && ec && ec != beast::error::timeout;
  }

  beast::error_code last_error() const { return last_error_; }
  beast::tcp_stream& stream() { return stream_; }

 private:
  void run(bool& done) {
    ioc_.restart();
    while (!done && ioc_.run_one() > 0) {
    }
  }

  net::io_context ioc_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  beast::error_code last_error_;
};

/// Sends one request on a fresh connection and returns the answer.
inline reply roundtrip(std::uint16_t port, const std::string& wire,
                       std::chrono::milliseconds timeout = 10000ms) {
  raw_client c(port);
  c.send(wire);
  return c.read(timeout);
}

}  // namespace bt::test
