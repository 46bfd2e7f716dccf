// The interface between the dendrite's exchange (exchange.cpp: pool, connect, write, read with
// limits, deadline, retry, response signature, error mapping) and a dialect: what one kind of
// request (a synapse call, an Epistula call) encodes on each try and makes of the answer. The
// exchange has no branch on the dialect; a new dialect is one class implementing call_dialect
// plus the entry point that creates its call (dendrite.cpp). One that sends a caller's method,
// path and JSON body and hands the answer back as received derives from plain_request_dialect
// and writes only encode_try(), as the Epistula dialect does.
//
// Every member runs on the call's executor, one at a time. A member that finds the call cannot
// go on throws call_failure; the exchange then has the dialect record it (record_failure).
#pragma once

#include "dendrite_state.hpp"

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <string>
#include <string_view>

namespace bt::detail {

using http_response = boost::beast::http::response<boost::beast::http::string_body>;

/// What a dialect sees of its call.
struct call_context {
  dendrite_state& st;
  const axon_info& target;  ///< the axon addressed (outlives the call)
  double timeout;           ///< as the caller gave it (messages, the synapse's timeout field)
  std::string_view host;    ///< the Host header value; empty until the address checked out
};

/// What a session MAC (PROTOCOL 13) said about an answer (call_dialect::check_session_mac).
enum class session_mac {
  not_used,  ///< the request was not authenticated by a session
  absent,    ///< it was, and the answer carries no bt-response-mac
  verified,  ///< the answer's bt-response-mac verified (a wrong one throws)
};

class call_dialect {
 public:
  /// `streaming`: a 200 answer's body goes to deliver() as it arrives (PROTOCOL 7) instead of
  /// being read whole; any other answer is read whole and merged as a unary call's.
  explicit call_dialect(bool streaming) noexcept : streaming_(streaming) {}
  call_dialect(const call_dialect&) = delete;
  call_dialect& operator=(const call_dialect&) = delete;

  bool streaming() const noexcept { return streaming_; }

  /// The call's name in messages and metric labels (a synapse's name, an Epistula path); the
  /// exchange keeps the reference (read once, when the call is made).
  virtual const std::string& name() const noexcept = 0;

  /// Once, first of all (even for a call stopped before it began): sets what a failure reports
  /// against (the synapse's preset fields), and returns why this request cannot be sent at all
  /// (an invalid_address failure, which a stop before the start outranks), or empty.
  virtual std::string begin(const call_context& cx) = 0;

  /// Once per try, each with a fresh nonce: encodes the request head into `c.head` and returns
  /// the body to send after it (a view that lives until the next try). Sets `request_id` to what
  /// a response signature over this request names (PROTOCOL 5.15).
  virtual std::string_view encode_try(const call_context& cx, pooled_connection& c,
                                      std::string& request_id) = 0;

  /// A try whose signature is made off the I/O loop (a fan-out's call, with a signing pool):
  /// called before encode_try, it takes the try's fresh nonce and returns the bytes to sign
  /// (valid until encode_try), or empty when this try signs nothing (encode_try then does
  /// everything itself, as without a pool). After a non-empty return, the exchange hands the
  /// signature to set_try_signature() and calls encode_try, which sends it. A dialect that
  /// always signs in encode_try keeps these defaults.
  virtual std::string_view begin_signed_try(const call_context&, pooled_connection&) { return {}; }
  virtual void set_try_signature(const signature_bytes&) {}

  /// The final (non-1xx) head arrived on `c`. Returns true when the connection must not be
  /// pooled after this call (a session the axon refused, an invalid session accept).
  virtual bool on_final_head(const call_context&, pooled_connection&, const http_response&) {
    return false;
  }

  /// For a unary answer, before its response signature is looked at: the session MAC check of a
  /// request a session authenticated (throws call_failure when present and wrong).
  virtual session_mac check_session_mac(const call_context&, const pooled_connection&,
                                        std::string_view /*request_id*/,
                                        const http_response&) const {
    return session_mac::not_used;
  }

  /// Streaming only: body bytes in arrival order, then the end of a complete body. An exception
  /// ends the call (the exchange maps it to malformed_response).
  virtual void deliver(std::string_view) {}
  virtual void end_stream() {}

  /// The answer is complete and its signature accepted (`verified`: it verified over this
  /// request). merge: a whole answer; merge_stream: a streamed 200's head and trailers.
  /// Throw call_failure when the answer is malformed for this dialect.
  virtual void merge(const call_context& cx, http_response& res, bool verified) = 0;
  virtual void merge_stream(const call_context&, const http_response&) {}
  /// Seconds from the call's start to the merged answer.
  virtual void set_process_time(double seconds) = 0;

  /// Records a failure in the caller's result (the failure table of docs/dendrite.md).
  virtual void record_failure(const call_context& cx, dendrite_errc code,
                              std::string_view detail) = 0;
  /// The status the call completed with, and its message (the metrics and the log line).
  virtual int final_status() const = 0;
  virtual std::string_view final_message() const = 0;

 protected:
  ~call_dialect() = default;  // owned by the concrete call (dialect_call), never deleted here

 private:
  bool streaming_;
};

}  // namespace bt::detail
