// The failure table of bt::dendrite (dendrite_error.hpp): one place mapping causes to statuses.
#include <bt/dendrite_error.hpp>

#include <bt/error_category.hpp>
#include <bt/python_str.hpp>
#include <bt/synapse.hpp>

#include <array>
#include <string>

namespace bt {
namespace {

constexpr std::array<errc_message<dendrite_errc>, 9> dendrite_messages{{
    {dendrite_errc::connect_failed, "connect failed"},
    {dendrite_errc::timeout, "deadline passed"},
    {dendrite_errc::disconnected, "peer disconnected before the response head"},
    {dendrite_errc::payload_incomplete, "peer disconnected inside the response body"},
    {dendrite_errc::response_too_large, "response exceeds the configured limit"},
    {dendrite_errc::malformed_response, "malformed response"},
    {dendrite_errc::invalid_address, "invalid axon address"},
    {dendrite_errc::cancelled, "request cancelled"},
    {dendrite_errc::response_unauthenticated, "response not authenticated"},
}};
static_assert(is_dense_table(dendrite_messages, dendrite_errc::response_unauthenticated),
              "one message per dendrite_errc, in order");

}  // namespace

const std::error_category& dendrite_category() noexcept {
  static const enum_error_category c("bt.dendrite", dendrite_messages, "unknown dendrite error");
  return c;
}

int dendrite_status(dendrite_errc e) noexcept {
  switch (e) {
    case dendrite_errc::connect_failed:
      return 503;
    case dendrite_errc::timeout:
      return 408;
    case dendrite_errc::disconnected:
      return 503;
    case dendrite_errc::payload_incomplete:
      return 400;
    case dendrite_errc::response_too_large:
      return 422;
    case dendrite_errc::malformed_response:
      return 422;
    case dendrite_errc::invalid_address:
      return 422;
    case dendrite_errc::cancelled:
      return 503;
    case dendrite_errc::response_unauthenticated:
      return 421;  // Misdirected Request: the answer may not come from the addressed miner
  }
  return 422;  // Python's DENDRITE_DEFAULT_ERROR
}

std::string dendrite_status_message(dendrite_errc e, std::string_view axon_ip,
                                    std::int64_t axon_port, std::string_view name, double timeout,
                                    std::string_view detail) {
  std::string m;
  switch (e) {
    case dendrite_errc::connect_failed:
      m = "Service unavailable at ";
      m.append(axon_ip).append(":").append(std::to_string(axon_port)).append("/").append(name);
      return m;
    case dendrite_errc::timeout:
      m = "Request timeout after ";
      append_python_float(timeout, m);
      m.append(" seconds");
      return m;
    case dendrite_errc::disconnected:
      m = "Service disconnected: ";
      m.append(detail.empty() ? std::string_view("Server disconnected") : detail);
      return m;
    case dendrite_errc::payload_incomplete:
      m = "Payload error: ";
      m.append(detail.empty() ? std::string_view("Response payload is not completed") : detail);
      return m;
    case dendrite_errc::response_too_large:
    case dendrite_errc::malformed_response:
    case dendrite_errc::invalid_address:
      m = "Failed to parse response: ";
      m.append(detail);
      return m;
    case dendrite_errc::cancelled:
      m = "Request cancelled";
      if (!detail.empty()) m.append(": ").append(detail);
      return m;
    case dendrite_errc::response_unauthenticated:
      m = "Response not authenticated: ";
      m.append(detail);
      return m;
  }
  m = "Failed to parse response: ";
  m.append(detail);
  return m;
}

void set_dendrite_failure(synapse& s, std::string_view name, dendrite_errc e,
                          std::string_view detail) {
  s.dendrite.status_code = dendrite_status(e);
  s.dendrite.status_message =
      dendrite_status_message(e, s.axon.ip.value_or("None"), s.axon.port.value_or(0), name,
                              s.timeout.value_or(12.0), detail);
}

}  // namespace bt
