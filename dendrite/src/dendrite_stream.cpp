// The final-synapse merge of a streamed response (detail/dendrite_stream.hpp). The streaming read
// loop itself lives in dendrite.cpp's call operation, which it shares with call().
#include <bt/detail/dendrite_stream.hpp>

#include <bt/header_codec.hpp>

namespace bt::detail {
namespace {

template <class V>
void take_if_set(std::optional<V>& to, const std::optional<V>& from) {
  if (from) to = *from;
}

}  // namespace

std::error_code apply_stream_headers(synapse& s, const boost::beast::http::fields& headers,
                                     std::string& detail) {
  synapse h;
  if (error e = from_headers(headers, h); e) {
    detail = e.message();
    return make_error_code(dendrite_errc::malformed_response);
  }
  take_if_set(s.axon.status_code, h.axon.status_code);
  take_if_set(s.axon.status_message, h.axon.status_message);
  take_if_set(s.axon.process_time, h.axon.process_time);
  take_if_set(s.axon.version, h.axon.version);
  take_if_set(s.axon.nonce, h.axon.nonce);
  take_if_set(s.axon.uuid, h.axon.uuid);
  take_if_set(s.axon.signature, h.axon.signature);
  s.dendrite.status_code = s.axon.status_code;
  s.dendrite.status_message = s.axon.status_message;
  return {};
}

}  // namespace bt::detail
