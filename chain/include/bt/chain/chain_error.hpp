// bt::chain_errc: every failure bt::chain reports, as std::error_code values of the "bt.chain"
// category, and bt::chain_decode_error, the exception the SCALE reader throws.
#pragma once

#include <bt/error.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace bt {

enum class chain_errc {
  // SCALE decoding
  truncated = 1,    ///< the input ends inside a value
  trailing_bytes,   ///< bytes are left after the value that must fill the input
  invalid_compact,  ///< a compact integer that is non-canonical or too large for its type
  invalid_bool,     ///< a bool byte other than 0 or 1
  invalid_option,   ///< an Option tag other than 0 or 1
  too_long,         ///< a length prefix larger than the bytes left, or beyond a sanity bound
  invalid_value,    ///< a well-formed value outside its domain (e.g. vectors of unequal length)
  // JSON-RPC client (rpc_client.hpp)
  rpc_error,        ///< the node answered with a JSON-RPC error object
  closed,           ///< the connection was lost or could not be made
  malformed_frame,  ///< a frame that is not a JSON-RPC response
  frame_too_large,  ///< a frame beyond the client's size limit
  timeout,          ///< no answer within the request timeout
  bad_endpoint,     ///< an endpoint URL or network name that cannot be used
  // Runtime metadata and extrinsics
  unknown_pallet,     ///< the runtime's metadata has no pallet of that name
  unknown_call,       ///< the pallet has no call of that name
  unknown_extension,  ///< a signed extension this client cannot encode carries data
  bad_metadata,       ///< runtime metadata that is malformed or not of a supported version
  invalid_argument,   ///< an argument the chain would refuse (port 0, loopback address, ...)
};

const std::error_category& chain_category() noexcept;

inline std::error_code make_error_code(chain_errc e) noexcept {
  return {static_cast<int>(e), chain_category()};
}

/// What the SCALE reader and the decoders throw: decoding is all-or-nothing. error().what is
/// the field path ("NeuronInfoLite[17].axon_info.port"), error().detail the problem and the
/// offset ("truncated at offset 5123"); what() is error().message().
class chain_decode_error : public std::runtime_error {
 public:
  chain_decode_error(chain_errc code, std::string field, std::string problem, std::size_t offset);

  const bt::error& error() const noexcept { return error_; }
  std::error_code code() const noexcept { return error_.code; }
  /// Byte offset (from the start of the reader's input) where the failing value starts or
  /// where the input ran out.
  std::size_t offset() const noexcept { return offset_; }
  /// The same error with `prefix` put before the field path ("NeuronInfoLite[17]" + "." +
  /// "axon_info.port"), so that decoders name the enclosing element without building strings
  /// on the success path.
  chain_decode_error with_prefix(std::string_view prefix) const;

 private:
  chain_decode_error(bt::error e, std::size_t offset);
  bt::error error_;
  std::size_t offset_;
};

}  // namespace bt

template <>
struct std::is_error_code_enum<bt::chain_errc> : std::true_type {};
