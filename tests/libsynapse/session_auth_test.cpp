// Session authentication (PROTOCOL 13), both sides in one process: an offer accepted by the axon
// and completed by the dendrite gives both the same keys (each side's MAC verifies on the other);
// any change to a signed field, a MAC, the canonical string or the session id is refused; an
// accept is only good for the hotkey the dendrite meant to call; moved-from objects hold no keys.
#include <bt/session_auth.hpp>

#include <bt/keypair.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace sa = bt::session_auth;

namespace {

const bt::keypair& dendrite_key() {
  static const bt::keypair k = bt::keypair::from_uri("//Alice");
  return k;
}
const bt::keypair& axon_key() {
  static const bt::keypair k = bt::keypair::from_uri("//Bob");
  return k;
}
const bt::keypair& other_key() {
  static const bt::keypair k = bt::keypair::from_uri("//Charlie");
  return k;
}

/// The identity strings of one request (owned, so the views stay valid).
struct identity {
  std::string nonce = "1733300000000000001";
  std::string dendrite = dendrite_key().ss58_address();
  std::string axon = axon_key().ss58_address();
  std::string uuid = "5b3e8a2c-0d1f-11ef-9c4a-0242ac120002";
  sa::request_identity view() const { return {nonce, dendrite, axon, uuid}; }
};

constexpr sa::bounds test_bounds{5, 60};

/// Offer, accept and complete; REQUIREs each step.
struct established {
  sa::session_keys client;
  sa::session_keys server;
};

established establish(const identity& id = {}) {
  sa::client_offer offer(dendrite_key(), id.view());
  std::string why;
  auto acc = sa::accept(offer.header_value(), id.view(), axon_key(), test_bounds, &why);
  INFO(why);
  REQUIRE(acc);
  auto keys = std::move(offer).complete(acc->header_value, &why);
  INFO(why);
  REQUIRE(keys);
  return {std::move(*keys), std::move(acc->keys)};
}

/// Each position of `s` between `from` and the end with one character changed to another valid
/// character of the same class (hex stays hex, digits stay digits), so only the value differs.
std::vector<std::string> one_char_changes(const std::string& s, std::size_t from) {
  std::vector<std::string> out;
  for (std::size_t i = from; i < s.size(); ++i) {
    std::string t = s;
    const char c = t[i];
    if (c >= '0' && c <= '8')
      t[i] = static_cast<char>(c + 1);
    else if (c == '9')
      t[i] = '0';
    else if (c >= 'a' && c <= 'e')
      t[i] = static_cast<char>(c + 1);
    else if (c == 'f')
      t[i] = 'a';
    else
      continue;  // '.', 'v', 'x': structure, covered by the malformed cases
    out.push_back(std::move(t));
  }
  return out;
}

const std::string canonical = "1733300000000000002.5Grw.5FHn.uuid.bodyhash";

}  // namespace

TEST_CASE("offer, accept and complete derive the same keys on both sides", "[session_auth]") {
  const identity id;
  auto [client, server] = establish(id);
  REQUIRE(client.has_keys());
  REQUIRE(server.has_keys());
  CHECK(client.id_hex() == server.id_hex());
  CHECK(client.id_hex().size() == 32);
  CHECK(client.limits().max_requests == test_bounds.max_requests);
  CHECK(client.limits().lifetime_s == test_bounds.lifetime_s);

  // c2s: the dendrite's request MAC verifies at the axon.
  const std::string h = sa::request_mac(client, canonical);
  CHECK(h.starts_with("v1." + std::string(client.id_hex()) + "."));
  CHECK(h.size() == 3 + 32 + 1 + 64);
  CHECK(sa::check_request_mac(server, h, canonical).empty());
  // Both sides hold the same c2s key: the axon computes the very same value.
  CHECK(sa::request_mac(server, canonical) == h);
  // s2c: the axon's answer MAC verifies at the dendrite.
  const std::string r =
      sa::response_mac(server, "42", id.dendrite, "n.u", 200, "{\"a\":1}", id.axon);
  CHECK(r.starts_with("v2.42."));
  CHECK(sa::check_response_mac(client, r, id.dendrite, "n.u", 200, "{\"a\":1}", id.axon).empty());
  // A response MAC is not a request MAC (separate keys and messages).
  CHECK_FALSE(sa::check_request_mac(
                  server, "v1." + std::string(server.id_hex()) + "." + r.substr(r.rfind('.') + 1),
                  canonical)
                  .empty());

  // Two sessions never share an id or keys.
  auto [client2, server2] = establish(id);
  CHECK(client2.id_hex() != client.id_hex());
  CHECK(sa::check_request_mac(server, sa::request_mac(client2, canonical), canonical) ==
        "unknown session id");
}

