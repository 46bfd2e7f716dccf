// The shared half of the plain-request dialects (plain_request_dialect.hpp).
#include "plain_request_dialect.hpp"

#include <utility>

namespace bt::detail {
namespace {

/// The path without its leading '/' and its query: a call's name in messages and metric labels
/// (so that a query that varies per request makes no new label).
std::string call_name(std::string_view path) {
  if (path.starts_with('/')) path.remove_prefix(1);
  return std::string(path.substr(0, path.find('?')));
}

}  // namespace

plain_request_dialect::plain_request_dialect(std::string method, std::string path, std::string body,
                                             http_call_response* out)
    : call_dialect(false),
      method_(std::move(method)),
      path_(std::move(path)),
      body_(std::move(body)),
      out_(out),
      name_(call_name(path_)) {}

std::string plain_request_dialect::begin(const call_context&) {
  return plain_target_problem(method_, path_);
}

void plain_request_dialect::merge(const call_context&, http_response& res, bool verified) {
  http_call_response& o = *out_;
  o.status = static_cast<int>(res.result_int());
  o.status_message = valid_utf8(res.reason());
  o.error.reset();
  o.headers.clear();
  for (const auto& f : res) o.headers.emplace_back(f.name_string(), valid_utf8(f.value()));
  o.body = std::move(res.body());
  o.response_verified = verified;
}

void plain_request_dialect::record_failure(const call_context& cx, dendrite_errc code,
                                           std::string_view detail) {
  http_call_response& o = *out_;
  o.error = code;
  o.status = dendrite_status(code);
  o.status_message =
      dendrite_status_message(code, cx.target.ip, cx.target.port, name_, cx.timeout, detail);
  o.headers.clear();
  o.body.clear();
  o.process_time.reset();
  o.response_verified = false;
}

}  // namespace bt::detail
