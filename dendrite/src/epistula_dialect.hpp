// The Epistula dialect (PROTOCOL 12, dendrite::epistula_call): any method and path, a JSON body
// signed with Epistula headers for the addressed hotkey, the answer handed back as received
// (plain_request_dialect.hpp).
#pragma once

#include "plain_request_dialect.hpp"

#include <utility>

namespace bt::detail {

class epistula_dialect final : public plain_request_dialect {
 public:
  /// `out` outlives the call.
  epistula_dialect(std::string method, std::string path, std::string body, http_call_response* out)
      : plain_request_dialect(std::move(method), std::move(path), std::move(body), out) {}

  std::string_view encode_try(const call_context& cx, pooled_connection& c,
                              std::string& request_id) override;
};

}  // namespace bt::detail
