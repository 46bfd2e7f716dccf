// bt::key_errc: every failure bt::keys reports (SS58, keys, signatures, mnemonics, secret URIs,
// keyfiles, wallets), as std::error_code values of the "bt.keys" category.
#pragma once

#include <bt/error.hpp>

namespace bt {

enum class key_errc {
  // --- identity: SS58, keys, signatures ---
  ss58_bad_character = 1,  ///< a character outside the base58 alphabet
  ss58_bad_length,         ///< decoded length is not prefix + 32 + 2
  ss58_bad_checksum,       ///< the blake2b-512 checksum does not match
  ss58_bad_prefix,         ///< a first byte >= 128, or a format > 16383
  ss58_reserved_prefix,    ///< formats 46 and 47 are reserved
  invalid_public_key,      ///< 32 bytes that are not a valid point encoding
  invalid_secret_key,      ///< a secret key of the wrong length or a non-canonical scalar
  invalid_signature,       ///< a signature of the wrong length, encoding or marker
  signature_mismatch,      ///< a well-formed signature that does not verify
  invalid_hex,             ///< text that must be hex is not
  // --- mnemonics, URIs, keyfiles, wallets ---
  mnemonic_word_count,     ///< not 12, 15, 18, 21 or 24 words
  mnemonic_unknown_word,   ///< a word outside the BIP39 English list
  mnemonic_checksum,       ///< the BIP39 checksum does not match
  invalid_uri,             ///< a secret URI that does not parse
  keyfile_invalid,         ///< keyfile contents that do not parse
  keyfile_wrong_password,  ///< decryption failed: wrong password or corrupted file
  keyfile_not_found,       ///< the keyfile does not exist
  keyfile_io,              ///< the keyfile could not be read or written
  unsupported_crypto,      ///< an operation the key's crypto type does not support
};

const std::error_category& key_category() noexcept;

inline std::error_code make_error_code(key_errc e) noexcept {
  return {static_cast<int>(e), key_category()};
}

}  // namespace bt

template <>
struct std::is_error_code_enum<bt::key_errc> : std::true_type {};
