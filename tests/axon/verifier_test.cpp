// The axon's stateless verifier (axon/src/auth/verifier.hpp): every component of the signed message
// "{nonce}.{dendrite hotkey}.{axon hotkey}.{uuid}.{computed_body_hash}" must be in its canonical
// form (PROTOCOL D29), so that a signed text can be read one way only. Each refusal below is of
// a request whose signature is valid over the exact text it presents: only the form is wrong.
#include "auth/verifier.hpp"

#include "support/dev_keys.hpp"

#include <bt/header_codec.hpp>
#include <bt/hex.hpp>
#include <bt/sha3.hpp>
#include <bt/ss58.hpp>

#include <catch2/catch.hpp>

#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

using bt::test::alice;
using bt::test::bob;

namespace {

constexpr std::int64_t second = 1'000'000'000;
constexpr std::int64_t t0 = 1'700'000'000 * second;
const std::string honest_uuid = "5ecbd69c-1cec-11ee-b0dc-e29ce36fec1a";

/// The victim: an axon serving bob's hotkey.
bt::detail::verifier bob_verifier() {
  return {bob().ss58_address(), 2 * second, 60 * second};
}

/// Headers of a request by alice to bob, signed by alice over exactly the components given
/// (whatever their form), as an attacker holding a signature over that text would present it.
bt::synapse signed_headers(std::int64_t nonce, const std::string& uuid,
                           const std::string& body_hash,
                           const std::string& hotkey = alice().ss58_address()) {
  bt::synapse h;
  h.timeout = 12.0;
  h.dendrite.nonce = nonce;
  h.dendrite.hotkey = hotkey;
  h.dendrite.uuid = uuid;
  h.computed_body_hash = body_hash;
  const std::string message = std::to_string(nonce) + "." + hotkey + "." + bob().ss58_address() +
                              "." + uuid + "." + body_hash;
  h.dendrite.signature = "0x" + bt::to_hex(alice().sign(std::string_view(message)));
  return h;
}

struct outcome {
  bool ok;
  std::string why;
};

outcome check(const bt::synapse& h, std::int64_t now = t0) {
  std::string scratch, why;
  const bool ok = bob_verifier().check(h, now, scratch, why);
  return {ok, why};
}

const std::string empty_hash = bt::sha3_256_hex("");

}  // namespace

TEST_CASE("verifier: a request with every component canonical passes", "[verifier]") {
  const auto r = check(signed_headers(t0, honest_uuid, empty_hash));
  CHECK(r.why.empty());
  CHECK(r.ok);
}

TEST_CASE("verifier: a uuid not in str(uuid.uuid1()) form is refused, though validly signed",
          "[verifier]") {
  const std::vector<std::string> bad = {
      "5ECBD69C-1CEC-11EE-B0DC-E29CE36FEC1A",    // upper case
      "5ecbd69c-1cec-11ee-b0dc-E29ce36fec1a",    // one upper-case digit
      "5ecbd69c1cec11eeb0dce29ce36fec1a",        // no dashes (uuid.hex)
      "{5ecbd69c-1cec-11ee-b0dc-e29ce36fec1a}",  // braces
      "urn:uuid:5ecbd69c-1cec-11ee-b0dc-e29ce36fec1a",
      "5ecbd69c-1cec-11ee-b0dc-e29ce36fec1",    // 35 characters
      "5ecbd69c-1cec-11ee-b0dc-e29ce36fec1a0",  // 37 characters
      "5ecbd69c1-cec-11ee-b0dc-e29ce36fec1a",   // a dash out of place
      "5ecbd69c-1cec-11ee-b0dc-e29ce36fec1g",   // not hex
      "5ecbd69c-1cec-11ee-b0dc.e29ce36fec1a",   // a dot: would shift the message's fields
      " 5ecbd69c-1cec-11ee-b0dc-e29ce36fec1",   // leading space
      "uuid-b",
  };
  for (const auto& uuid : bad) {
    INFO(uuid);
    const auto r = check(signed_headers(t0, uuid, empty_hash));
    CHECK_FALSE(r.ok);
    CHECK(r.why.rfind("Invalid UUID", 0) == 0);
  }
}

