// Our Epistula v2 requests (dendrite::epistula_call and bt-dendrite epistula) against an
// independent receiver shaped like the subnets' reference verifiers
// (tests/node/epistula_verifier_peer.mjs): accepted as made, refused when tampered with.
// Registered by tests/epistula_node.cmake. A missing node or node_modules fails the test (run
// scripts/setup); nothing is skipped.
#include <bt/dendrite.hpp>
#include <bt/detail/dendrite_ops.hpp>

#include <bt/epistula.hpp>
#include <bt/json.hpp>

#include <catch2/catch.hpp>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>

#include <set>
#include <string>

#include "support/dev_keys.hpp"
#include "support/node_peer.hpp"
#include "support/run_command.hpp"

namespace {

using bt::test::alice;
using bt::test::bob;
using bt::test::charlie;
using bt::test::node_peer;

/// Sends `head` + `body` on a fresh connection to `a` and returns the answer (status, body).
std::pair<int, bt::json> send_raw(const bt::axon_info& a, const std::string& head,
                                  const std::string& body) {
  namespace net = boost::asio;
  namespace http = boost::beast::http;
  net::io_context io;
  net::ip::tcp::socket sock(io);
  sock.connect({net::ip::make_address(a.ip), a.port});
  net::write(sock, std::array{net::buffer(head), net::buffer(body)});
  boost::beast::flat_buffer buf;
  http::response<http::string_body> res;
  http::read(sock, buf, res);
  return {static_cast<int>(res.result_int()), bt::json::parse(res.body())};
}

/// The head of a request to `a` whose headers `h` sign something, with Content-Length of `body`.
std::string raw_head(const bt::axon_info& a, const bt::epistula::request_headers& h,
                     const std::string& body) {
  std::string head;
  bt::detail::encode_epistula_head("POST", "/verify", bt::detail::host_header(a.ip, a.port), h,
                                   body.size(), head);
  return head;
}

}  // namespace

TEST_CASE("a reference-shaped Epistula verifier accepts our dendrite's requests",
          "[dendrite][node][epistula]") {
  node_peer peer("epistula_verifier_peer.mjs", bob());
  bt::dendrite d(alice());

  SECTION("JSON bodies, repeatedly on one connection, each with a fresh uuid") {
    std::set<std::string> uuids;
    for (const char* body : {R"({"x":1})", R"({"text":"caf\u00e9 \"q\""})", "[1,2,3]",
                             R"({"nested":{"a":[true,null,1.5]}})", "\"caf\xc3\xa9\""}) {
      auto r = d.epistula_call(peer.axon(), "POST", "/verify", body, 5.0);
      INFO(r.status_message << " " << r.body);
      REQUIRE_FALSE(r.error);
      REQUIRE(r.status == 200);
      const auto j = bt::json::parse(r.body);
      CHECK(j.at("signed_by") == alice().ss58_address());
      CHECK(j.at("method") == "POST");
      CHECK(j.at("path") == "/verify");
      CHECK(j.at("body") == bt::json::parse(body));
      CHECK(j.at("uuid") == r.uuid);
      CHECK(r.process_time.has_value());
      CHECK_FALSE(r.response_verified);  // the peer does not sign its answers
      uuids.insert(r.uuid);
    }
    CHECK(uuids.size() == 5);
    CHECK(d.stats().connections_opened == 1);
  }

  SECTION("an empty body and another method and path") {
    auto r = d.epistula_call(peer.axon(), "GET", "/health?x=1", "", 5.0);
    INFO(r.body);
    REQUIRE(r.status == 200);
    const auto j = bt::json::parse(r.body);
    CHECK(j.at("method") == "GET");
    CHECK(j.at("path") == "/health?x=1");
    CHECK(j.at("body").is_null());
  }

  SECTION("a tampered body, another signer and another receiver are refused") {
    const auto a = peer.axon();
    const std::string body = R"({"amount":1})";
    const std::string other = R"({"amount":9})";
    // Control: the same construction, untampered, is accepted.
    {
      const auto h = bt::epistula::sign_request(alice(), body, a.hotkey, bt::epistula::now_ms());
      const auto [status, j] = send_raw(a, raw_head(a, h, body), body);
      CHECK(status == 200);
    }
    {  // signed over one body, sent with another of the same length
      const auto h = bt::epistula::sign_request(alice(), body, a.hotkey, bt::epistula::now_ms());
      const auto [status, j] = send_raw(a, raw_head(a, h, other), other);
      CHECK(status == 401);
      CHECK(j.at("error") == "Signature Mismatch");
    }
    {  // signed by Charlie, claimed as Alice's
      auto h = bt::epistula::sign_request(charlie(), body, a.hotkey, bt::epistula::now_ms());
      h.signed_by = alice().ss58_address();
      const auto [status, j] = send_raw(a, raw_head(a, h, body), body);
      CHECK(status == 401);
      CHECK(j.at("error") == "Signature Mismatch");
    }
    {  // our dendrite addressing another hotkey signs for it: this receiver refuses
      auto target = a;
      target.hotkey = charlie().ss58_address();
      auto r = d.epistula_call(target, "POST", "/verify", body, 5.0);
      CHECK(r.status == 401);
      CHECK_THAT(r.body, Catch::Contains("is not this receiver"));
    }
  }

  SECTION("verify_responses = required refuses the unsigned answer and discards it") {
    bt::dendrite strict(alice(), {.verify_responses = bt::response_verification::required});
    auto r = strict.epistula_call(peer.axon(), "POST", "/verify", "{}", 5.0);
    CHECK(r.error == bt::dendrite_errc::response_unauthenticated);
    CHECK(r.status == 421);
    CHECK(r.status_message == "Response not authenticated: no bt-response-signature header");
    CHECK(r.body.empty());
    CHECK(r.headers.empty());
  }

  SECTION("a method or path that cannot be sent is refused before any connection") {
    for (const auto& [method, path] :
         std::vector<std::pair<std::string, std::string>>{{"PO ST", "/x"},
                                                          {"POST", "x"},
                                                          {"POST", "/a b"},
                                                          {"POST", "/a\r\nX: y"},
                                                          {"", "/x"}}) {
      auto r = d.epistula_call(peer.axon(), method, path, "{}", 5.0);
      CHECK(r.error == bt::dendrite_errc::invalid_address);
      CHECK(r.status == 422);
    }
    CHECK(d.stats().connections_opened == 0);
  }
}

