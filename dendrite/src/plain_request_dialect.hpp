// What the dialects of plain HTTP requests share (Epistula, PROTOCOL 12; btauth/1, PROTOCOL 14;
// any later one that signs headers over a method, a path and a JSON body): the request is a
// method, a path and a body the caller gave; the answer is handed back as received (status,
// headers, body) in an http_call_response. A concrete dialect adds only encode_try(): how a try
// is signed.
#pragma once

#include "call_dialect.hpp"

namespace bt::detail {

class plain_request_dialect : public call_dialect {
 public:
  const std::string& name() const noexcept final { return name_; }
  std::string begin(const call_context& cx) final;
  void merge(const call_context& cx, http_response& res, bool verified) final;
  void set_process_time(double seconds) final { out_->process_time = seconds; }
  void record_failure(const call_context& cx, dendrite_errc code, std::string_view detail) final;
  int final_status() const final { return out_->status; }
  std::string_view final_message() const final { return out_->status_message; }

 protected:
  /// `out` outlives the call.
  plain_request_dialect(std::string method, std::string path, std::string body,
                        http_call_response* out);
  ~plain_request_dialect() = default;

  std::string method_, path_, body_;
  http_call_response* out_;

 private:
  std::string name_;  ///< the path without its leading '/' and its query: messages and labels
};

}  // namespace bt::detail