TEST_CASE("a tampered offer is refused", "[session_auth]") {
  const identity id;
  sa::client_offer offer(dendrite_key(), id.view());
  const std::string good = offer.header_value();
  REQUIRE(good.starts_with("v1."));
  REQUIRE(good.size() == 3 + 64 + 3 + 128);
  std::string why;
  REQUIRE(sa::accept(good, id.view(), axon_key(), test_bounds, &why));

  SECTION("every hex digit of the key and the signature") {
    for (const auto& bad : one_char_changes(good, 3)) {
      INFO(bad);
      CHECK_FALSE(sa::accept(bad, id.view(), axon_key(), test_bounds, &why));
      CHECK(why.find("bt-session-offer") != std::string::npos);
    }
  }
  SECTION("malformed values") {
    for (const std::string& bad :
         {std::string(), std::string("v1."), std::string("v2") + good.substr(2), good.substr(1),
          good + "0", good.substr(0, good.size() - 1), good.substr(0, 67) + good.substr(68),
          good.substr(0, 3) + "AB" + good.substr(5)}) {
      INFO(bad);
      CHECK_FALSE(sa::accept(bad, id.view(), axon_key(), test_bounds, &why));
      CHECK(why.starts_with("malformed bt-session-offer"));
    }
  }
  SECTION("each field of the request identity") {
    for (int field = 0; field < 4; ++field) {
      if (field == 2) continue;  // the axon hotkey: next section
      identity other = id;
      if (field == 0) other.nonce.back() = '7';
      if (field == 1) other.dendrite = other_key().ss58_address();
      if (field == 3) other.uuid.back() = '7';
      INFO(field);
      CHECK_FALSE(sa::accept(good, other.view(), axon_key(), test_bounds, &why));
      CHECK(why.find("signature mismatch") != std::string::npos);
    }
  }
  SECTION("an offer for another axon is refused by this one") {
    identity other = id;
    other.axon = other_key().ss58_address();
    CHECK_FALSE(sa::accept(good, id.view(), other_key(), test_bounds, &why));
    CHECK(why == "the request is addressed to another axon hotkey");
    // And presented with that axon's hotkey as the request's, its signature does not cover it.
    CHECK_FALSE(sa::accept(good, other.view(), other_key(), test_bounds, &why));
    CHECK(why.find("signature mismatch") != std::string::npos);
  }
  SECTION("zero bounds are refused") {
    CHECK_FALSE(sa::accept(good, id.view(), axon_key(), {0, 60}, &why));
    CHECK_FALSE(sa::accept(good, id.view(), axon_key(), {5, 0}, &why));
  }
  SECTION("a null why is allowed") {
    CHECK_FALSE(sa::accept("v1.zz", id.view(), axon_key(), test_bounds, nullptr));
  }
}

