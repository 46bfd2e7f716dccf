// Fuzz target: Substrate secret URIs (bt::parse_secret_uri, derive_junction::from_text) and, for
// URIs whose phrase is a hex seed, the derivation itself (keypair::from_uri, sr25519 and
// ed25519). Mnemonic phrases are parsed but not turned into keys (PBKDF2's 2048 rounds per input
// would dominate; mnemonic_fuzz covers the phrase parser).
//
// Invariants:
//  - parse succeeds exactly when no error is set, and a failure is key_errc::invalid_uri;
//  - a parsed URI's phrase is a prefix of the input (or the dev phrase, when the input had none),
//    a password is a suffix after "///", and there are no more junctions than '/' characters;
//  - a junction's chain code does not depend on anything but its text: from_text(text) twice is
//    equal, and a decimal u64 gives its little-endian bytes.
#include <bt/secret_uri.hpp>

#include "fuzz_support.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  bt::fuzz::init_once();
  const std::string_view text = bt::fuzz::as_text(data, size);

  bt::error err;
  const auto uri = bt::parse_secret_uri(text, err);
  BT_FUZZ_CHECK(uri.has_value() == !err);
  if (!uri) {
    BT_FUZZ_CHECK(err.code == bt::key_errc::invalid_uri);
  } else {
    if (uri->phrase_is_dev) {
      BT_FUZZ_CHECK(uri->phrase == bt::dev_phrase);
    } else {
      BT_FUZZ_CHECK(text.starts_with(uri->phrase));
    }
    if (uri->password) BT_FUZZ_CHECK(text.ends_with("///" + *uri->password));
    BT_FUZZ_CHECK(uri->junctions.size() <= static_cast<std::size_t>(std::ranges::count(text, '/')));

    if (uri->is_hex_seed() && uri->junctions.size() <= 8) {
      for (auto type : {bt::crypto_type::sr25519, bt::crypto_type::ed25519}) {
        bt::error kerr;
        const auto kp = bt::keypair::from_uri(text, type, kerr);
        BT_FUZZ_CHECK(kp.has_value() == !kerr);
      }
    }
  }

  // The whole input as one junction.
  const bool hard = size > 0 && (data[0] & 1);
  const auto j1 = bt::derive_junction::from_text(text, hard);
  const auto j2 = bt::derive_junction::from_text(text, hard);
  BT_FUZZ_CHECK(j1 == j2 && j1.hard == hard);
  std::uint64_t n = 0;
  const auto digits = text.starts_with('+') ? text.substr(1) : text;
  if (!digits.empty() && digits.find_first_not_of("0123456789") == std::string_view::npos) {
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (ec == std::errc{} && p == digits.data() + digits.size()) {
      std::array<std::uint8_t, 32> expect{};
      for (int i = 0; i < 8; ++i) expect[i] = static_cast<std::uint8_t>(n >> (8 * i));
      BT_FUZZ_CHECK(j1.chain_code == expect);
    }
  }
  return 0;
}
