// The "bt.keys" error category, and bt::error::message().
#include <bt/key_error.hpp>

namespace bt {
namespace {

class key_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "bt.keys"; }
  std::string message(int ev) const override {
    switch (static_cast<key_errc>(ev)) {
      case key_errc::ss58_bad_character:
        return "invalid SS58: character outside base58";
      case key_errc::ss58_bad_length:
        return "invalid SS58: bad length";
      case key_errc::ss58_bad_checksum:
        return "invalid SS58: bad checksum";
      case key_errc::ss58_bad_prefix:
        return "invalid SS58: bad prefix";
      case key_errc::ss58_reserved_prefix:
        return "invalid SS58: reserved prefix";
      case key_errc::invalid_public_key:
        return "invalid public key";
      case key_errc::invalid_secret_key:
        return "invalid secret key";
      case key_errc::invalid_signature:
        return "invalid signature";
      case key_errc::signature_mismatch:
        return "signature mismatch";
      case key_errc::invalid_hex:
        return "invalid hex";
      case key_errc::mnemonic_word_count:
        return "invalid mnemonic: word count";
      case key_errc::mnemonic_unknown_word:
        return "invalid mnemonic: unknown word";
      case key_errc::mnemonic_checksum:
        return "invalid mnemonic: checksum";
      case key_errc::invalid_uri:
        return "invalid secret URI";
      case key_errc::keyfile_invalid:
        return "invalid keyfile";
      case key_errc::keyfile_wrong_password:
        return "wrong password or corrupted keyfile";
      case key_errc::keyfile_not_found:
        return "keyfile not found";
      case key_errc::keyfile_io:
        return "keyfile I/O error";
      case key_errc::unsupported_crypto:
        return "unsupported crypto type";
    }
    return "unknown bt.keys error";
  }
};

}  // namespace

const std::error_category& key_category() noexcept {
  static const key_category_impl c;
  return c;
}

std::string error::message() const {
  std::string m = code.message();
  if (!what.empty()) m += " in " + what;
  if (!detail.empty()) m += ": " + detail;
  return m;
}

}  // namespace bt