TEST_CASE("a tampered accept, or one checked with another hotkey, is refused", "[session_auth]") {
  const identity id;
  std::string why;
  // A fresh offer per attempt: complete() consumes it.
  auto accept_for = [&](sa::client_offer& offer) {
    auto acc = sa::accept(offer.header_value(), id.view(), axon_key(), test_bounds, &why);
    REQUIRE(acc);
    return acc->header_value;
  };
  {
    sa::client_offer offer(dendrite_key(), id.view());
    const std::string good = accept_for(offer);
    // Every digit (session id, key, bounds, signature) changed: refused.
    for (const auto& bad : one_char_changes(good, 3)) {
      INFO(bad);
      sa::client_offer fresh(dendrite_key(), id.view());
      CHECK_FALSE(std::move(fresh).complete(bad, &why));
    }
    CHECK(std::move(offer).complete(good, &why));
  }
  SECTION("an accept made for another offer") {
    sa::client_offer first(dendrite_key(), id.view());
    sa::client_offer second(dendrite_key(), id.view());
    const std::string for_first = accept_for(first);
    CHECK_FALSE(std::move(second).complete(for_first, &why));
    CHECK(why.find("signature mismatch") != std::string::npos);
  }
  SECTION("an accept signed by another hotkey than the one meant") {
    identity to_other = id;
    to_other.axon = other_key().ss58_address();
    sa::client_offer offer(dendrite_key(), to_other.view());
    // The other axon's own, valid accept for this offer...
    auto acc = sa::accept(offer.header_value(), to_other.view(), other_key(), test_bounds, &why);
    REQUIRE(acc);
    // ...checked by a dendrite that meant to call Bob: refused.
    sa::client_offer meant_bob(dendrite_key(), id.view());
    CHECK_FALSE(std::move(meant_bob).complete(acc->header_value, &why));
    CHECK(why.find("signature mismatch") != std::string::npos);
  }
  SECTION("malformed accepts") {
    sa::client_offer offer(dendrite_key(), id.view());
    const std::string good = accept_for(offer);
    const auto dots = [&](int n) {
      std::size_t at = 0;
      for (int i = 0; i < n; ++i) at = good.find('.', at + 1);
      return at;
    };
    for (const std::string& bad :
         {std::string(), std::string("v1."), good.substr(0, dots(4)),
          good.substr(0, dots(3) + 1) + "0" + good.substr(dots(4)),   // max_requests 0
          good.substr(0, dots(3) + 1) + "-5" + good.substr(dots(4)),  // signed
          good.substr(0, dots(3) + 1) + "99999999999999999999" + good.substr(dots(4)),  // > u64
          good.substr(0, 3) + "AB" + good.substr(5), good + "00"}) {
      INFO(bad);
      sa::client_offer fresh(dendrite_key(), id.view());
      CHECK_FALSE(std::move(fresh).complete(bad, &why));
      CHECK(why.starts_with("malformed bt-session-accept"));
    }
  }
}

