// Publishing an axon: SubtensorModule.serve_axon built from what the node says (head, genesis,
// runtime version, metadata, nonce), signed by the hotkey, and optionally submitted and
// confirmed from storage.
//
// Contract:
//  * prepare_serve_axon reads, in order: chain_getHeader [] (the head's number and hash),
//    chain_getBlockHash [era birth] (the block the mortal era starts at, period 128 as
//    bittensor uses), chain_getBlockHash [0] (genesis), state_getRuntimeVersion [era block],
//    state_getMetadata [era block], system_accountNextIndex [hotkey SS58]; it submits nothing.
//  * submit_serve_axon sends author_submitExtrinsic, then re-reads SubtensorModule.Axons(netuid,
//    hotkey) with state_getStorage every poll interval until the stored AxonInfo has our
//    version, ip, port, ip_type and protocol, or the timeout passes (chain_errc::timeout).
//  * Errors propagate as thrown: bt::rpc_call_error (a JSON-RPC error, closed connection,
//    timeout: it names the method), bt::chain_decode_error (an answer or metadata that does not
//    decode: field and offset), std::system_error with a chain_errc (invalid_argument for
//    arguments the chain would refuse, unknown_pallet/call/extension, bad_metadata, timeout).
#pragma once

#include <bt/chain/extrinsic.hpp>
#include <bt/chain/rpc_client.hpp>
#include <bt/json.hpp>
#include <bt/keypair.hpp>

#include <chrono>
#include <cstdint>
#include <string>

namespace bt {

/// bittensor's mortal era length for serving (blocks).
inline constexpr std::uint64_t serve_axon_era_period = 128;

struct serve_axon_plan {
  serve_axon_args args;
  signing_context context;
  std::uint64_t head_block = 0;
  std::uint64_t era_block = 0;  ///< era.birth(head): the block whose hash is signed
  std::uint8_t metadata_version = 0;
  signed_extrinsic extrinsic;
};

/// Reads the chain state and builds the signed extrinsic (nothing is submitted).
serve_axon_plan prepare_serve_axon(rpc_client& client, const keypair& hotkey,
                                   const serve_axon_args& args);

/// {"call_hex", "signing_payload_hex", "extrinsic_hex" (0x-prefixed), "spec_version",
///  "transaction_version", "nonce", "era_block"}: what `bt-chain serve-axon --dry-run` prints.
bt::json dry_run_json(const serve_axon_plan& plan);

struct serve_axon_confirmation {
  std::string extrinsic_hash;  ///< author_submitExtrinsic's answer
  std::uint64_t polls = 0;     ///< storage reads until it matched
};

/// Submits the plan's extrinsic and waits until storage shows the axon (see the contract).
serve_axon_confirmation submit_serve_axon(
    rpc_client& client, const serve_axon_plan& plan, const keypair& hotkey,
    std::chrono::milliseconds timeout = std::chrono::seconds(60),
    std::chrono::milliseconds poll = std::chrono::seconds(3));

}  // namespace bt
