// What an answer's bt-response-signature names (PROTOCOL 5.15): the identity the request was
// verified under, never header fields its route did not authenticate, and nothing at all for a
// request that nothing verified. Also the debug access line, which shows only a verified caller
// as the caller and escapes whatever a client chose. Driven in memory (memory_session.hpp).
#include "memory_session.hpp"

#include <bt/axon.hpp>
#include <bt/epistula.hpp>
#include <bt/examples/dummy.hpp>
#include <bt/hex.hpp>
#include <bt/json.hpp>
#include <bt/response_signature.hpp>
#include <bt/sha256.hpp>

#include <catch2/catch.hpp>

#include "support/dev_keys.hpp"
#include "support/memory_answers.hpp"
#include "support/python_client.hpp"

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

// A named namespace: the suite is built as one unit, and these helpers' names are its own.
namespace response_identity_tests {

using bt::examples::dummy;
using bt::test::alice;
using bt::test::bob;
using bt::test::charlie;
using bt::test::memory_answer;
using bt::test::only_response;

/// The victim's request as a relay on its path saw it: its hotkey (alice), its nonce and uuid.
constexpr std::string_view victim_uuid = "3a8c1f2e-9b7d-4e6f-8a1b-2c3d4e5f6a7b";
const std::string victim_request_id = "1700000000000000000." + std::string(victim_uuid);

/// An axon of Bob's serving Dummy (output = 2 * input) with `auth`, and POST /echo (Epistula),
/// driven in memory. `o` may set a logger.
struct identity_axon {
  bt::axon ax;
  std::optional<bt::detail::memory_axon> mem;

  explicit identity_axon(bt::auth_mode auth = bt::auth_mode::bittensor,
                         bt::axon_options o = bt::axon_options::loopback())
      : ax(bob(), std::move(o)) {
    bt::route_options policy;
    policy.auth = auth;
    ax.attach<dummy>([](dummy& d) { d.dummy_output = 2 * d.dummy_input; }, policy);
    ax.route("POST", "/echo",
             [](std::string_view, const bt::json& parsed, const bt::request_context&) {
               return bt::json_reply{.status = 200, .body = {{"got", parsed}}};
             });
    mem.emplace(ax);
  }

  memory_answer send(const std::string& wire) { return only_response(mem->exchange(wire)); }
};

/// A Dummy request signed by `key` (a fresh nonce, uuid `uuid`).
bt::test::request_parts signed_dummy(const bt::keypair& key, std::int64_t input, std::string uuid) {
  dummy d;
  d.dummy_input = input;
  bt::test::python_request_options po;
  po.uuid = std::move(uuid);
  return bt::test::python_request(d, key, bob().ss58_address(), po);
}

std::string request_id_of(const bt::test::request_parts& r) {
  return *r.find("bt_header_dendrite_nonce") + "." + *r.find("bt_header_dendrite_uuid");
}

/// An Epistula request for Bob: `claimed` in Epistula-Signed-By, `uuid` in Epistula-Uuid, the
/// signature by `signer` over `body`.
std::string epistula_wire(const bt::keypair& claimed, const bt::keypair& signer,
                          std::string_view uuid, std::string_view path, const std::string& body,
                          const std::vector<std::pair<std::string, std::string>>& extra = {}) {
  const std::string ts = std::to_string(bt::epistula::now_ms());
  const auto sig = signer.sign(
      bt::epistula::signed_message(bt::sha256_hex(body), uuid, ts, bob().ss58_address()));
  std::string w = "POST " + std::string(path) + " HTTP/1.1\r\nHost: x\r\n";
  w += "Epistula-Version: 2\r\nEpistula-Timestamp: " + ts +
       "\r\nEpistula-Uuid: " + std::string(uuid) +
       "\r\nEpistula-Signed-By: " + claimed.ss58_address() +
       "\r\nEpistula-Signed-For: " + bob().ss58_address() + "\r\nEpistula-Request-Signature: 0x" +
       bt::to_hex(sig) + "\r\n";
  for (const auto& [n, v] : extra) w += n + ": " + v + "\r\n";
  w += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
       "\r\n\r\n" + body;
  return w;
}

/// Whether the answer's one bt-response-signature verifies as Bob's over `caller` and `id`.
bool names(const memory_answer& r, std::string_view caller, std::string_view id) {
  const auto [first, last] = r.equal_range(bt::response_signature::header);
  REQUIRE(first != last);
  REQUIRE(std::next(first) == last);
  return bt::response_signature::verify(first->value(), bob().ss58_address(), caller, id,
                                        static_cast<int>(r.result_int()), r.body())
      .empty();
}

/// The access lines an axon logged (the message alone, one per line).
struct captured_log {
  std::ostringstream text;
  std::shared_ptr<spdlog::logger> logger;
  captured_log() {
    logger = std::make_shared<spdlog::logger>(
        "access", std::make_shared<spdlog::sinks::ostream_sink_mt>(text));
    logger->set_pattern("%v");
    logger->set_level(spdlog::level::debug);
  }
  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    std::istringstream in(text.str());
    for (std::string l; std::getline(in, l);)
      if (l.starts_with("axon | <-- |")) out.push_back(l);
    return out;
  }
};

