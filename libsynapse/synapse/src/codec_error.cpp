// The "bt.codec" error category.
#include <bt/codec_error.hpp>

namespace bt {
namespace {

class codec_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "bt.codec"; }
  std::string message(int ev) const override {
    switch (static_cast<codec_errc>(ev)) {
      case codec_errc::invalid_integer:
        return "invalid integer";
      case codec_errc::invalid_float:
        return "invalid float";
      case codec_errc::invalid_base64:
        return "invalid base64";
      case codec_errc::invalid_json:
        return "invalid JSON";
      case codec_errc::value_too_long:
        return "value too long";
      case codec_errc::missing_header:
        return "missing header";
      case codec_errc::missing_field:
        return "missing required field";
      case codec_errc::wrong_type:
        return "wrong type";
      case codec_errc::invalid_body:
        return "invalid body";
      case codec_errc::body_hash_mismatch:
        return "body hash mismatch";
      case codec_errc::nesting_too_deep:
        return "JSON nested too deeply";
    }
    return "unknown bt.codec error";
  }
};

}  // namespace

const std::error_category& codec_category() noexcept {
  static const codec_category_impl c;
  return c;
}

}  // namespace bt