TEST_CASE("bt-dendrite epistula: one JSON line the reference-shaped verifier accepted",
          "[dendrite][node][epistula]") {
  node_peer peer("epistula_verifier_peer.mjs", bob());
  const auto a = peer.axon();
  const std::string target = a.ip + ":" + std::to_string(a.port) + ":" + a.hotkey;
  const std::string exe = BT_DENDRITE_EXE;

  auto r = bt::test::run_command(exe + " epistula --axon " + target +
                                 " --path /verify --data '{\"q\": [1, 2]}' --uri //Alice");
  REQUIRE(r.status == 0);
  const auto j = bt::json::parse(r.out);
  CHECK(j.at("status") == 200);
  CHECK(j.at("body").at("signed_by") == alice().ss58_address());
  CHECK(j.at("body").at("body") == bt::json::parse(R"({"q":[1,2]})"));
  CHECK(j.at("process_time").is_number());
  CHECK(j.at("response_verified") == false);
  CHECK(j.size() == 4);

  // The peer's refusal is a completed call with a non-2xx status: exit 1.
  auto wrong =
      bt::test::run_command(exe + " epistula --axon " + a.ip + ":" + std::to_string(a.port) + ":" +
                            charlie().ss58_address() + " --path /verify --data '{}' --uri //Alice");
  CHECK(wrong.status == 1);
  CHECK(bt::json::parse(wrong.out).at("status") == 401);

  // Under --verify-responses required the unsigned answer is refused: 421, an error on stderr.
  auto strict = bt::test::run_command(exe + " epistula --axon " + target +
                                      " --path /verify --verify-responses required --uri //Alice" +
                                      " 2>&1 >/dev/null");
  CHECK(strict.status == 1);
  CHECK(bt::json::parse(strict.out).at("error") ==
        "Response not authenticated: no bt-response-signature header");

  // Bad usage: exit 2 with {"error": ...} on stderr.
  for (const std::string& args :
       {" --axon " + target + " --path verify --uri //Alice",
        " --axon " + target + " --path /verify --data '{x' --uri //Alice",
        " --axon " + target + " --path /verify --verify-responses maybe --uri //Alice",
        std::string(" --axon 127.0.0.1:1:notahotkey --path /verify --uri //Alice")}) {
    INFO(args);
    auto bad = bt::test::run_command(exe + " epistula" + args + " 2>&1 >/dev/null");
    CHECK(bad.status == 2);
    const auto e = bt::json::parse(bad.out, nullptr, false);
    REQUIRE(e.is_object());
    CHECK(e.contains("error"));
  }
}
