#include "transport/request_parser.hpp"

#include <bt/detail/text.hpp>
#include <bt/session_auth.hpp>

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>

namespace bt::detail {

void request_parser::on_field_impl(boost::beast::http::field name,
                                   boost::beast::string_view name_string,
                                   boost::beast::string_view value, boost::beast::error_code& ec) {
  if (is_header_done()) {  // a trailer field: counted, then ignored (nothing reads trailers)
    spend(name_string.size() + value.size() + 4, ec);
    return;
  }
  if (name == boost::beast::http::field::host) ++host_fields_;
  if (name == boost::beast::http::field::expect && boost::beast::iequals(value, "100-continue"))
    expect_continue_ = true;
  // Only `Transfer-Encoding: chunked` frames a body we can read. Beast ignores a coding list that
  // does not end in chunked (the body would then be taken as empty and the rest of the bytes as
  // the next request: the request-smuggling shape), and we decode no other coding. RFC 9112
  // 6.3 asks for 400 and a close; the session answers bad_http (axon_errc.hpp) and closes.
  if (name == boost::beast::http::field::transfer_encoding &&
      !iequals(trim_ows(std::string_view(value.data(), value.size())), "chunked")) {
    ec = boost::beast::http::error::bad_transfer_encoding;
    return;
  }
  const std::string_view field(name_string.data(), name_string.size());
  if (iequals(field, session_auth::offer_header) || iequals(field, session_auth::request_header)) {
    const bool offer = field.size() == session_auth::offer_header.size();
    std::string& slot = offer ? session_.offer : session_.mac;
    if ((offer ? session_.offers : session_.macs)++ == 0) slot.assign(value.data(), value.size());
    return;
  }
  if (epistula_headers::is_epistula(field)) {
    epistula_.feed(field, std::string_view(value.data(), value.size()));
    return;
  }
  if (btauth::header_fields::is_btauth(field)) {
    btauth_.feed(field, std::string_view(value.data(), value.size()));
    return;
  }
  // The codec keeps the first error and ignores the rest; the pipeline acts on it only after the
  // route matched (an unknown route is 404 whatever its headers look like).
  reader_.feed(field, std::string_view(value.data(), value.size()));
}

std::size_t request_parser::append(boost::beast::string_view data, boost::beast::error_code& ec) {
  if (data.size() > max_body_ - body_.size()) {
    ec = boost::beast::http::error::body_limit;
    return 0;
  }
  body_.append(data.data(), data.size());
  return data.size();
}

}  // namespace bt::detail
