// The synapse dialect (PROTOCOL 4-7): a bittensor synapse POSTed as JSON to /Name, signed, or
// authenticated by the connection's session (PROTOCOL 13); the answer merged into the caller's
// synapse, or, for call_stream, its 200 body handed to the type's stream parser.
#pragma once

#include "call_dialect.hpp"

#include <bt/detail/dendrite_stream.hpp>

#include <cstddef>
#include <optional>

namespace bt::detail {

class synapse_dialect final : public call_dialect {
 public:
  /// `ref.object` and `sink` (set: a streaming call) outlive the call.
  synapse_dialect(synapse_ref ref, stream_sink* sink) noexcept
      : call_dialect(sink != nullptr), ref_(ref), sink_(sink) {}

  const std::string& name() const noexcept override { return ref_.descriptor->name(); }
  std::string begin(const call_context& cx) override;
  std::string_view encode_try(const call_context& cx, pooled_connection& c,
                              std::string& request_id) override;
  std::string_view begin_signed_try(const call_context& cx, pooled_connection& c) override;
  void set_try_signature(const signature_bytes& sig) override { signature_ = sig; }
  bool on_final_head(const call_context& cx, pooled_connection& c,
                     const http_response& res) override;
  session_mac check_session_mac(const call_context& cx, const pooled_connection& c,
                                std::string_view request_id,
                                const http_response& res) const override;
  void deliver(std::string_view bytes) override { sink_->push(*ref_.object, bytes); }
  void end_stream() override { sink_->end(*ref_.object); }
  void merge(const call_context& cx, http_response& res, bool verified) override;
  void merge_stream(const call_context& cx, const http_response& res) override;
  void set_process_time(double seconds) override { ref_.object->dendrite.process_time = seconds; }
  void record_failure(const call_context& cx, dendrite_errc code, std::string_view detail) override;
  int final_status() const override;
  std::string_view final_message() const override;

 private:
  /// What one request does about sessions (dendrite_options::session, PROTOCOL 13).
  enum class session_use {
    none,   ///< an ordinary signed request
    offer,  ///< signed, and offers a session (the first request on a connection)
    mac,    ///< authenticated by the connection's session (bt-session), not signed
  };

  session_use choose_session_use(const call_context& cx, const pooled_connection& c) const;
  static std::string_view dendrite_ip(const call_context& cx, const pooled_connection& c);
  void add_session_header(const call_context& cx, pooled_connection& c) const;

  synapse_ref ref_;
  stream_sink* sink_;
  /// What the request last sent did about sessions (set by encode_try()).
  session_use session_use_ = session_use::none;
  /// Set by begin_signed_try(): where the body hash begins in the connection's scratch (the
  /// message signed off the loop), until encode_try() sends the try with signature_.
  std::optional<std::size_t> begun_hash_at_;
  signature_bytes signature_{};
};

}  // namespace bt::detail
