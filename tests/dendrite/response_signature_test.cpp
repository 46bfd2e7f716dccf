// Authenticated responses end to end: our axon signs every answer (bt-response-signature) and
// the dendrite checks it against the hotkey it addressed. A man in the middle (a relay in this
// test, between the dendrite and the axon) that alters one byte of the body, or the status, or
// passes off another axon's answer, is detected under if_present and required; a stripped
// signature passes if_present and fails required. Checked through the dendrite's cache of axons'
// keys, every verdict is the one of the check without it.
#include <bt/dendrite.hpp>

#include <bt/axon.hpp>
#include <bt/examples/dummy.hpp>
#include <bt/examples/word_stream.hpp>
#include <bt/response_signature.hpp>
#include <bt/sr25519_key_cache.hpp>
#include <bt/stream_writer.hpp>

#include "axon/support/python_client.hpp"
#include "fault_server.hpp"
#include "support/example_queries.hpp"

#include <catch2/catch.hpp>

#include <boost/beast/http/write.hpp>

#include <string>
#include <vector>

using bt::examples::dummy;
using bt::examples::word_stream;
using bt::test::dummy_query;
using namespace bt::test;

namespace {

/// An axon serving Dummy (output = 2 * input, -1: forward_error 429) and POST /echo (Epistula),
/// with `key`'s hotkey, stopped at scope exit.
struct signing_axon {
  bt::axon ax;

  explicit signing_axon(const bt::keypair& key, bt::axon_options o = bt::axon_options::loopback())
      : ax(key, std::move(o)) {
    ax.attach<dummy>([](dummy& d) {
      if (d.dummy_input == -1) throw bt::forward_error(429, "slow down");
      d.dummy_output = 2 * d.dummy_input;
    });
    ax.attach<word_stream>(
        [](word_stream& w, bt::stream_writer& out) -> boost::asio::awaitable<void> {
          for (std::string_view word : word_stream::split_words(w.text))
            if (!co_await out.send(std::string(word) + "\n")) co_return;
        });
    ax.route(
        "POST", "/echo",
        [](std::string_view, const bt::json& parsed, const bt::request_context& c) {
          return bt::json_reply{.status = 200, .body = {{"got", parsed}, {"signed_by", c.hotkey}}};
        });
    ax.start();
  }
  ~signing_axon() { ax.stop(); }

  bt::axon_info info() const {
    auto i = ax.info();
    i.ip = "127.0.0.1";
    return i;
  }
};

/// What the relay does to each answer on its way back.
enum class tamper { none, body_byte, status, strip_signature, first_byte };

/// A relay to 127.0.0.1:`upstream` that passes each request through on a fresh connection and
/// returns the answer altered as `how` says.
behaviour relay(std::uint16_t upstream, tamper how) {
  return [upstream, how](tcp::socket& s, server_log& log) -> net::awaitable<void> {
    boost::beast::flat_buffer buf;
    for (;;) {
      http::request<http::string_body> req;
      auto [ec, n] = co_await http::async_read(s, buf, req, net::as_tuple(net::use_awaitable));
      if (ec) co_return;
      log.add(req);
      tcp::socket up(s.get_executor());
      auto [cec] = co_await up.async_connect({net::ip::make_address("127.0.0.1"), upstream},
                                             net::as_tuple(net::use_awaitable));
      if (cec) co_return;
      auto [wec, wn] = co_await http::async_write(up, req, net::as_tuple(net::use_awaitable));
      if (wec) co_return;
      boost::beast::flat_buffer ubuf;
      http::response<http::string_body> res;
      auto [rec, rn] = co_await http::async_read(up, ubuf, res, net::as_tuple(net::use_awaitable));
      if (rec) co_return;
      switch (how) {
        case tamper::none:
          break;
        case tamper::body_byte: {  // one digit of the output: still valid JSON of the type
          std::string& b = res.body();
          const auto at = b.find("\"dummy_output\":");
          if (at != std::string::npos) {
            char& c = b[at + 15];
            c = c == '9' ? '8' : static_cast<char>(c + 1);
          } else if (const auto g = b.find("\"got\":{\"x\":"); g != std::string::npos) {
            char& c = b[g + 11];
            c = c == '9' ? '8' : static_cast<char>(c + 1);
          }
          break;
        }
        case tamper::status:
          res.result(res.result_int() == 200 ? 202 : 200);
          break;
        case tamper::strip_signature:
          res.erase(bt::response_signature::header);
          break;
        case tamper::first_byte:  // a stream's first word: 'a' becomes 'b'
          if (!res.body().empty()) res.body()[0] = static_cast<char>(res.body()[0] + 1);
          break;
      }
      auto [xec, xn] = co_await http::async_write(s, res, net::as_tuple(net::use_awaitable));
      if (xec) co_return;
    }
  };
}

bt::dendrite_options mode(bt::response_verification v) {
  return bt::dendrite_options{.verify_responses = v};
}

constexpr auto off = bt::response_verification::off;
constexpr auto if_present = bt::response_verification::if_present;
constexpr auto required = bt::response_verification::required;

}  // namespace

