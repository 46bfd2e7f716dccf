// The "bt.chain" error category and bt::chain_decode_error.
#include <bt/chain/chain_error.hpp>

#include <bt/error_category.hpp>

#include <array>

#include <utility>

namespace bt {
namespace {

constexpr std::array<errc_message<chain_errc>, 18> chain_messages{{
    {chain_errc::truncated, "truncated SCALE input"},
    {chain_errc::trailing_bytes, "trailing bytes after SCALE value"},
    {chain_errc::invalid_compact, "invalid compact integer"},
    {chain_errc::invalid_bool, "invalid bool"},
    {chain_errc::invalid_option, "invalid Option tag"},
    {chain_errc::too_long, "length too long"},
    {chain_errc::invalid_value, "invalid value"},
    {chain_errc::rpc_error, "JSON-RPC error"},
    {chain_errc::closed, "connection closed"},
    {chain_errc::malformed_frame, "malformed frame"},
    {chain_errc::frame_too_large, "frame too large"},
    {chain_errc::timeout, "request timed out"},
    {chain_errc::bad_endpoint, "bad endpoint"},
    {chain_errc::unknown_pallet, "unknown pallet"},
    {chain_errc::unknown_call, "unknown call"},
    {chain_errc::unknown_extension, "unknown signed extension carrying data"},
    {chain_errc::bad_metadata, "bad runtime metadata"},
    {chain_errc::invalid_argument, "invalid argument"},
}};
static_assert(is_dense_table(chain_messages, chain_errc::invalid_argument),
              "one message per chain_errc, in order");

}  // namespace

const std::error_category& chain_category() noexcept {
  static const enum_error_category c("bt.chain", chain_messages, "unknown bt.chain error");
  return c;
}

chain_decode_error::chain_decode_error(chain_errc code, std::string field, std::string problem,
                                       std::size_t offset)
    : chain_decode_error(bt::error{code, std::move(field),
                                   std::move(problem) + " at offset " + std::to_string(offset)},
                         offset) {}

chain_decode_error::chain_decode_error(bt::error e, std::size_t offset)
    : std::runtime_error(e.message()), error_(std::move(e)), offset_(offset) {}

chain_decode_error chain_decode_error::with_prefix(std::string_view prefix) const {
  bt::error e = error_;
  if (e.what.empty()) {
    e.what = std::string(prefix);
  } else if (e.what.front() == '[') {  // an element of an unnamed inner Vec: "a[2][3]"
    e.what = std::string(prefix) + e.what;
  } else {
    e.what = std::string(prefix) + "." + e.what;
  }
  return chain_decode_error(std::move(e), offset_);
}

}  // namespace bt
