#include "request_parser.hpp"

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>

namespace bt::detail {

void request_parser::on_field_impl(boost::beast::http::field name,
                                   boost::beast::string_view name_string,
                                   boost::beast::string_view value, boost::beast::error_code&) {
  if (name == boost::beast::http::field::expect && boost::beast::iequals(value, "100-continue"))
    expect_continue_ = true;
  // The codec keeps the first error and ignores the rest; the pipeline acts on it only after the
  // route matched (an unknown route is 404 whatever its headers look like).
  reader_.feed(std::string_view(name_string.data(), name_string.size()),
               std::string_view(value.data(), value.size()));
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