TEST_CASE("signed answers verify: success, axon errors and Epistula", "[dendrite][axon][auth]") {
  signing_axon srv(bob());
  bt::dendrite d(alice(), mode(required));

  auto ok = d.call(srv.info(), dummy_query(21), 5.0);
  INFO(ok.dendrite.status_message.value_or(""));
  CHECK(ok.dendrite.status_code == 200);
  CHECK(ok.dummy_output == 42);
  auto ping = d.call(srv.info(), bt::synapse{}, 5.0);
  CHECK(ping.dendrite.status_code == 200);

  // The axon's own refusals are signed too, and arrive with their status under required.
  auto slow = d.call(srv.info(), dummy_query(-1), 5.0);
  CHECK(slow.dendrite.status_code == 429);
  bt::error err;
  auto other = bt::make_dynamic_descriptor("Other", {}, {}, err);
  REQUIRE_FALSE(err);
  auto missing = d.call(srv.info(), bt::dynamic_synapse(other), 5.0);
  CHECK(missing.dendrite.status_code == 404);
  auto wrong_target = srv.info();  // signed for Charlie: the axon's 401, signed by Bob
  wrong_target.hotkey = charlie().ss58_address();
  auto refused = d.call(wrong_target, dummy_query(1), 5.0);
  // The signature is checked against the hotkey the call addressed (Charlie): Bob's answer is
  // not Charlie's.
  CHECK(refused.dendrite.status_code == 421);

  auto e = d.epistula_call(srv.info(), "POST", "/echo", R"({"x":1})", 5.0);
  INFO(e.status_message << " " << e.body);
  REQUIRE_FALSE(e.error);
  CHECK(e.status == 200);
  CHECK(e.response_verified);
  CHECK(bt::json::parse(e.body).at("signed_by") == alice().ss58_address());
  // A refused Epistula request (wrong path: 404, before any verification) is signed over no
  // caller: the axon's authentic refusal, accepted under required, but not bound to this
  // request, so not reported verified.
  auto e404 = d.epistula_call(srv.info(), "POST", "/nothing", "{}", 5.0);
  CHECK_FALSE(e404.error);
  CHECK(e404.status == 404);
  CHECK_FALSE(e404.response_verified);

  // The header is exactly one, of the documented form.
  bool found = false;
  for (const auto& [name, value] : e.headers)
    if (name == bt::response_signature::header) {
      CHECK_FALSE(found);
      found = true;
      CHECK(value.starts_with("v2."));
      CHECK(bt::response_signature::verify(value, bob().ss58_address(), alice().ss58_address(),
                                           e.uuid, 200, e.body)
                .empty());
    }
  CHECK(found);
}