TEST_CASE("request and response MACs: any change is refused", "[session_auth]") {
  const identity id;
  auto [client, server] = establish(id);
  const std::string h = sa::request_mac(client, canonical);
  REQUIRE(sa::check_request_mac(server, h, canonical).empty());

  SECTION("the MAC or the session id changed") {
    for (const auto& bad : one_char_changes(h, 3)) {
      INFO(bad);
      const std::string reason = sa::check_request_mac(server, bad, canonical);
      const bool in_id = bad.compare(3, 32, h, 3, 32) != 0;
      CHECK(reason == (in_id ? "unknown session id" : "MAC invalid"));
    }
  }
  SECTION("the canonical string changed") {
    for (const auto& other : one_char_changes(canonical, 0)) {
      INFO(other);
      CHECK(sa::check_request_mac(server, h, other) == "MAC invalid");
    }
    CHECK(sa::check_request_mac(server, h, canonical + ".") == "MAC invalid");
    CHECK(sa::check_request_mac(server, h, "") == "MAC invalid");
  }
  SECTION("malformed values") {
    for (const std::string& bad :
         {std::string(), std::string("v1."), h.substr(0, h.size() - 1), h + "0", "v2" + h.substr(2),
          h.substr(0, 35) + h.substr(36), h.substr(0, 36) + "0x" + h.substr(36),
          h.substr(0, 40) + "A" + h.substr(41)}) {
      INFO(bad);
      CHECK(sa::check_request_mac(server, bad, canonical).starts_with("malformed bt-session"));
    }
  }
  SECTION("a key from another session") {
    auto [c2, s2] = establish(id);
    const std::string forged = "v1." + std::string(server.id_hex()) + "." +
                               sa::request_mac(c2, canonical).substr(3 + 32 + 1);
    CHECK(sa::check_request_mac(server, forged, canonical) == "MAC invalid");
  }
  SECTION("response MACs") {
    const std::string body = "{\"dummy_output\":4}";
    const std::string r = sa::response_mac(server, "17", id.dendrite, "n.u", 200, body, id.axon);
    REQUIRE(sa::check_response_mac(client, r, id.dendrite, "n.u", 200, body, id.axon).empty());
    for (const auto& bad : one_char_changes(r, 3)) {
      INFO(bad);
      CHECK_FALSE(
          sa::check_response_mac(client, bad, id.dendrite, "n.u", 200, body, id.axon).empty());
    }
    CHECK_FALSE(sa::check_response_mac(client, r, id.dendrite, "n.u", 500, body, id.axon).empty());
    CHECK_FALSE(sa::check_response_mac(client, r, id.dendrite, "n.v", 200, body, id.axon).empty());
    CHECK_FALSE(
        sa::check_response_mac(client, r, id.dendrite, "n.u", 200, body + " ", id.axon).empty());
    CHECK_FALSE(
        sa::check_response_mac(client, r, other_key().ss58_address(), "n.u", 200, body, id.axon)
            .empty());
    CHECK_FALSE(
        sa::check_response_mac(client, r, id.dendrite, "n.u", 200, body, other_key().ss58_address())
            .empty());
    CHECK(sa::check_response_mac(client, "v2.x." + r.substr(r.rfind('.') + 1), id.dendrite, "n.u",
                                 200, body, id.axon)
              .starts_with("malformed"));
  }
}

TEST_CASE("moved-from keys and offers hold no secrets", "[session_auth]") {
  const identity id;
  auto [client, server] = establish(id);
  const std::string h = sa::request_mac(client, canonical);

  sa::session_keys moved = std::move(server);
  CHECK_FALSE(server.has_keys());  // NOLINT(bugprone-use-after-move): the contract under test
  CHECK(server.id_hex().empty());
  CHECK(sa::check_request_mac(server, h, canonical) == "no session keys");
  CHECK_THROWS_AS(sa::request_mac(server, canonical), std::logic_error);
  CHECK(sa::check_request_mac(moved, h, canonical).empty());

  sa::client_offer offer(dendrite_key(), id.view());
  const std::string header = offer.header_value();
  sa::client_offer taken = std::move(offer);
  CHECK(offer.header_value().empty());  // NOLINT(bugprone-use-after-move)
  std::string why;
  CHECK_FALSE(std::move(offer).complete("v1.", &why));  // NOLINT(bugprone-use-after-move)
  CHECK(why.starts_with("no offer"));
  CHECK(taken.header_value() == header);
  auto acc = sa::accept(header, id.view(), axon_key(), test_bounds, &why);
  REQUIRE(acc);
  // A failed complete consumes the offer too: its ephemeral secret is gone.
  CHECK_FALSE(std::move(taken).complete("v1.bad", &why));
  CHECK_FALSE(std::move(taken).complete(acc->header_value, &why));  // NOLINT
  CHECK(why.starts_with("no offer"));
}

TEST_CASE("an offer needs the request's own hotkey with a secret", "[session_auth]") {
  const identity id;
  CHECK_THROWS_AS(sa::client_offer(other_key(), id.view()), std::invalid_argument);
  const auto public_only = bt::keypair::from_ss58(dendrite_key().ss58_address());
  CHECK_THROWS_AS(sa::client_offer(public_only, id.view()), std::invalid_argument);
}
