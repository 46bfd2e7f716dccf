// bt::error: a failure with its context, shared by every library of the project. The code is a
// std::error_code of one of the libraries' categories (bt::key_errc, bt::codec_errc, ...).
#pragma once

#include <string>
#include <system_error>

namespace bt {

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
