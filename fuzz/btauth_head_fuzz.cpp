// Fuzz target: btauth/1's header parsing and head check, as the axon runs them on a plain route
// (PROTOCOL 14; libsynapse's bt/btauth.hpp): "name: value" lines, as Beast would deliver them, fed
// to btauth::header_fields (the fields whose names is_btauth(), as the axon's request parser does),
// then btauth::check_head at a fixed clock (1.7e18 ns) for a fixed receiver (//Bob's address),
// and, when the head passes, btauth::check_signature over POST /echo with the body "{}".
//
// Invariants:
//  - any() is true exactly when a field was fed;
//  - a refusal's message starts with its failure class and ": ", is bounded (quoted values are
//    cut), and the head check refuses only as MalformedAuth, WrongReceiver or StaleRequest; the
//    signature check only as BadSignature;
//  - a passing head: no field twice, version "1", the nonce text canonical (the decimal of the
//    decoded nonce) and inside [now - max_age, now + skew], the receiver ours (or absent, only
//    when the policy allows it), the public key the hotkey's, the scheme the Crypto field's;
//  - the same fields with names in another case decide the same; a head that passes with the
//    receiver required passes with it optional.
// BT_FUZZ_VERBOSE=1 prints each input's verdict (the seeds' signed heads print "accepted").
#include <bt/btauth.hpp>
#include <bt/ss58.hpp>

#include "fuzz_support.hpp"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

namespace btauth = bt::btauth;
using field = btauth::header_fields::field;

constexpr std::int64_t now_ns = 1'700'000'000'000'000'000;
constexpr std::string_view self = "5FHneW46xGXgs5mUiveU4sbTyGBzmstUspZC92UhjJM694ty";  // //Bob

/// The input's "name: value" lines (a line without ':' is skipped, as a parser would refuse it).
BT_FUZZ_NO_COVERAGE std::vector<std::pair<std::string_view, std::string_view>> lines_of(
    std::string_view text) {
  std::vector<std::pair<std::string_view, std::string_view>> out;
  while (!text.empty()) {
    const auto eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
      value.remove_prefix(1);
    out.emplace_back(line.substr(0, colon), value);
  }
  return out;
}

BT_FUZZ_NO_COVERAGE void check_refusal(const btauth::refusal& r) {
  const std::string prefix = std::string(btauth::class_name(r.kind)) + ": ";
  BT_FUZZ_CHECK(r.why.starts_with(prefix));
  BT_FUZZ_CHECK(r.why.size() < 1024);
}

BT_FUZZ_NO_COVERAGE void report(const btauth::result& r) {
  static const bool verbose = std::getenv("BT_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "%s\n", r ? r->why.c_str() : "accepted");
}

BT_FUZZ_NO_COVERAGE bool same(const btauth::result& a, const btauth::result& b) {
  return a.has_value() == b.has_value() && (!a || a->kind == b->kind);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  bt::fuzz::init_once();
  const auto lines = lines_of(bt::fuzz::as_text(data, size));

  btauth::header_fields h, folded;
  bool fed = false;
  for (const auto& [name, value] : lines) {
    if (!btauth::header_fields::is_btauth(name)) continue;
    h.feed(name, value);
    std::string other(name);
    for (char& c : other)
      c = static_cast<char>(std::isupper(static_cast<unsigned char>(c))
                                ? std::tolower(static_cast<unsigned char>(c))
                                : std::toupper(static_cast<unsigned char>(c)));
    folded.feed(other, value);
    fed = true;
  }
  BT_FUZZ_CHECK(h.any() == fed);

  const btauth::policy strict{.self_hotkey = self};
  btauth::claim claim;
  const btauth::result head = btauth::check_head(h, now_ns, strict, claim);
  btauth::claim folded_claim;
  BT_FUZZ_CHECK(same(head, btauth::check_head(folded, now_ns, strict, folded_claim)));
  if (head) {
    report(head);
    check_refusal(*head);
    BT_FUZZ_CHECK(head->kind != btauth::failure::bad_signature &&
                  head->kind != btauth::failure::replayed_request);
    return 0;
  }

  for (std::size_t i = 0; i < btauth::header_fields::field_count; ++i)
    BT_FUZZ_CHECK(h.count(field(i)) <= 1);
  BT_FUZZ_CHECK(h.value(field::version_f) == btauth::version);
  BT_FUZZ_CHECK(h.value(field::nonce_f) == std::to_string(claim.nonce_ns));
  BT_FUZZ_CHECK(claim.nonce_ns >= now_ns - strict.max_age_ns);
  BT_FUZZ_CHECK(claim.nonce_ns <= now_ns + strict.allowed_skew_ns);
  BT_FUZZ_CHECK(h.count(field::receiver_f) == 1 && h.value(field::receiver_f) == self);
  std::error_code ec;
  const auto who = bt::ss58::decode(h.value(field::hotkey_f), ec);
  BT_FUZZ_CHECK(who && who->format == bt::ss58::default_format &&
                who->public_key == claim.public_key);
  const bool declared = h.count(field::crypto_f) == 1;
  BT_FUZZ_CHECK(claim.scheme == (declared ? *btauth::parse_scheme(h.value(field::crypto_f))
                                          : bt::crypto_type::sr25519));

  btauth::policy lenient = strict;
  lenient.require_receiver = false;
  btauth::claim lenient_claim;
  BT_FUZZ_CHECK(!btauth::check_head(h, now_ns, lenient, lenient_claim));

  std::string scratch;
  const btauth::result sig = btauth::check_signature(h, claim, "POST", "/echo", "{}", scratch);
  report(sig);
  if (sig) {
    check_refusal(*sig);
    BT_FUZZ_CHECK(sig->kind == btauth::failure::bad_signature);
  }
  return 0;
}
