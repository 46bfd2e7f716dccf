// bt::subtensor: reading a subnet's metagraph from a subtensor node (Python's
// `subtensor.metagraph(netuid)`).
//
//   bt::subtensor st(*bt::resolve_endpoint_from_env("", "local"));
//   bt::metagraph m = st.get_metagraph(1);               // at the head; blocking, throws
//   bt::metagraph old = st.get_metagraph(1, 6852690);    // at block 6852690
//   st.async_metagraph(1, std::nullopt, [](bt::error e, bt::metagraph m) { ... });
//   bt::metagraph m = bt::read_metagraph("ws://127.0.0.1:9944", 1);   // one read, one call
//
// One metagraph is read at ONE block: the block is pinned first (chain_getHead and
// chain_getHeader for its number; or chain_getBlockHash [N]), then both runtime calls
// (state_call NeuronInfoRuntimeApi_get_neurons_lite and SubnetInfoRuntimeApi_get_subnet_state,
// the netuid as a little-endian u16) are sent together at that block hash, on one connection.
// A JSON-RPC error from get_subnet_state (a runtime without it) gives the fallback stake of
// make_metagraph (metagraph::stake says so); any other failure of either call fails the read.
//
// Errors (bt::error, code a chain_errc): `what` names the step ("chain_getBlockHash",
// "state_call NeuronInfoRuntimeApi_get_neurons_lite", and for a decode failure the field path
// after it), `detail` the problem, with the decode offset and the endpoint URL.
#pragma once

#include <bt/chain/endpoint.hpp>
#include <bt/chain/metagraph.hpp>
#include <bt/chain/rpc_client.hpp>
#include <bt/error.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/async_result.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace bt {

/// A block a read is pinned to.
struct pinned_block {
  std::uint64_t number = 0;
  std::string hash;  ///< "0x" + 64 hex digits
};

/// What the blocking members throw; error() is what the asynchronous form reports.
class subtensor_error : public std::runtime_error {
 public:
  explicit subtensor_error(bt::error e);
  const bt::error& error() const noexcept { return error_; }
  std::error_code code() const noexcept { return error_.code; }

 private:
  bt::error error_;
};

class subtensor {
 public:
  /// A client of its own (rpc_client with its own I/O thread).
  explicit subtensor(endpoint ep, rpc_client_options opt = {});
  /// Shares a client (several readers on one connection).
  explicit subtensor(std::shared_ptr<rpc_client> client);

  rpc_client& client() noexcept { return *client_; }
  const endpoint& get_endpoint() const noexcept { return client_->get_endpoint(); }

  /// Completion `void(bt::error, bt::pinned_block)`: the head (no number) or block `number`.
  /// A block the node does not have (chain_getBlockHash gives null) is chain_errc::invalid_value.
  template <boost::asio::completion_token_for<void(bt::error, pinned_block)> Token>
  auto async_pin_block(std::optional<std::uint64_t> number, Token&& token) {
    return boost::asio::async_initiate<Token, void(bt::error, pinned_block)>(
        [this](auto handler, std::optional<std::uint64_t> number) {
          async_pin_impl(number, pin_handler(std::move(handler)));
        },
        token, number);
  }

  /// Completion `void(bt::error, bt::metagraph)`: the metagraph of `netuid` at the head or at
  /// block `number` (the metagraph is empty when the error is set).
  template <boost::asio::completion_token_for<void(bt::error, metagraph)> Token>
  auto async_metagraph(std::uint16_t netuid, std::optional<std::uint64_t> number, Token&& token) {
    return boost::asio::async_initiate<Token, void(bt::error, metagraph)>(
        [this](auto handler, std::uint16_t netuid, std::optional<std::uint64_t> number) {
          async_metagraph_impl(netuid, number, metagraph_handler(std::move(handler)));
        },
        token, netuid, number);
  }

  /// Blocking forms: throw subtensor_error. Not on the client's own executor.
  pinned_block pin_block(std::optional<std::uint64_t> number = std::nullopt);
  metagraph get_metagraph(std::uint16_t netuid, std::optional<std::uint64_t> number = std::nullopt);

 private:
  using pin_handler = boost::asio::any_completion_handler<void(bt::error, pinned_block)>;
  using metagraph_handler = boost::asio::any_completion_handler<void(bt::error, metagraph)>;
  void async_pin_impl(std::optional<std::uint64_t> number, pin_handler handler);
  void async_metagraph_impl(std::uint16_t netuid, std::optional<std::uint64_t> number,
                            metagraph_handler handler);
  std::shared_ptr<rpc_client> client_;
};

/// One blocking read of `netuid`'s metagraph at the head from `node`: a ws:// or wss:// URL, or a
/// network name of network_url ("finney", "test", "local"). A client of its own, closed on
/// return; for repeated reads keep a bt::subtensor instead. Throws subtensor_error (a bad `node`
/// is chain_errc::bad_endpoint). Not on an executor that must keep running meanwhile.
metagraph read_metagraph(std::string_view node, std::uint16_t netuid);

/// The hex argument of a runtime call taking a NetUid: the little-endian u16 ("0x0100" for 1).
std::string netuid_call_arg(std::uint16_t netuid);

}  // namespace bt