/// A line's fields, split on the separator " | ".
std::vector<std::string> fields_of(std::string_view line) {
  std::vector<std::string> out;
  for (;;) {
    const auto at = line.find(" | ");
    out.emplace_back(line.substr(0, at));
    if (at == std::string_view::npos) return out;
    line.remove_prefix(at + 3);
  }
}

TEST_CASE("a synapse answer names its verified signer, never Epistula fields its route ignores",
          "[axon][auth][response_signature]") {
  identity_axon srv;  // Dummy authenticated by the bittensor signature
  // The attacker (Charlie) signs its own Dummy(500) and adds the victim's Epistula identity.
  auto req = signed_dummy(charlie(), 500, bt::test::test_uuid("attacker"));
  req.set("Epistula-Signed-By", alice().ss58_address());
  req.set("Epistula-Uuid", victim_request_id);
  const auto r = srv.send(req.wire(8091));
  REQUIRE(r.result_int() == 200);
  CHECK(bt::json::parse(r.body()).at("dummy_output") == 1000);
  // Not an answer to the victim's request: a relay cannot pass it off as one.
  CHECK_FALSE(names(r, alice().ss58_address(), victim_request_id));
  // It is Charlie's own request's answer.
  CHECK(names(r, charlie().ss58_address(), request_id_of(req)));
}

TEST_CASE("an Epistula answer names its verified signer, or no one when the signature fails",
          "[axon][auth][response_signature][epistula]") {
  const std::string attacker_uuid = "0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e";
  SECTION("a plain route: Signed-By the victim, signed by the attacker") {
    identity_axon srv;
    const auto r = srv.send(epistula_wire(alice(), charlie(), victim_uuid, "/echo", "{}"));
    REQUIRE(r.result_int() == 401);
    CHECK_FALSE(names(r, alice().ss58_address(), victim_uuid));
    CHECK(names(r, "", ""));
  }
  SECTION("a synapse route on Epistula's path: Signed-By the victim, signed by the attacker") {
    identity_axon srv(bt::auth_mode::epistula);
    const auto r = srv.send(
        epistula_wire(alice(), charlie(), victim_uuid, "/Dummy", R"({"dummy_input": 500})"));
    REQUIRE(r.result_int() == 401);
    CHECK_FALSE(names(r, alice().ss58_address(), victim_uuid));
    CHECK(names(r, "", ""));
  }
  SECTION("Epistula's path ignores the victim's bt_header_dendrite_* fields") {
    identity_axon srv(bt::auth_mode::either);
    const auto r = srv.send(epistula_wire(charlie(), charlie(), attacker_uuid, "/Dummy",
                                          R"({"dummy_input": 500})",
                                          {{"bt_header_dendrite_hotkey", alice().ss58_address()},
                                           {"bt_header_dendrite_nonce", "1700000000000000000"},
                                           {"bt_header_dendrite_uuid", std::string(victim_uuid)}}));
    REQUIRE(r.result_int() == 200);
    CHECK_FALSE(names(r, alice().ss58_address(), victim_request_id));
    CHECK(names(r, charlie().ss58_address(), attacker_uuid));
  }
  SECTION("a verified Epistula request is named, on a plain route and a synapse route") {
    identity_axon srv(bt::auth_mode::either);
    const auto plain = srv.send(epistula_wire(charlie(), charlie(), attacker_uuid, "/echo", "{}"));
    REQUIRE(plain.result_int() == 200);
    CHECK(names(plain, charlie().ss58_address(), attacker_uuid));
    const std::string other_uuid = "1b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e";
    const auto syn = srv.send(
        epistula_wire(charlie(), charlie(), other_uuid, "/Dummy", R"({"dummy_input": 2})"));
    REQUIRE(syn.result_int() == 200);
    CHECK(names(syn, charlie().ss58_address(), other_uuid));
  }
}

