// The Epistula dialect (epistula_dialect.hpp): how one try is signed.
#include "epistula_dialect.hpp"

#include <bt/epistula.hpp>

namespace bt::detail {

std::string_view epistula_dialect::encode_try(const call_context& cx, pooled_connection& c,
                                              std::string& request_id) {
  // A fresh uuid4 and timestamp per try, signed for the addressed hotkey; a response signature
  // names the request by its Epistula-Uuid.
  const auto h = epistula::sign_request(cx.st.key, body_, cx.target.hotkey, epistula::now_ms());
  encode_epistula_head(method_, path_, cx.host, h, body_.size(), c.head);
  request_id = h.uuid;
  out_->uuid = h.uuid;
  return body_;
}

}  // namespace bt::detail
