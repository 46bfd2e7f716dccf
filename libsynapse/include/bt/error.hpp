// bt::errc: every failure libsynapse reports, as std::error_code values of one category.
#pragma once

#include <string>
#include <system_error>

namespace bt {

enum class errc {
  // --- codec: headers and bodies ---
  invalid_integer = 1,  ///< a header or field that must be a Python int() literal is not one
  invalid_float,        ///< a header or field that must be a Python float() literal is not one
  invalid_base64,       ///< a bt_header_input_obj_ value is not base64
  invalid_json,         ///< text that must be JSON is not (or is not the expected JSON shape)
  value_too_long,       ///< a header value or name exceeds the codec's sanity bound
  missing_header,       ///< a header the receiver requires is absent
  missing_field,        ///< a required synapse field is absent from a JSON body
  wrong_type,           ///< a JSON value has the wrong type for its declared field
  invalid_body,         ///< a JSON body is not an object or is otherwise unusable
  body_hash_mismatch,   ///< computed_body_hash does not match the hash of the body
  nesting_too_deep,     ///< JSON nesting beyond the parser's bound
  // --- identity: SS58, keys, signatures ---
  ss58_bad_character,    ///< a character outside the base58 alphabet
  ss58_bad_length,       ///< decoded length is not prefix + 32 + 2
  ss58_bad_checksum,     ///< the blake2b-512 checksum does not match
  ss58_bad_prefix,       ///< a first byte >= 128, or a format > 16383
  ss58_reserved_prefix,  ///< formats 46 and 47 are reserved
  invalid_public_key,    ///< 32 bytes that are not a valid point encoding
  invalid_secret_key,    ///< a secret key of the wrong length or a non-canonical scalar
  invalid_signature,     ///< a signature of the wrong length, encoding or marker
  signature_mismatch,    ///< a well-formed signature that does not verify
  invalid_hex,           ///< text that must be hex is not
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

const std::error_category& category() noexcept;

inline std::error_code make_error_code(errc e) noexcept {
  return {static_cast<int>(e), category()};
}

/// A failure with context: which header, field or input it concerns and why.
/// `what` names the place ("bt_header_dendrite_nonce", "body.dummy_input", "ss58 address").
struct error {
  std::error_code code;
  std::string what;
  std::string detail;

  explicit operator bool() const noexcept { return static_cast<bool>(code); }
  /// "<code message> in <what>: <detail>", for logs and HTTP messages.
  std::string message() const;
};

}  // namespace bt

template <>
struct std::is_error_code_enum<bt::errc> : std::true_type {};