TEST_CASE(
    "verifier: a computed_body_hash not of 64 lower-case hex digits is refused, though validly "
    "signed",
    "[verifier]") {
  const std::vector<std::string> bad = {
      "",
      "A7FFC6F8BF1ED76651C14756A061D662F580FF4DE43B49FA82D80A4B80F8434A",   // upper case
      "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434",    // 63 digits
      "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a0",  // 65 digits
      "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434.",   // a dot
      "0xa7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f843",
      honest_uuid,  // what the oracle yields
  };
  for (const auto& hash : bad) {
    INFO(hash);
    const auto r = check(signed_headers(t0, honest_uuid, hash));
    CHECK_FALSE(r.ok);
    CHECK(r.why.rfind("Invalid computed_body_hash", 0) == 0);
  }
}

TEST_CASE("verifier: a negative nonce is refused, though fresh and validly signed", "[verifier]") {
  // With a clock near the epoch, -1 ns is inside the freshness window: only the form refuses it.
  const auto r = check(signed_headers(-1, honest_uuid, empty_hash), 1 * second);
  CHECK_FALSE(r.ok);
  CHECK(r.why == "Invalid nonce: -1 is negative");
  CHECK(check(signed_headers(0, honest_uuid, empty_hash), 1 * second).ok);
}

TEST_CASE(
    "verifier: a nonce header in a non-canonical spelling is read as its value, and the "
    "signature must be over the canonical decimal",
    "[verifier]") {
  // The header codec reads Python int() literals ("+5", "05", " 5", "5_0"); the verifier never
  // sees the raw text: the signed message always holds the int64's canonical decimal, as the
  // Python axon's f"{synapse.dendrite.nonce}" does. So one value has one signed spelling.
  const std::string canonical = std::to_string(t0);
  for (const std::string& raw : {"+" + canonical, "0" + canonical, " " + canonical + " "}) {
    INFO(raw);
    bt::synapse h;
    bt::header_reader reader(h);
    REQUIRE(reader.feed("bt_header_dendrite_nonce", raw));
    REQUIRE(h.dendrite.nonce == t0);
    h.dendrite.hotkey = alice().ss58_address();
    h.dendrite.uuid = honest_uuid;
    h.computed_body_hash = empty_hash;
    const std::string tail = "." + alice().ss58_address() + "." + bob().ss58_address() + "." +
                             honest_uuid + "." + empty_hash;
    // Signed over the raw spelling: not what the axon checks.
    h.dendrite.signature = "0x" + bt::to_hex(alice().sign(std::string_view(raw + tail)));
    const auto refused = check(h);
    CHECK_FALSE(refused.ok);
    CHECK(refused.why.rfind("Signature mismatch with " + canonical + ".", 0) == 0);
    // Signed over the canonical decimal: accepted.
    h.dendrite.signature = "0x" + bt::to_hex(alice().sign(std::string_view(canonical + tail)));
    CHECK(check(h).ok);
  }
}

TEST_CASE("verifier: a dendrite hotkey in another SS58 format is refused", "[verifier]") {
  const std::string polkadot = bt::ss58::encode(alice().public_key(), 0);
  const auto r = check(signed_headers(t0, honest_uuid, empty_hash, polkadot));
  CHECK_FALSE(r.ok);
  CHECK(r.why == "Invalid SS58 address: format 0 is not Bittensor's 42");
}

TEST_CASE("verifier: a signed error answer of another axon is not a request (signature oracle)",
          "[verifier]") {
  // Validator A (alice) runs an axon with uuid a_axon_uuid. An attacker with no key asks it for
  // an error answer, claiming to be A's own dendrite and naming "{victim}.{uuid}" as the axon
  // hotkey. A's axon (before the pipeline's half of the fix) signs
  //   "{axon nonce}.{claimed dendrite hotkey}.{claimed axon hotkey}.{A's axon uuid}"
  // which reads, dot-joined, as a request from A to the victim (bob) whose body hash is A's
  // axon uuid. Presented to bob's axon, it must be refused before any stateful stage.
  const std::int64_t axon_nonce = t0;
  const std::string a_axon_uuid = "0c5f3c2e-9e0b-11ee-8c90-0242ac120002";
  const std::string claimed_dendrite = alice().ss58_address();
  const std::string claimed_axon = bob().ss58_address() + "." + honest_uuid;
  const std::string answer_message =
      std::to_string(axon_nonce) + "." + claimed_dendrite + "." + claimed_axon + "." + a_axon_uuid;
  const std::string oracle_signature =
      "0x" + bt::to_hex(alice().sign(std::string_view(answer_message)));

  bt::synapse forged;
  forged.timeout = 12.0;
  forged.dendrite.nonce = axon_nonce;
  forged.dendrite.hotkey = alice().ss58_address();
  forged.dendrite.uuid = honest_uuid;
  forged.dendrite.signature = oracle_signature;
  forged.computed_body_hash = a_axon_uuid;
  std::string scratch, why;
  CHECK_FALSE(bob_verifier().check(forged, t0, scratch, why));
  CHECK(why.rfind("Invalid computed_body_hash", 0) == 0);

  // The precondition of the attack: the answer's signature is alice's over the very text bob's
  // verifier rebuilds for this request.
  const std::string victim_message = std::to_string(axon_nonce) + "." + alice().ss58_address() +
                                     "." + bob().ss58_address() + "." + honest_uuid + "." +
                                     a_axon_uuid;
  const auto sig = bt::from_hex(oracle_signature.substr(2));
  REQUIRE(sig);
  CHECK(alice().verify(std::string_view(victim_message), *sig));
}

