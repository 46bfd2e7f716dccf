// The "bt.codec" error category.
#include <bt/codec_error.hpp>

#include <bt/error_category.hpp>

#include <array>

namespace bt {
namespace {

constexpr std::array<errc_message<codec_errc>, 11> codec_messages{{
    {codec_errc::invalid_integer, "invalid integer"},
    {codec_errc::invalid_float, "invalid float"},
    {codec_errc::invalid_base64, "invalid base64"},
    {codec_errc::invalid_json, "invalid JSON"},
    {codec_errc::value_too_long, "value too long"},
    {codec_errc::missing_header, "missing header"},
    {codec_errc::missing_field, "missing required field"},
    {codec_errc::wrong_type, "wrong type"},
    {codec_errc::invalid_body, "invalid body"},
    {codec_errc::body_hash_mismatch, "body hash mismatch"},
    {codec_errc::nesting_too_deep, "JSON nested too deeply"},
}};
static_assert(is_dense_table(codec_messages, codec_errc::nesting_too_deep),
              "one message per codec_errc, in order");

}  // namespace

const std::error_category& codec_category() noexcept {
  static const enum_error_category c("bt.codec", codec_messages, "unknown bt.codec error");
  return c;
}

}  // namespace bt