TEST_CASE("a man in the middle is detected under if_present and required",
          "[dendrite][axon][auth]") {
  signing_axon srv(bob());
  signing_axon decoy(charlie());

  SECTION("control: an untouched relay changes nothing") {
    fault_server mitm(relay(srv.info().port, tamper::none));
    for (auto v : {off, if_present, required}) {
      bt::dendrite d(alice(), mode(v));
      auto r = d.call(mitm.axon(bob().ss58_address()), dummy_query(3), 5.0);
      CHECK(r.dendrite.status_code == 200);
      CHECK(r.dummy_output == 6);
      auto e = d.epistula_call(mitm.axon(bob().ss58_address()), "POST", "/echo", R"({"x":1})", 5.0);
      CHECK(e.status == 200);
      CHECK(e.response_verified == (v != off));
    }
  }

  SECTION("one byte of the body") {
    fault_server mitm(relay(srv.info().port, tamper::body_byte));
    const auto target = mitm.axon(bob().ss58_address());
    {  // unchecked, the altered answer is taken: the alteration is real
      bt::dendrite d(alice(), mode(off));
      CHECK(d.call(target, dummy_query(3), 5.0).dummy_output == 7);
      auto e = d.epistula_call(target, "POST", "/echo", R"({"x":1})", 5.0);
      CHECK(bt::json::parse(e.body).at("got").at("x") == 2);
    }
    for (auto v : {if_present, required}) {
      bt::dendrite d(alice(), mode(v));
      auto r = d.call(target, dummy_query(3), 5.0);
      CHECK(r.dendrite.status_code == 421);
      CHECK_THAT(r.dendrite.status_message.value_or(""),
                 Catch::StartsWith("Response not authenticated: signature mismatch"));
      CHECK_FALSE(r.dummy_output.has_value());  // discarded
      CHECK(r.dummy_input == 3);                // the caller's input stays
      auto e = d.epistula_call(target, "POST", "/echo", R"({"x":1})", 5.0);
      CHECK(e.error == bt::dendrite_errc::response_unauthenticated);
      CHECK(e.status == 421);
      CHECK(e.body.empty());
    }
  }

  SECTION("the status") {
    fault_server mitm(relay(srv.info().port, tamper::status));
    const auto target = mitm.axon(bob().ss58_address());
    for (auto v : {if_present, required}) {
      bt::dendrite d(alice(), mode(v));
      auto slow = d.call(target, dummy_query(-1), 5.0);  // the axon's 429, passed off as a 200
      CHECK(slow.dendrite.status_code == 421);
      auto e = d.epistula_call(target, "POST", "/echo", R"({"x":1})", 5.0);
      CHECK(e.status == 421);
    }
  }

  SECTION("another axon's signed answer") {
    // The relay sends the request to Charlie's axon: its answer (a 401, signed for another
    // hotkey) carries Charlie's valid signature, not Bob's.
    fault_server mitm(relay(decoy.info().port, tamper::none));
    const auto target = mitm.axon(bob().ss58_address());
    {
      bt::dendrite d(alice(), mode(off));
      CHECK(d.call(target, dummy_query(3), 5.0).dendrite.status_code == 401);
    }
    for (auto v : {if_present, required}) {
      bt::dendrite d(alice(), mode(v));
      auto r = d.call(target, dummy_query(3), 5.0);
      CHECK(r.dendrite.status_code == 421);
      CHECK_THAT(
          r.dendrite.status_message.value_or(""),
          Catch::Contains("signature mismatch with the axon's hotkey " + bob().ss58_address()));
      auto e = d.epistula_call(target, "POST", "/echo", "{}", 5.0);
      CHECK(e.status == 421);
    }
  }

  SECTION("a stripped signature: accepted by if_present, refused by required") {
    fault_server mitm(relay(srv.info().port, tamper::strip_signature));
    const auto target = mitm.axon(bob().ss58_address());
    bt::dendrite lax(alice(), mode(if_present));
    CHECK(lax.call(target, dummy_query(3), 5.0).dummy_output == 6);
    auto le = lax.epistula_call(target, "POST", "/echo", "{}", 5.0);
    CHECK(le.status == 200);
    CHECK_FALSE(le.response_verified);
    bt::dendrite strict(alice(), mode(required));
    auto r = strict.call(target, dummy_query(3), 5.0);
    CHECK(r.dendrite.status_code == 421);
    CHECK(r.dendrite.status_message ==
          "Response not authenticated: no bt-response-signature header");
    CHECK_FALSE(r.dummy_output.has_value());
  }
}

