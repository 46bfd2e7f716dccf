// The btauth/1 dialect (btauth_dialect.hpp): how one try is signed.
#include "btauth_dialect.hpp"

#include <bt/btauth.hpp>
#include <bt/request_nonce.hpp>

namespace bt::detail {

std::string_view btauth_dialect::encode_try(const call_context& cx, pooled_connection& c,
                                            std::string& request_id) {
  // A fresh nonce per try, bound to the addressed hotkey (X-Bittensor-Receiver). The nonce is the
  // process's time_ns counter (bt/request_nonce.hpp), strictly increasing, so that no two
  // requests signed here share one even within one nanosecond (an axon refuses a (hotkey, nonce)
  // pair it has seen). A response signature names the request by the decimal nonce text sent.
  const auto h = btauth::sign_request(cx.st.key, method_, path_, body_, cx.target.hotkey,
                                      next_request_nonce());
  encode_btauth_head(method_, path_, cx.host, h, body_.size(), c.head);
  request_id = h.nonce;
  out_->nonce = h.nonce;
  return body_;
}

}  // namespace bt::detail
