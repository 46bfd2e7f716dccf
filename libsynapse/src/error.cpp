#include <bt/error.hpp>

namespace bt {
namespace {

class bt_category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "bt"; }
  std::string message(int ev) const override {
    switch (static_cast<errc>(ev)) {
      case errc::invalid_integer:
        return "invalid integer";
      case errc::invalid_float:
        return "invalid float";
      case errc::invalid_base64:
        return "invalid base64";
      case errc::invalid_json:
        return "invalid JSON";
      case errc::value_too_long:
        return "value too long";
      case errc::missing_header:
        return "missing header";
      case errc::missing_field:
        return "missing required field";
      case errc::wrong_type:
        return "wrong type";
      case errc::invalid_body:
        return "invalid body";
      case errc::body_hash_mismatch:
        return "body hash mismatch";
      case errc::nesting_too_deep:
        return "JSON nested too deeply";
      case errc::ss58_bad_character:
        return "invalid SS58: character outside base58";
      case errc::ss58_bad_length:
        return "invalid SS58: bad length";
      case errc::ss58_bad_checksum:
        return "invalid SS58: bad checksum";
      case errc::ss58_bad_prefix:
        return "invalid SS58: bad prefix";
      case errc::ss58_reserved_prefix:
        return "invalid SS58: reserved prefix";
      case errc::invalid_public_key:
        return "invalid public key";
      case errc::invalid_secret_key:
        return "invalid secret key";
      case errc::invalid_signature:
        return "invalid signature";
      case errc::signature_mismatch:
        return "signature mismatch";
      case errc::invalid_hex:
        return "invalid hex";
      case errc::mnemonic_word_count:
        return "invalid mnemonic: word count";
      case errc::mnemonic_unknown_word:
        return "invalid mnemonic: unknown word";
      case errc::mnemonic_checksum:
        return "invalid mnemonic: checksum";
      case errc::invalid_uri:
        return "invalid secret URI";
      case errc::keyfile_invalid:
        return "invalid keyfile";
      case errc::keyfile_wrong_password:
        return "wrong password or corrupted keyfile";
      case errc::keyfile_not_found:
        return "keyfile not found";
      case errc::keyfile_io:
        return "keyfile I/O error";
      case errc::unsupported_crypto:
        return "unsupported crypto type";
    }
    return "unknown bt error";
  }
};

}  // namespace

const std::error_category& category() noexcept {
  static const bt_category c;
  return c;
}

std::string error::message() const {
  std::string m = code.message();
  if (!what.empty()) m += " in " + what;
  if (!detail.empty()) m += ": " + detail;
  return m;
}

}  // namespace bt
