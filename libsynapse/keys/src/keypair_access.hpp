// Construction of bt::keypair from already-derived secret material, for the identity sources
// (mnemonic, secret URI, keyfile readers). Implemented in keypair.cpp. Not a public API: it
// trusts its arguments (a given seed or mnemonic is recorded, not re-derived or checked).
#pragma once

#include <bt/ed25519.hpp>
#include <bt/keypair.hpp>
#include <bt/sr25519.hpp>

#include <optional>
#include <string>

namespace bt {

struct keypair_access {
  /// An sr25519 keypair from an expanded secret; its public key is computed. `seed` is the mini
  /// secret it was expanded from, if the caller knows it; `mnemonic` the phrase, likewise.
  static keypair make_sr25519(const sr25519::secret_key& secret,
                              const std::optional<seed_bytes>& seed = std::nullopt,
                              std::optional<std::string> mnemonic = std::nullopt);
  /// An ed25519 keypair from its seed (RFC 8032 private key).
  static keypair make_ed25519(const seed_bytes& seed,
                              std::optional<std::string> mnemonic = std::nullopt);
  /// keypair::from_seed, additionally recording the phrase the seed came from.
  static keypair make_from_seed(const seed_bytes& seed, crypto_type type,
                                std::optional<std::string> mnemonic = std::nullopt);

  /// The secret of a keypair, for derivation; nullptr when public-only or of the other type.
  /// Valid as long as `kp` is alive and unmodified.
  static const sr25519::secret_key* sr25519_secret(const keypair& kp) noexcept;
  static const ed25519::secret_key* ed25519_secret(const keypair& kp) noexcept;
};

}  // namespace bt
