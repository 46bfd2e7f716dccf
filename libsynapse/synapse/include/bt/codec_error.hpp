// bt::codec_errc: every failure the synapse codec reports (headers, JSON bodies, body hash), as
// std::error_code values of the "bt.codec" category.
#pragma once

#include <bt/error.hpp>

namespace bt {

enum class codec_errc {
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
};

const std::error_category& codec_category() noexcept;

inline std::error_code make_error_code(codec_errc e) noexcept {
  return {static_cast<int>(e), codec_category()};
}

}  // namespace bt

template <>
struct std::is_error_code_enum<bt::codec_errc> : std::true_type {};