TEST_CASE("sign_responses = false sends no signature, and a secretless hotkey cannot sign",
          "[dendrite][axon][auth]") {
  auto o = bt::axon_options::loopback();
  o.sign_responses = false;
  signing_axon srv(bob(), o);
  bt::dendrite lax(alice(), mode(if_present));
  CHECK(lax.call(srv.info(), dummy_query(1), 5.0).dendrite.status_code == 200);
  bt::dendrite strict(alice(), mode(required));
  CHECK(strict.call(srv.info(), dummy_query(1), 5.0).dendrite.status_code == 421);

  bt::axon secretless(bt::keypair::from_ss58(bob().ss58_address()), bt::axon_options::loopback());
  CHECK_THROWS(secretless.start());
}

namespace {
/// A WordStream call's items and final status.
struct streamed {
  int status = 0;
  std::vector<std::string> items;
};
streamed stream_call(bt::dendrite& d, const bt::axon_info& target) {
  word_stream q;
  q.text = "alpha beta gamma";
  auto out = std::make_shared<streamed>();
  auto r = d.call_stream(target, q, 5.0, [out](std::string_view w) { out->items.emplace_back(w); });
  out->status = r.dendrite.status_code.value_or(0);
  return *out;
}
}  // namespace

TEST_CASE("a streamed answer's trailer signature is checked at the end of the stream",
          "[dendrite][axon][auth][stream]") {
  signing_axon srv(bob());
  const std::vector<std::string> words = {"alpha", "beta", "gamma"};
  SECTION("direct: verified under required") {
    bt::dendrite d(alice(), mode(required));
    for (int i = 0; i < 3; ++i) {  // and the connection stays usable after the trailer
      const auto r = stream_call(d, srv.info());
      CHECK(r.status == 200);
      CHECK(r.items == words);
    }
    CHECK(d.stats().connections_opened == 1);
  }
  SECTION("an axon that does not sign: accepted under if_present, 421 under required") {
    auto o = bt::axon_options::loopback();
    o.sign_responses = false;
    signing_axon unsigned_axon(bob(), o);
    bt::dendrite lenient(alice(), mode(if_present));
    CHECK(stream_call(lenient, unsigned_axon.info()).status == 200);
    bt::dendrite strict(alice(), mode(required));
    CHECK(stream_call(strict, unsigned_axon.info()).status == 421);
  }
  SECTION("one byte of a chunk altered on the way: 421 under if_present and required") {
    fault_server mitm(relay(srv.info().port, tamper::first_byte));
    const auto target = mitm.axon(bob().ss58_address());
    bt::dendrite unchecked(alice(), mode(off));
    const auto seen = stream_call(unchecked, target);
    CHECK(seen.status == 200);
    REQUIRE_FALSE(seen.items.empty());
    CHECK(seen.items.front() == "blpha");  // the alteration is real
    for (auto v : {if_present, required}) {
      bt::dendrite d(alice(), mode(v));
      CHECK(stream_call(d, target).status == 421);
    }
  }
  SECTION("the signature stripped: 200 under if_present, 421 under required") {
    fault_server mitm(relay(srv.info().port, tamper::strip_signature));
    const auto target = mitm.axon(bob().ss58_address());
    bt::dendrite lenient(alice(), mode(if_present));
    CHECK(stream_call(lenient, target).status == 200);
    bt::dendrite strict(alice(), mode(required));
    CHECK(stream_call(strict, target).status == 421);
  }
  SECTION("another axon's signed stream passed off as this one's: 421") {
    signing_axon decoy(charlie());
    fault_server mitm(relay(decoy.info().port, tamper::none));
    bt::dendrite d(alice(), mode(if_present));
    CHECK(stream_call(d, mitm.axon(bob().ss58_address())).status == 421);
  }
}

