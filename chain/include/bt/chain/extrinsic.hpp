// Signed extrinsics (format version 4) for a runtime described by its metadata, and the one call
// this library publishes: SubtensorModule.serve_axon.
//
// Contract:
//  * Everything runtime-specific comes from bt::runtime_metadata: the pallet and call indices
//    (by name), the signed extensions and their order. An extension is encoded when this client
//    knows it (CheckNonZeroSender, CheckSpecVersion, CheckTxVersion, CheckGenesis,
//    CheckMortality/CheckEra, CheckNonce, CheckWeight, ChargeTransactionPayment,
//    CheckMetadataHash with mode 0 and no hash), is a no-op when both its extra and its implicit
//    types encode to nothing, and is refused otherwise (chain_errc::unknown_extension naming it).
//    A known extension whose metadata types disagree with what we would encode (e.g. a
//    CheckNonce without data) is refused as bad_metadata rather than signed wrongly.
//  * Errors are thrown as std::system_error carrying a chain_errc (invalid_argument for input
//    the chain would refuse, unknown_pallet / unknown_call / unknown_extension / bad_metadata).
//  * The signing payload is call ++ extra ++ implicit, replaced by its blake2b-256 when longer
//    than 256 bytes; the extrinsic is compact(len) ++ 0x84 ++ MultiAddress::Id(signer) ++
//    MultiSignature::Sr25519(signature) ++ extra ++ call.
#pragma once

#include <bt/chain/hashing.hpp>
#include <bt/chain/metadata.hpp>
#include <bt/chain/uint128.hpp>
#include <bt/keypair.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bt {

/// Substrate's mortal era (sp_runtime::generic::Era::mortal): a transaction valid for `period`
/// blocks from the block whose number is congruent to `phase` modulo `period`.
struct mortal_era {
  std::uint64_t period = 0;  ///< a power of two in [4, 65536]
  std::uint64_t phase = 0;   ///< < period (quantized for periods above 4096)

  /// Era::mortal(period, current): period rounded up to a power of two and clamped to
  /// [4, 65536], phase = current % period, quantized.
  static mortal_era from_block(std::uint64_t period, std::uint64_t current) noexcept;
  /// The two-byte encoding (little-endian u16: log2(period) - 1 in the low 4 bits, clamped to
  /// [1, 15], phase / quantize_factor above).
  std::array<std::uint8_t, 2> encode() const noexcept;
  /// The first block of the era that contains `current`: its hash goes in the signing payload.
  std::uint64_t birth(std::uint64_t current) const noexcept;
};

/// The arguments of SubtensorModule.serve_axon.
struct serve_axon_args {
  std::uint16_t netuid = 0;
  std::uint32_t version = 0;
  uint128_t ip = 0;  ///< IPv4 as its 32-bit value, IPv6 as its 128-bit value
  std::uint16_t port = 0;
  std::uint8_t ip_type = 4;
  std::uint8_t protocol = 4;
  std::uint8_t placeholder1 = 0;
  std::uint8_t placeholder2 = 0;
};

/// Parses dotted IPv4 or RFC 4291 IPv6 text into (ip, ip_type); nullopt when it is neither.
std::optional<std::pair<uint128_t, std::uint8_t>> parse_ip(std::string_view text);

/// Throws std::system_error(invalid_argument) for what the chain refuses: port 0, an ip_type
/// other than 4 or 6, an IPv4 value above 32 bits, an unspecified, loopback or broadcast
/// address.
void check_serve_axon_args(const serve_axon_args& args);

/// pallet index ++ call index ++ the eight arguments (after check_serve_axon_args). The
/// argument list in the metadata must be the eight named fields above, else bad_metadata.
std::vector<std::uint8_t> encode_serve_axon_call(const runtime_metadata& md,
                                                 const serve_axon_args& args);

/// What the signed extensions need from the chain.
struct signing_context {
  std::uint32_t spec_version = 0;
  std::uint32_t transaction_version = 0;
  hash256 genesis_hash{};
  std::uint64_t nonce = 0;
  mortal_era era{};
  hash256 era_block_hash{};  ///< the hash of block era.birth(current)
  uint128_t tip = 0;
};

struct signed_extrinsic {
  std::vector<std::uint8_t> call;
  std::vector<std::uint8_t> extra;            ///< the extensions' extra data, in order
  std::vector<std::uint8_t> implicit;         ///< the extensions' additional signed data
  std::vector<std::uint8_t> signing_payload;  ///< what was signed (hashed when > 256 bytes)
  signature_bytes signature{};
  std::vector<std::uint8_t> extrinsic;  ///< with its compact length prefix
};

/// Encodes the extensions, signs with `signer` (sr25519, with a secret) and assembles the
/// version-4 signed extrinsic. Throws std::system_error (see the contract above).
signed_extrinsic sign_extrinsic(const runtime_metadata& md, std::vector<std::uint8_t> call,
                                const signing_context& ctx, const keypair& signer);

}  // namespace bt
