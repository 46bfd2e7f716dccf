// bt::keypair: a hotkey or coldkey (sr25519 or ed25519) with its SS58 address.
// Secret material is wiped on destruction (sodium_memzero) and never printed or logged.
//
// Thread safety: a const keypair may be used from many threads at once (sign is const and
// takes its randomness from libsodium).
#pragma once

#include <bt/key_error.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace bt {

/// As btwallet numbers them.
enum class crypto_type : int { ed25519 = 0, sr25519 = 1 };

using public_key_bytes = std::array<std::uint8_t, 32>;
using signature_bytes = std::array<std::uint8_t, 64>;
using seed_bytes = std::array<std::uint8_t, 32>;

/// Calls sodium_init() once; every keypair factory calls it, so calling it yourself is only
/// needed before using libsodium directly. Throws std::runtime_error if libsodium fails.
void init_crypto();

class keypair {
 public:
  // --- factories; the throwing forms throw std::system_error carrying the bt::key_errc ---

  /// From a 32-byte seed: the sr25519 mini secret (ExpansionMode::Ed25519) or the RFC 8032
  /// ed25519 private key.
  static keypair from_seed(std::span<const std::uint8_t, 32> seed,
                           crypto_type type = crypto_type::sr25519);
  /// From a BIP39 English mnemonic with Substrate's seed derivation (mnemonic.hpp).
  static keypair from_mnemonic(std::string_view phrase, std::string_view password = {},
                               crypto_type type = crypto_type::sr25519);
  static std::optional<keypair> from_mnemonic(std::string_view phrase, std::string_view password,
                                              crypto_type type, error& err);
  /// From a Substrate secret URI: "//Alice", "<phrase>//hard/soft///password", "0x<seed>//x".
  static keypair from_uri(std::string_view uri, crypto_type type = crypto_type::sr25519);
  static std::optional<keypair> from_uri(std::string_view uri, crypto_type type, error& err);
  /// From a 64-byte secret key. sr25519: canonical scalar||nonce (btwallet) or scalar*8||nonce
  /// (polkadot-js); when `expected_public` is given, the form whose public key matches is taken.
  /// ed25519: seed||public (libsodium's secret key).
  static std::optional<keypair> from_secret_key(std::span<const std::uint8_t> secret,
                                                crypto_type type, error& err,
                                                const public_key_bytes* expected_public = nullptr);
  /// Public-only keypairs (verification).
  static keypair from_public_key(const public_key_bytes& pub,
                                 crypto_type type = crypto_type::sr25519);
  static std::optional<keypair> from_ss58(std::string_view address, crypto_type type, error& err);
  static keypair from_ss58(std::string_view address, crypto_type type = crypto_type::sr25519);

  keypair(const keypair& other);
  keypair& operator=(const keypair& other);
  keypair(keypair&&) noexcept;
  keypair& operator=(keypair&&) noexcept;
  ~keypair();

  crypto_type type() const noexcept { return type_; }
  const public_key_bytes& public_key() const noexcept { return public_key_; }
  /// SS58 with format 42 (computed once).
  const std::string& ss58_address() const noexcept { return ss58_address_; }
  std::string ss58_address(std::uint16_t format) const;

  bool has_secret() const noexcept;
  /// sr25519: context "substrate", randomised; ed25519: RFC 8032. Throws std::logic_error when
  /// the keypair has no secret.
  signature_bytes sign(std::span<const std::uint8_t> message) const;
  signature_bytes sign(std::string_view message) const;
  /// Verifies with this keypair's public key. Never throws.
  bool verify(std::span<const std::uint8_t> message,
              std::span<const std::uint8_t> signature) const noexcept;
  bool verify(std::string_view message, std::span<const std::uint8_t> signature) const noexcept;

  /// Secret material for keyfiles (copies; the caller wipes them). Empty when absent.
  /// sr25519: canonical scalar||nonce (btwallet privateKey); ed25519: seed||public.
  std::optional<std::array<std::uint8_t, 64>> secret_key_bytes() const;
  std::optional<seed_bytes> seed() const;       ///< mini secret / ed25519 seed, if known
  std::optional<std::string> mnemonic() const;  ///< the phrase, if made from one

 private:
  struct secret_state;  // wiped on destruction
  keypair() = default;

  crypto_type type_ = crypto_type::sr25519;
  public_key_bytes public_key_{};
  std::string ss58_address_;
  std::unique_ptr<secret_state> secret_;
  friend struct keypair_access;  // lets the identity sources (uri, mnemonic, keyfile) build
                                 // keypairs
};

/// Verifies `signature` over `message` by the public key `pub` of the given type. Returns {} when
/// valid, otherwise invalid_public_key, invalid_signature (length, marker bit, non-canonical s,
/// bad R encoding) or signature_mismatch. Never throws. This is the axon's hot path.
std::error_code verify_signature(crypto_type type, const public_key_bytes& pub,
                                 std::span<const std::uint8_t> message,
                                 std::span<const std::uint8_t> signature) noexcept;

}  // namespace bt
