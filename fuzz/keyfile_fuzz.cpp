// Fuzz target: keyfile bytes (bt::detect_keyfile_encryption, deserialize_keyfile,
// keypair_from_keyfile_data without a password, decrypt_keyfile_data with a fixed key).
// The Argon2 password derivation (512 MiB, about a second) is never run: NaCl data is opened
// with a fixed keyfile_key instead.
//
// Input: keyfile bytes as read from disk; or "ENC:" + plaintext, which the target first seals
// with the fixed key (so that the fuzzer reaches the JSON behind a valid MAC, which it could not
// forge).
// Invariants:
//  - a parsed keypair serialises (full and public-only form) to JSON that parses back to the
//    same public key and address, and the full form keeps the secret (it can sign);
//  - sealing then opening with the same key gives the plaintext back;
//  - a failure carries a keyfile or mnemonic key_errc.
#include <bt/keyfile.hpp>

#include "fuzz_support.hpp"

#include <sodium.h>

#include <vector>

namespace {

const bt::keyfile_key& fixed_key() {
  static const bt::keyfile_key key = [] {
    bt::keyfile_key k;
    for (std::size_t i = 0; i < k.bytes.size(); ++i)
      k.bytes[i] = static_cast<std::uint8_t>(0x42 + i);
    return k;
  }();
  return key;
}

void check_keypair(const bt::keypair& kp) {
  std::string full = bt::serialize_keyfile(kp);
  bt::error err;
  const auto back = bt::deserialize_keyfile(full, err, kp.type());
  sodium_memzero(full.data(), full.size());
  BT_FUZZ_CHECK(back && back->public_key() == kp.public_key() &&
                back->ss58_address() == kp.ss58_address());
  BT_FUZZ_CHECK(back->has_secret() == kp.has_secret());

  const std::string pub = bt::serialize_public_keyfile(kp);
  const auto pub_back = bt::deserialize_keyfile(pub, err, kp.type());
  BT_FUZZ_CHECK(pub_back && pub_back->public_key() == kp.public_key() && !pub_back->has_secret());
}

void check_error(const bt::error& err) {
  using bt::key_errc;
  const auto c = err.code;
  BT_FUZZ_CHECK(c == key_errc::keyfile_invalid || c == key_errc::keyfile_wrong_password ||
                c == key_errc::mnemonic_word_count || c == key_errc::mnemonic_unknown_word ||
                c == key_errc::mnemonic_checksum || c == key_errc::invalid_hex ||
                c == key_errc::invalid_secret_key || c == key_errc::invalid_public_key ||
                c == key_errc::ss58_bad_character || c == key_errc::ss58_bad_length ||
                c == key_errc::ss58_bad_checksum || c == key_errc::ss58_bad_prefix ||
                c == key_errc::ss58_reserved_prefix || c == key_errc::unsupported_crypto);
}

void parse_plain(std::string_view text) {
  for (auto type : {bt::crypto_type::sr25519, bt::crypto_type::ed25519}) {
    bt::error err;
    const auto kp = bt::deserialize_keyfile(text, err, type);
    BT_FUZZ_CHECK(kp.has_value() == !err);
    if (kp)
      check_keypair(*kp);
    else
      check_error(err);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  bt::fuzz::init_once();
  std::span<const std::uint8_t> bytes(data, size);
  std::vector<std::uint8_t> sealed;
  constexpr std::string_view enc_prefix = "ENC:";
  if (bt::fuzz::as_text(data, size).starts_with(enc_prefix)) {
    sealed = bt::encrypt_keyfile_data(bytes.subspan(enc_prefix.size()), fixed_key());
    BT_FUZZ_CHECK(bt::detect_keyfile_encryption(sealed) == bt::keyfile_encryption::nacl);
    bytes = sealed;
  }

  const auto enc = bt::detect_keyfile_encryption(bytes);
  BT_FUZZ_CHECK(bt::is_keyfile_encrypted(bytes) == (enc != bt::keyfile_encryption::none));

  bt::error err;
  const auto kp = bt::keypair_from_keyfile_data(bytes, std::nullopt, err);
  BT_FUZZ_CHECK(kp.has_value() == !err);
  if (enc != bt::keyfile_encryption::none) BT_FUZZ_CHECK(!kp);
  if (!kp) check_error(err);

  if (enc == bt::keyfile_encryption::none) {
    parse_plain(bt::fuzz::as_text(bytes.data(), bytes.size()));
  } else {
    bt::error derr;
    auto plain = bt::decrypt_keyfile_data(bytes, fixed_key(), derr);
    BT_FUZZ_CHECK(plain.has_value() == !derr);
    if (!sealed.empty()) {  // we sealed it ourselves: it must open to the original
      BT_FUZZ_CHECK(
          plain && *plain == bt::fuzz::as_text(data + enc_prefix.size(), size - enc_prefix.size()));
    }
    if (plain) {
      parse_plain(*plain);
      sodium_memzero(plain->data(), plain->size());
    } else {
      check_error(derr);
    }
  }
  return 0;
}