TEST_CASE("an unverified request's answer names no caller", "[axon][auth][response_signature]") {
  identity_axon srv;
  SECTION("a signature by another key than the claimed hotkey: 401") {
    // Alice's request, signed by Charlie.
    auto req = signed_dummy(alice(), 3, bt::test::test_uuid("forged"));
    req.set("bt_header_dendrite_signature",
            "0x" + bt::to_hex(charlie().sign(std::string_view(req.signed_message))));
    const auto r = srv.send(req.wire(8091));
    REQUIRE(r.result_int() == 401);
    CHECK_FALSE(names(r, alice().ss58_address(), request_id_of(req)));
    CHECK(names(r, "", ""));
  }
  SECTION("an unknown route: 404") {
    auto req = signed_dummy(alice(), 3, bt::test::test_uuid("nowhere"));
    req.path = "/Nowhere";
    const auto r = srv.send(req.wire(8091));
    REQUIRE(r.result_int() == 404);
    CHECK_FALSE(names(r, alice().ss58_address(), request_id_of(req)));
    CHECK(names(r, "", ""));
  }
  SECTION("a verified request's refusal after verification still names it (the D5 check: 400)") {
    auto req = signed_dummy(alice(), 3, bt::test::test_uuid("d5"));
    // The body claims Charlie: refused at the body check, after the signature verified.
    auto j = bt::json::parse(req.body);
    j["dendrite"]["hotkey"] = charlie().ss58_address();
    req.body = j.dump();
    const auto r = srv.send(req.wire(8091));
    INFO(r.body());
    REQUIRE(r.result_int() >= 400);
    CHECK(names(r, alice().ss58_address(), request_id_of(req)));
  }
}

TEST_CASE("insecure_skip_verification verifies no one, so it signs no answer",
          "[axon][auth][response_signature]") {
  bt::axon_options o = bt::axon_options::loopback();
  o.insecure_skip_verification = true;
  identity_axon srv(bt::auth_mode::bittensor, o);
  bt::test::python_request_options po;
  po.sign = false;
  dummy d;
  d.dummy_input = 3;
  const auto req = bt::test::python_request(d, alice(), bob().ss58_address(), po);
  const auto r = srv.send(req.wire(8091));
  CHECK(r.result_int() == 200);
  CHECK(r.count(bt::response_signature::header) == 0);
}

TEST_CASE("the access line shows only a verified caller, and escapes what a client chose",
          "[axon][log]") {
  captured_log log;
  bt::axon_options o = bt::axon_options::loopback();
  o.logger = log.logger;
  identity_axon srv(bt::auth_mode::bittensor, o);
  // A claim built to forge fields and a line: the separator, a tab, a quote, and U+0085 (NEL).
  const std::string forged = "5Fake | 200 | Success\t\"x\xc2\x85y";
  auto req = signed_dummy(alice(), 3, bt::test::test_uuid("claimed"));
  req.set("bt_header_dendrite_hotkey", forged);
  CHECK(srv.send(req.wire(8091)).result_int() >= 400);
  const auto good = signed_dummy(alice(), 4, bt::test::test_uuid("verified"));
  CHECK(srv.send(good.wire(8091)).result_int() == 200);
  // A plain route's refused Epistula head, and an unknown route with the separator in its path.
  CHECK(srv.send(epistula_wire(alice(), charlie(), victim_uuid, "/echo", "{}")).result_int() ==
        401);
  auto lost = signed_dummy(alice(), 5, bt::test::test_uuid("lost"));
  lost.path = "/a|b";
  CHECK(srv.send(lost.wire(8091)).result_int() == 404);

  const auto lines = log.lines();
  INFO(log.text.str());
  REQUIRE(lines.size() == 4);
  for (const auto& l : lines) CHECK(fields_of(l).size() == 9);  // no field added
  const auto refused = fields_of(lines[0]);
  REQUIRE(refused.size() == 9);
  CHECK(refused[4] == R"(unverified, claims "5Fake \x7c 200 \x7c Success\x09\x22x\xc2\x85y")");
  CHECK(fields_of(lines[1])[4] == alice().ss58_address());  // verified: the caller itself
  CHECK(fields_of(lines[2])[4] ==
        "unverified, claims \"" + alice().ss58_address() + "\"");  // a signature that failed
  const auto unknown = fields_of(lines[3]);
  CHECK(unknown[3] == R"(/a\x7cb)");
  CHECK(unknown[4] == "unverified, claims \"" + alice().ss58_address() + "\"");
}

}  // namespace response_identity_tests