TEST_CASE(
    "verifier: a request signed for another axon's hotkey is told which hotkey this axon serves, "
    "after Python's message",
    "[verifier]") {
  using bt::test::charlie;
  // Alice signs for charlie's axon but reaches bob's (a validator that took the wrong entry).
  bt::synapse h;
  h.timeout = 12.0;
  h.dendrite.nonce = t0;
  h.dendrite.hotkey = alice().ss58_address();
  h.dendrite.uuid = honest_uuid;
  h.computed_body_hash = empty_hash;
  h.axon.hotkey = charlie().ss58_address();
  const std::string signed_for_charlie = std::to_string(t0) + "." + alice().ss58_address() + "." +
                                         charlie().ss58_address() + "." + honest_uuid + "." +
                                         empty_hash;
  h.dendrite.signature = "0x" + bt::to_hex(alice().sign(std::string_view(signed_for_charlie)));
  const std::string ours = std::to_string(t0) + "." + alice().ss58_address() + "." +
                           bob().ss58_address() + "." + honest_uuid + "." + empty_hash;
  const auto r = check(h);
  CHECK_FALSE(r.ok);
  CHECK(r.why == "Signature mismatch with " + ours + " and " + *h.dendrite.signature +
                     " (this axon serves hotkey " + bob().ss58_address() +
                     "; the request was signed for " + charlie().ss58_address() + ")");

  // Signed for this axon's own hotkey but wrong: Python's message exactly, nothing added.
  h.axon.hotkey = bob().ss58_address();
  const auto same = check(h);
  CHECK_FALSE(same.ok);
  CHECK(same.why == "Signature mismatch with " + ours + " and " + *h.dendrite.signature);
}

TEST_CASE("verifier: the signature header's format errors, in btwallet's order and texts",
          "[verifier]") {
  const bt::synapse honest = signed_headers(t0, honest_uuid, empty_hash);
  const std::string digits = honest.dendrite.signature->substr(2);
  REQUIRE(digits.size() == 128);
  const auto with_signature = [&](std::string sig) {
    bt::synapse h = honest;
    h.dendrite.signature = std::move(sig);
    return check(h);
  };
  // Upper-case digits and prefix decode to the same bytes: still the valid signature.
  std::string upper = digits;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  CHECK(with_signature("0X" + upper).ok);
  CHECK(with_signature("").why == "Missing Signature");
  CHECK(with_signature(digits).why == "Invalid signature format. Expected hex string.");
  CHECK(with_signature("0x" + digits.substr(1)).why == "Invalid hex string: Odd number of digits");
  // A bad digit in either place of a pair, reported at its position, before any length check.
  std::string bad_high = digits, bad_low = digits;
  bad_high[40] = 'g';
  bad_low[41] = 'z';
  CHECK(with_signature("0x" + bad_high).why ==
        "Invalid hex string: Invalid character 'g' at position 40");
  CHECK(with_signature("0x" + bad_low).why ==
        "Invalid hex string: Invalid character 'z' at position 41");
  CHECK(with_signature("0x" + bad_low.substr(0, 64)).why ==
        "Invalid hex string: Invalid character 'z' at position 41");
  CHECK(with_signature("0x" + digits.substr(0, 126)).why == "Invalid signature");
  CHECK(with_signature("0x" + digits + "00").why == "Invalid signature");
  // Well formed, one bit off: a mismatch, not a format error.
  std::string flipped = digits;
  flipped[0] = flipped[0] == '0' ? '1' : '0';
  CHECK(with_signature("0x" + flipped).why.starts_with("Signature mismatch with "));
}
