// The Epistula dialect (PROTOCOL 12, dendrite::epistula_call): any method and path, a JSON body
// signed with Epistula headers for the addressed hotkey, the answer handed back as received.
#pragma once

#include "call_dialect.hpp"

namespace bt::detail {

class epistula_dialect final : public call_dialect {
 public:
  /// `out` outlives the call.
  epistula_dialect(std::string method, std::string path, std::string body, epistula_response* out);

  const std::string& name() const noexcept override { return name_; }
  std::string request_problem() const override;
  std::string_view encode_try(const call_context& cx, pooled_connection& c,
                              std::string& request_id) override;
  void merge(const call_context& cx, http_response& res, bool verified) override;
  void set_process_time(double seconds) override { out_->process_time = seconds; }
  void record_failure(const call_context& cx, dendrite_errc code, std::string_view detail) override;
  int final_status() const override { return out_->status; }
  std::string_view final_message() const override { return out_->status_message; }

 private:
  std::string method_, path_, body_;
  std::string name_;  ///< the path without its leading '/': messages and metric labels
  epistula_response* out_;
};

}  // namespace bt::detail