namespace {

/// The relay of the signature-substitution attack: for each request on its path (the victim's),
/// it reads the victim's identity (its hotkey and request id: bt_header_dendrite_* of a synapse
/// request, Epistula-Signed-By and Epistula-Uuid of an Epistula one), sends the axon at
/// `upstream` the attacker's own request (Dummy(500), signed normally by Charlie) carrying the
/// victim's identity in Epistula-* fields, and answers the victim with the axon's answer to it.
behaviour substituting_relay(std::uint16_t upstream) {
  return [upstream](tcp::socket& s, server_log& log) -> net::awaitable<void> {
    boost::beast::flat_buffer buf;
    for (int n = 0;; ++n) {
      http::request<http::string_body> req;
      auto [ec, rn] = co_await http::async_read(s, buf, req, net::as_tuple(net::use_awaitable));
      if (ec) co_return;
      log.add(req);
      std::string caller, id;
      if (req.count("Epistula-Uuid")) {
        caller = std::string(req["Epistula-Signed-By"]);
        id = std::string(req["Epistula-Uuid"]);
      } else {
        caller = std::string(req["bt_header_dendrite_hotkey"]);
        id = std::string(req["bt_header_dendrite_nonce"]) + "." +
             std::string(req["bt_header_dendrite_uuid"]);
      }
      dummy attack;
      attack.dummy_input = 500;
      bt::test::python_request_options po;
      po.uuid = bt::test::test_uuid("substitution " + std::to_string(n));
      auto forged = bt::test::python_request(attack, charlie(), bob().ss58_address(), po);
      forged.set("Epistula-Signed-By", caller);
      forged.set("Epistula-Uuid", id);
      tcp::socket up(s.get_executor());
      auto [cec] = co_await up.async_connect({net::ip::make_address("127.0.0.1"), upstream},
                                             net::as_tuple(net::use_awaitable));
      if (cec) co_return;
      const std::string wire = forged.wire(upstream);
      auto [wec, wn] =
          co_await net::async_write(up, net::buffer(wire), net::as_tuple(net::use_awaitable));
      if (wec) co_return;
      boost::beast::flat_buffer ubuf;
      http::response<http::string_body> res;
      auto [xec, xn] = co_await http::async_read(up, ubuf, res, net::as_tuple(net::use_awaitable));
      if (xec) co_return;
      auto [yec, yn] = co_await http::async_write(s, res, net::as_tuple(net::use_awaitable));
      if (yec) co_return;
    }
  };
}

/// A peer that answers every request with `status` and `body`, signed by `key` over the empty
/// identity (as our axon signs its answer to a request it could not verify).
behaviour anonymous_answers(const bt::keypair& key, int status, std::string body) {
  return [&key, status, body](tcp::socket& s, server_log& log) -> net::awaitable<void> {
    boost::beast::flat_buffer buf;
    while (co_await read_request(s, buf, log)) {
      const std::string extra = std::string(bt::response_signature::header) + ": " +
                                bt::response_signature::sign(key, "7", "", "", status, body) +
                                "\r\nbt_header_axon_status_code: " + std::to_string(status) +
                                "\r\n";
      co_await write_text(s, http_response(status, body, extra));
    }
  };
}

}  // namespace

TEST_CASE("another caller's answer cannot be passed off as the victim's (signature substitution)",
          "[dendrite][axon][auth]") {
  signing_axon srv(bob());
  fault_server mitm(substituting_relay(srv.info().port));
  const auto target = mitm.axon(bob().ss58_address());
  {  // unchecked, the substitution is real: the answer to Dummy(500) arrives for Dummy(3)
    bt::dendrite d(alice(), mode(off));
    const auto r = d.call(target, dummy_query(3), 5.0);
    CHECK(r.dendrite.status_code == 200);
    CHECK(r.dummy_output == 1000);
  }
  for (auto v : {if_present, required}) {
    bt::dendrite d(alice(), mode(v));
    const auto r = d.call(target, dummy_query(3), 5.0);
    CHECK(r.dendrite.status_code == 421);
    CHECK_FALSE(r.dummy_output.has_value());
    const auto e = d.epistula_call(target, "POST", "/echo", R"({"x":1})", 5.0);
    CHECK(e.error == bt::dendrite_errc::response_unauthenticated);
    CHECK(e.status == 421);
    CHECK_FALSE(e.response_verified);
  }
}

