// sr25519: Schnorr signatures on Ristretto255 exactly as schnorrkel 0.11 makes them (the key type
// of every Bittensor hotkey), built on libsodium's crypto_core_ristretto255_* and
// crypto_scalarmult_ristretto255* (everything that touches a secret: constant time), libdecaf's
// ristretto255 (verification only: variable time, its inputs are public) and the library's private
// Merlin transcripts.
// docs/protocol.md section 9.2 (signing), 9.4 (key expansion), 9.5 (secret key forms), 9.6 (HDKD).
//
// All functions expect libsodium to be initialised (bt::init_crypto(), keypair.hpp). None throws.
// Thread safety: every function is reentrant; signing draws randomness from libsodium.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <system_error>

namespace bt::sr25519 {

using public_key = std::array<std::uint8_t, 32>;   ///< compressed Ristretto255 point
using signature = std::array<std::uint8_t, 64>;    ///< R || s, high bit of byte 63 set
using mini_secret = std::array<std::uint8_t, 32>;  ///< schnorrkel MiniSecretKey (the "seed")
using chain_code = std::array<std::uint8_t, 32>;   ///< HDKD chain code (a junction's 32 bytes)

/// Signing context of Substrate, sp-core and btwallet.
inline constexpr std::string_view substrate_context = "substrate";

/// An expanded secret key: the scalar `a` (canonical, little-endian, < l) and the 32-byte
/// nonce seed. Wiped on destruction; copies are independent and wiped too.
struct secret_key {
  std::array<std::uint8_t, 32> scalar{};
  std::array<std::uint8_t, 32> nonce{};

  secret_key() = default;
  secret_key(const secret_key&) = default;
  secret_key& operator=(const secret_key&) = default;
  ~secret_key();
};

/// MiniSecretKey::expand(ExpansionMode::Ed25519): h = SHA-512(mini); scalar = clamp(h[0..32]) / 8;
/// nonce = h[32..64].
secret_key expand_mini_secret(std::span<const std::uint8_t, 32> mini) noexcept;

/// a·B, compressed.
public_key to_public(const secret_key& secret) noexcept;

/// SecretKey::to_bytes: canonical scalar || nonce (btwallet's keyfile "privateKey").
/// The caller wipes the result (sodium_memzero).
std::array<std::uint8_t, 64> to_bytes(const secret_key& secret) noexcept;
/// SecretKey::to_ed25519_bytes: (8·scalar as a 256-bit little-endian integer) || nonce
/// (polkadot-js, substrate-interface, PKCS#8 in polkadot-js JSON). The caller wipes the result.
std::array<std::uint8_t, 64> to_ed25519_bytes(const secret_key& secret) noexcept;
/// SecretKey::from_bytes: 64 bytes, canonical scalar first. invalid_secret_key on a wrong length
/// or a scalar >= l.
std::error_code from_bytes(std::span<const std::uint8_t> bytes, secret_key& out) noexcept;
/// SecretKey::from_ed25519_bytes: 64 bytes, the first 32 divided by the cofactor 8 (dropping the
/// low three bits, as schnorrkel does) and then reduced mod l. invalid_secret_key on a wrong
/// length. (schnorrkel keeps an unreduced scalar here; the public key and signatures are the same.)
std::error_code from_ed25519_bytes(std::span<const std::uint8_t> bytes, secret_key& out) noexcept;

/// true when the 32 bytes are a canonical Ristretto255 encoding (the identity included, as
/// schnorrkel's PublicKey::from_bytes accepts it).
bool is_valid_public_key(std::span<const std::uint8_t, 32> pub) noexcept;

/// SecretKey::sign(signing_context(context).bytes(message), public): randomised (witness from
/// the nonce and 32 bytes of libsodium randomness). `pub` must be to_public(secret); it is taken as
/// an argument so that signing costs one base-point multiplication.
signature sign(const secret_key& secret, const public_key& pub,
               std::span<const std::uint8_t> message,
               std::string_view context = substrate_context) noexcept;

/// PublicKey::verify_simple(context, message, signature). Returns {} when valid, otherwise:
/// - key_errc::invalid_signature: length != 64, marker bit (0x80 in byte 63) missing, s >= l, or R
///   not a canonical Ristretto255 encoding (RFC 9496: bit 255 set is refused too);
/// - key_errc::invalid_public_key: `pub` not a canonical Ristretto255 encoding (likewise);
/// - key_errc::signature_mismatch: well-formed, but compress(s·B − k·A) != R.
/// Cost: the transcript (a few Keccak permutations) and one variable-time double-scalar
/// multiplication s·B + (−k)·A (libdecaf), with one point decode and one encode. Variable time
/// is safe here: the key, the message and the signature are all public.
std::error_code verify(std::span<const std::uint8_t, 32> pub, std::span<const std::uint8_t> message,
                       std::span<const std::uint8_t> signature,
                       std::string_view context = substrate_context) noexcept;

namespace detail {
/// The previous verifier, kept as the reference of the differential test and the benchmark:
/// libsodium's constant-time calls (s·B, k·A and R + k·A, each re-encoded). The same result as
/// verify() for every input except an A or R with bit 255 set, which libsodium 1.0.18 decodes as
/// if the bit were clear (verify() refuses it, as schnorrkel does). Not for production use.
std::error_code verify_constant_time(std::span<const std::uint8_t, 32> pub,
                                     std::span<const std::uint8_t> message,
                                     std::span<const std::uint8_t> signature,
                                     std::string_view context = substrate_context) noexcept;
}  // namespace detail

// --- HDKD (schnorrkel derive.rs; sp-core sr25519 Pair::derive). Chain codes come from junctions
//     (sp-core DeriveJunction; see the identity sources) ---

/// SecretKey::hard_derive_mini_secret_key(Some(cc), b""): the new mini secret of a hard junction
/// ("//x"). The caller wipes it (or expands it with expand_mini_secret).
mini_secret hard_derive_mini_secret(const secret_key& parent, const chain_code& cc) noexcept;
/// expand_mini_secret(hard_derive_mini_secret(parent, cc)).
secret_key derive_hard(const secret_key& parent, const chain_code& cc) noexcept;

/// SecretKey::derived_key_simple(cc, b"") of a soft junction ("/x"): scalar' = scalar + t mod l
/// with t from the transcript over (cc, parent public key). The new nonce comes from the witness
/// RNG (parent secret + libsodium randomness), so it differs between calls exactly as in
/// schnorrkel and sp-core; the scalar and public key are deterministic. `parent_pub` must be
/// to_public(parent). `next_cc`, when given, receives the derived chain code.
secret_key derive_soft(const secret_key& parent, const public_key& parent_pub, const chain_code& cc,
                       chain_code* next_cc = nullptr) noexcept;
/// PublicKey::derived_key_simple(cc, b""): A' = A + t·B, equal to to_public(derive_soft(...)).
/// invalid_public_key when `parent` is not a valid encoding.
std::error_code derive_soft_public(std::span<const std::uint8_t, 32> parent, const chain_code& cc,
                                   public_key& out, chain_code* next_cc = nullptr) noexcept;

}  // namespace bt::sr25519
