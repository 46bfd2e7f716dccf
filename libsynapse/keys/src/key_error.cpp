// The "bt.keys" error category, and bt::error::message().
#include <bt/key_error.hpp>

#include <bt/error_category.hpp>

#include <array>

namespace bt {
namespace {

constexpr std::array<errc_message<key_errc>, 19> key_messages{{
    {key_errc::ss58_bad_character, "invalid SS58: character outside base58"},
    {key_errc::ss58_bad_length, "invalid SS58: bad length"},
    {key_errc::ss58_bad_checksum, "invalid SS58: bad checksum"},
    {key_errc::ss58_bad_prefix, "invalid SS58: bad prefix"},
    {key_errc::ss58_reserved_prefix, "invalid SS58: reserved prefix"},
    {key_errc::invalid_public_key, "invalid public key"},
    {key_errc::invalid_secret_key, "invalid secret key"},
    {key_errc::invalid_signature, "invalid signature"},
    {key_errc::signature_mismatch, "signature mismatch"},
    {key_errc::invalid_hex, "invalid hex"},
    {key_errc::mnemonic_word_count, "invalid mnemonic: word count"},
    {key_errc::mnemonic_unknown_word, "invalid mnemonic: unknown word"},
    {key_errc::mnemonic_checksum, "invalid mnemonic: checksum"},
    {key_errc::invalid_uri, "invalid secret URI"},
    {key_errc::keyfile_invalid, "invalid keyfile"},
    {key_errc::keyfile_wrong_password, "wrong password or corrupted keyfile"},
    {key_errc::keyfile_not_found, "keyfile not found"},
    {key_errc::keyfile_io, "keyfile I/O error"},
    {key_errc::unsupported_crypto, "unsupported crypto type"},
}};
static_assert(is_dense_table(key_messages, key_errc::unsupported_crypto),
              "one message per key_errc, in order");

}  // namespace

const std::error_category& key_category() noexcept {
  static const enum_error_category c("bt.keys", key_messages, "unknown bt.keys error");
  return c;
}

std::string error::message() const {
  std::string m = code.message();
  if (!what.empty()) m += " in " + what;
  if (!detail.empty()) m += ": " + detail;
  return m;
}

}  // namespace bt
