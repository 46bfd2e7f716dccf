// The "bt.chain" error category and bt::chain_decode_error.
#include <bt/chain/chain_error.hpp>

#include <utility>

namespace bt {
namespace {

class chain_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "bt.chain"; }
  std::string message(int ev) const override {
    switch (static_cast<chain_errc>(ev)) {
      case chain_errc::truncated:
        return "truncated SCALE input";
      case chain_errc::trailing_bytes:
        return "trailing bytes after SCALE value";
      case chain_errc::invalid_compact:
        return "invalid compact integer";
      case chain_errc::invalid_bool:
        return "invalid bool";
      case chain_errc::invalid_option:
        return "invalid Option tag";
      case chain_errc::too_long:
        return "length too long";
      case chain_errc::invalid_value:
        return "invalid value";
      case chain_errc::rpc_error:
        return "JSON-RPC error";
      case chain_errc::closed:
        return "connection closed";
      case chain_errc::malformed_frame:
        return "malformed frame";
      case chain_errc::frame_too_large:
        return "frame too large";
      case chain_errc::timeout:
        return "request timed out";
      case chain_errc::bad_endpoint:
        return "bad endpoint";
      case chain_errc::unknown_pallet:
        return "unknown pallet";
      case chain_errc::unknown_call:
        return "unknown call";
      case chain_errc::unknown_extension:
        return "unknown signed extension carrying data";
      case chain_errc::bad_metadata:
        return "bad runtime metadata";
      case chain_errc::invalid_argument:
        return "invalid argument";
    }
    return "unknown bt.chain error";
  }
};

}  // namespace

const std::error_category& chain_category() noexcept {
  static const chain_category_impl c;
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
