// The btauth/1 dialect (PROTOCOL 14, dendrite::btauth_call): any method and request target, a
// JSON body signed with the X-Bittensor-* headers for the addressed hotkey, the answer handed
// back as received (plain_request_dialect.hpp).
#pragma once

#include "plain_request_dialect.hpp"

#include <utility>

namespace bt::detail {

class btauth_dialect final : public plain_request_dialect {
 public:
  /// `out` outlives the call.
  btauth_dialect(std::string method, std::string path, std::string body, http_call_response* out)
      : plain_request_dialect(std::move(method), std::move(path), std::move(body), out) {}

  std::string_view encode_try(const call_context& cx, pooled_connection& c,
                              std::string& request_id) override;
};

}  // namespace bt::detail
