// The synapse dialect (synapse_dialect.hpp): encoding with the codec of dendrite_codec.cpp, the
// session offer and MAC (PROTOCOL 13, client_session.hpp), and the merge of the answer.
#include "synapse_dialect.hpp"

#include <bt/detail/text.hpp>
#include <bt/request_nonce.hpp>
#include <bt/session_auth.hpp>

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

namespace bt::detail {

using steady = std::chrono::steady_clock;

std::string synapse_dialect::begin(const call_context& cx) {
  preset_request(*ref_.object, cx.target, cx.timeout, cx.st.identity(), cx.st.opt.external_ip);
  return {};
}

std::string_view synapse_dialect::begin_signed_try(const call_context& cx, pooled_connection& c) {
  dendrite_state& st = cx.st;
  session_use_ = choose_session_use(cx, c);
  const request_identity id = st.identity();
  // Nothing to sign: unsigned (insecure_skip_signing), or authenticated by the session's MAC.
  if (!id.key || session_use_ == session_use::mac) return {};
  begun_hash_at_ = begin_request(*ref_.descriptor, *ref_.object, dendrite_ip(cx, c),
                                 next_request_nonce(), id, c.scratch);
  return c.scratch;
}

std::string_view synapse_dialect::encode_try(const call_context& cx, pooled_connection& c,
                                             std::string& request_id) {
  dendrite_state& st = cx.st;
  synapse& s = *ref_.object;
  if (const auto hash_at = std::exchange(begun_hash_at_, std::nullopt)) {
    // begin_signed_try() took the nonce and chose the session use; the pool signed.
    finish_request(*ref_.descriptor, s, &signature_, cx.host, c.scratch, *hash_at, c.head, c.body);
  } else {
    session_use_ = choose_session_use(cx, c);
    request_identity id = st.identity();
    if (session_use_ == session_use::mac) id.key = nullptr;  // the MAC replaces the signature
    encode_request(*ref_.descriptor, s, dendrite_ip(cx, c), next_request_nonce(), id, cx.host,
                   c.scratch, c.head, c.body);
  }
  if (session_use_ != session_use::none) add_session_header(cx, c);
  // The request id a response signature names: "{dendrite.nonce}.{dendrite.uuid}".
  request_id.clear();
  request_id.reserve(number_buffer_size + 1 + st.uuid.size());
  append_int(*s.dendrite.nonce, request_id);
  request_id.push_back('.');
  request_id.append(st.uuid);
  return c.body;
}

/// The bt_header_dendrite_ip to send: the connection's local address unless external_ip is set
/// (preset_request put that one in already).
std::string_view synapse_dialect::dendrite_ip(const call_context& cx, const pooled_connection& c) {
  return cx.st.opt.external_ip.empty() ? std::string_view(c.local_ip) : std::string_view();
}

/// What the request on connection `c` does about sessions (PROTOCOL 13).
synapse_dialect::session_use synapse_dialect::choose_session_use(const call_context& cx,
                                                                 const pooled_connection& c) const {
  if (!cx.st.opt.session || cx.st.opt.insecure_skip_signing) return session_use::none;
  const client_session& cs = c.session;
  if (cs.st == client_session::state::none) return session_use::offer;
  if (cs.usable_for(cx.target.hotkey, steady::now())) return session_use::mac;
  return session_use::none;  // declined, or a session with another axon hotkey
}

/// Adds the session header (an offer, or the request's MAC over the canonical message that
/// encode_request left in the connection's scratch buffer) to the encoded head.
void synapse_dialect::add_session_header(const call_context& cx, pooled_connection& c) const {
  dendrite_state& st = cx.st;
  client_session& cs = c.session;
  std::string_view name;
  std::string value;
  if (session_use_ == session_use::offer) {
    const std::string nonce = std::to_string(*ref_.object->dendrite.nonce);
    cs.offer.emplace(st.key,
                     session_auth::request_identity{.nonce = nonce,
                                                    .dendrite_hotkey = st.key.ss58_address(),
                                                    .axon_hotkey = cx.target.hotkey,
                                                    .uuid = st.uuid});
    cs.st = client_session::state::offered;
    cs.axon_hotkey = cx.target.hotkey;
    name = session_auth::offer_header;
    value = cs.offer->header_value();
    st.sessions_offered.fetch_add(1, std::memory_order_relaxed);
  } else {
    ++cs.used;
    name = session_auth::request_header;
    value = session_auth::request_mac(*cs.keys, c.scratch);
    st.session_requests.fetch_add(1, std::memory_order_relaxed);
  }
  c.head.resize(c.head.size() - 2);  // before the empty line that ends the head
  c.head.append(name).append(": ").append(value).append("\r\n\r\n");
}

/// To an offer: a valid bt-session-accept establishes the session; none (a Python axon, sessions
/// off) declines it for good; an invalid one closes the connection after this call, whose answer
/// is judged as without sessions (by its response signature). To a MAC'd request: a 401 means
/// the axon refused the session (expired by its clock, say), so the connection is closed and the
/// next call starts afresh on another.
bool synapse_dialect::on_final_head(const call_context& cx, pooled_connection& c,
                                    const http_response& res) {
  const bool refused = session_use_ == session_use::mac && res.result_int() == 401;
  if (session_use_ != session_use::offer) return refused;
  client_session& cs = c.session;
  cs.st = client_session::state::declined;
  const auto [first, last] = res.equal_range(session_auth::accept_header);
  if (first == last) {
    cs.offer.reset();
    return false;
  }
  std::string why = "more than one bt-session-accept header";
  std::optional<session_auth::session_keys> keys;
  if (std::next(first) == last) keys = std::move(*cs.offer).complete(first->value(), &why);
  cs.offer.reset();
  if (!keys) {
    cx.st.sessions_rejected.fetch_add(1, std::memory_order_relaxed);
    if (cx.st.log) cx.st.log->warn("dendrite | {} | invalid session accept: {}", cx.host, why);
    return true;
  }
  const session_auth::bounds b = keys->limits();
  cs.keys = std::move(keys);
  cs.st = client_session::state::established;
  cs.used = 1;  // the offer's request counts
  cs.max_requests = b.max_requests;
  // (a lifetime beyond ten years is as good as forever, and keeps the sum inside the clock)
  cs.expires = steady::now() + std::chrono::seconds(std::min<std::uint64_t>(
                                   b.lifetime_s, std::uint64_t{10} * 365 * 86400));
  cx.st.sessions_established.fetch_add(1, std::memory_order_relaxed);
  return false;
}

/// A session answer's bt-response-mac, checked under the session's key.
session_mac synapse_dialect::check_session_mac(const call_context& cx, const pooled_connection& c,
                                               std::string_view request_id,
                                               const http_response& res) const {
  if (session_use_ != session_use::mac) return session_mac::not_used;
  const auto [first, last] = res.equal_range(session_auth::response_mac_header);
  if (first == last) return session_mac::absent;
  if (std::next(first) != last)
    throw call_failure{dendrite_errc::response_unauthenticated,
                       "more than one bt-response-mac header"};
  std::string why = session_auth::check_response_mac(
      *c.session.keys, first->value(), cx.st.key.ss58_address(), request_id,
      static_cast<int>(res.result_int()), res.body(), cx.target.hotkey);
  if (!why.empty())
    throw call_failure{dendrite_errc::response_unauthenticated, "bt-response-mac: " + why};
  return session_mac::verified;
}

void synapse_dialect::merge(const call_context&, http_response& res, bool) {
  std::string detail;
  if (auto e = apply_response(ref_, res.result_int(), res, res.body(), detail); e)
    throw call_failure{static_cast<dendrite_errc>(e.value()), std::move(detail)};
}

void synapse_dialect::merge_stream(const call_context&, const http_response& res) {
  std::string detail;
  if (auto e = apply_stream_headers(*ref_.object, res, detail); e)
    throw call_failure{static_cast<dendrite_errc>(e.value()), std::move(detail)};
}

void synapse_dialect::record_failure(const call_context&, dendrite_errc code,
                                     std::string_view detail) {
  set_dendrite_failure(*ref_.object, name(), code, detail);
}

int synapse_dialect::final_status() const {
  return static_cast<int>(ref_.object->dendrite.status_code.value_or(0));
}

std::string_view synapse_dialect::final_message() const {
  const auto& m = ref_.object->dendrite.status_message;
  return m ? std::string_view(*m) : std::string_view();
}

}  // namespace bt::detail