TEST_CASE("an error signed over no caller is the axon's authentic refusal, a success is not",
          "[dendrite][axon][auth]") {
  const std::string refusal = R"({"message":"Not Verified with error: nonce is too old"})";
  SECTION("a 401 signed by the addressed axon over no caller: the 401, under every mode") {
    fault_server peer(anonymous_answers(bob(), 401, refusal));
    for (auto v : {if_present, required}) {
      bt::dendrite d(alice(), mode(v));
      const auto r = d.call(peer.axon(bob().ss58_address()), dummy_query(3), 5.0);
      CHECK(r.dendrite.status_code == 401);
      const auto e = d.epistula_call(peer.axon(bob().ss58_address()), "POST", "/echo", "{}", 5.0);
      CHECK_FALSE(e.error);
      CHECK(e.status == 401);
      CHECK(e.body == refusal);
      CHECK_FALSE(e.response_verified);  // authentic, but not bound to this request
    }
  }
  SECTION("the same refusal signed by another axon's hotkey: 421") {
    fault_server peer(anonymous_answers(charlie(), 401, refusal));
    bt::dendrite d(alice(), mode(if_present));
    CHECK(d.call(peer.axon(bob().ss58_address()), dummy_query(3), 5.0).dendrite.status_code == 421);
  }
  SECTION("a 200 signed over no caller: 421 under if_present and required") {
    fault_server peer(anonymous_answers(bob(), 200, R"({"dummy_input":3,"dummy_output":6})"));
    for (auto v : {if_present, required}) {
      bt::dendrite d(alice(), mode(v));
      const auto r = d.call(peer.axon(bob().ss58_address()), dummy_query(3), 5.0);
      CHECK(r.dendrite.status_code == 421);
      CHECK_FALSE(r.dummy_output.has_value());
      const auto e = d.epistula_call(peer.axon(bob().ss58_address()), "POST", "/echo", "{}", 5.0);
      CHECK(e.status == 421);
      CHECK_FALSE(e.response_verified);
    }
  }
}

TEST_CASE(
    "checked through a key cache, answers get the same verdicts, and only a valid one "
    "enters the axon's key",
    "[dendrite][auth]") {
  // The dendrite checks answers through its cache of axons' keys (dendrite_state::axon_keys):
  // every verdict must be the one of the check without a cache, before the key is known, once it
  // has its table, and once it is hot.
  bt::init_crypto();
  const bt::keypair axon = bt::keypair::from_uri("//response signature cache axon");
  const bt::keypair other = bt::keypair::from_uri("//response signature cache other");
  const std::string caller = alice().ss58_address();
  bt::sr25519::key_cache cache;
  struct answer {
    std::string header, hotkey, caller, request_id;
    int status;
    std::string body;
  };
  const auto signed_answer = [&](int i) {
    const std::string id = "7." + std::to_string(i);
    const std::string body = R"({"n":)" + std::to_string(i) + "}";
    return answer{
        bt::response_signature::sign(axon, "1700000000" + std::to_string(i), caller, id, 200, body),
        axon.ss58_address(),
        caller,
        id,
        200,
        body};
  };
  // What a relay could turn an answer into: each must fail, with or without the cache.
  const auto spoiled = [&](const answer& a) {
    std::vector<answer> out(7, a);
    out[0].body += " ";
    out[1].status = 201;
    out[2].request_id += "0";
    out[3].caller = other.ss58_address();
    out[4].hotkey = other.ss58_address();             // another axon's key
    out[5].header[out[5].header.size() - 3] ^= 0x01;  // one hex digit of the signature
    out[6].header =
        bt::response_signature::sign(other, "1", a.caller, a.request_id, a.status, a.body);
    return out;
  };
  const auto check = [&](const answer& a, bt::sr25519::key_cache* keys) {
    return bt::response_signature::verify(a.header, a.hotkey, a.caller, a.request_id, a.status,
                                          a.body, keys);
  };
  for (const answer& bad : spoiled(signed_answer(0))) {
    const std::string plain = check(bad, nullptr);
    CHECK_FALSE(plain.empty());
    CHECK(check(bad, &cache) == plain);
  }
  CHECK_FALSE(cache.contains(axon.public_key()));
  for (int i = 1; i <= 4; ++i) {
    const answer good = signed_answer(i);
    CHECK(check(good, &cache).empty());
    for (const answer& bad : spoiled(good)) CHECK(check(bad, &cache) == check(bad, nullptr));
  }
  CHECK(cache.contains(axon.public_key()));
  CHECK(cache.has_table(axon.public_key()));
  CHECK(cache.is_hot(axon.public_key()));
  CHECK_FALSE(cache.contains(other.public_key()));
}
