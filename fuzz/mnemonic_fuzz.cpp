// Fuzz target: BIP39 mnemonics (bt::mnemonic_to_entropy, validate_mnemonic, bip39_word_index,
// entropy_to_mnemonic). The PBKDF2 mini secret is not run: 2048 HMAC-SHA512 rounds per input
// would cost far more than the parsing under test, and it takes no untrusted structure.
//
// Invariants:
//  - validate_mnemonic agrees with mnemonic_to_entropy; a rejection names a mnemonic key_errc;
//  - an accepted phrase's entropy (16..32 bytes, multiple of 4) encodes to a mnemonic that is
//    accepted again and gives the same entropy;
//  - bip39_word_index(w) found => bip39_word(index) == w;
//  - any 16/20/24/28/32 input bytes, taken as entropy, round-trip through a mnemonic.
#include <bt/mnemonic.hpp>

#include "fuzz_support.hpp"

#include <algorithm>
#include <system_error>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  bt::fuzz::init_once();
  const std::string_view text = bt::fuzz::as_text(data, size);

  bt::error err;
  const auto entropy = bt::mnemonic_to_entropy(text, err);
  bt::error err2;
  BT_FUZZ_CHECK(bt::validate_mnemonic(text, err2) == entropy.has_value());
  if (entropy) {
    BT_FUZZ_CHECK(!err);
    const std::size_t n = entropy->size();
    BT_FUZZ_CHECK(n >= 16 && n <= 32 && n % 4 == 0);
    std::string phrase = bt::entropy_to_mnemonic(entropy->bytes());
    bt::error err3;
    const auto again = bt::mnemonic_to_entropy(phrase, err3);
    BT_FUZZ_CHECK(again && std::ranges::equal(again->bytes(), entropy->bytes()));
  } else {
    using bt::key_errc;
    BT_FUZZ_CHECK(err.code == key_errc::mnemonic_word_count ||
                  err.code == key_errc::mnemonic_unknown_word ||
                  err.code == key_errc::mnemonic_checksum);
    BT_FUZZ_CHECK(err.code == err2.code);
  }

  // The first word alone, through the index lookup.
  const std::string_view first = text.substr(0, std::min(text.find(' '), text.size()));
  if (const auto idx = bt::bip39_word_index(first)) {
    BT_FUZZ_CHECK(*idx < 2048);
    BT_FUZZ_CHECK(bt::bip39_word(*idx) == first);
  }

  // The raw bytes as entropy.
  if (size == 16 || size == 20 || size == 24 || size == 28 || size == 32) {
    const std::string phrase = bt::entropy_to_mnemonic({data, size});
    bt::error err4;
    const auto back = bt::mnemonic_to_entropy(phrase, err4);
    BT_FUZZ_CHECK(back &&
                  std::ranges::equal(back->bytes(), std::span<const std::uint8_t>(data, size)));
  }
  return 0;
}
