// Substrate secret URIs (SURI), parsed as sp-core's SecretUri::from_str does (PROTOCOL 9.6):
//
//   [<phrase> | 0x<64 hex seed>] ( "//" <hard> | "/" <soft> )* [ "///" <password> ]
//
// sp-core matches ^(?P<phrase>[a-zA-Z0-9 ]+)?(?P<path>(//?[^/]+)*)(///(?P<password>.*))?$ ; an
// absent phrase means the development phrase, so "//Alice" is the dev phrase's "Alice" hard child.
// Each junction becomes a 32-byte chain code (sp-core DeriveJunction): a decimal u64 (Rust
// parse::<u64>, so an optional leading '+') gives its 8 little-endian bytes; any other text its
// SCALE encoding (compact length || UTF-8), replaced by BLAKE2b-256 when longer than 32 bytes;
// zero-padded to 32 bytes. keypair::from_uri (keypair.hpp) applies the result.
//
// Thread safety: reentrant. A parsed URI holds secrets (phrase, password) and wipes them.
#pragma once

#include <bt/key_error.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bt {

/// The phrase sp-core uses when a URI has none ("//Alice", "//Bob//stash", "").
inline constexpr std::string_view dev_phrase =
    "bottom drive obey lake curtain smoke basket hold race lonely fit walk";

/// One derivation step.
struct derive_junction {
  bool hard = false;                          ///< "//x" (true) or "/x" (false)
  std::array<std::uint8_t, 32> chain_code{};  ///< sp-core DeriveJunction bytes

  /// The junction of `text` (without its slashes), as sp-core's DeriveJunction::from.
  static derive_junction from_text(std::string_view text, bool hard);
  friend bool operator==(const derive_junction&, const derive_junction&) = default;
};

/// A parsed secret URI. `phrase` is the mnemonic or "0x<hex seed>" exactly as written (the dev
/// phrase when the URI has none); `password` is present when "///" was given (possibly empty).
/// The phrase and password are wiped on destruction.
struct secret_uri {
  std::string phrase;
  std::vector<derive_junction> junctions;
  std::optional<std::string> password;
  bool phrase_is_dev = false;  ///< true when the URI had no phrase

  secret_uri() = default;
  secret_uri(const secret_uri&) = default;
  secret_uri(secret_uri&&) = default;
  secret_uri& operator=(const secret_uri&) = default;
  secret_uri& operator=(secret_uri&&) = default;
  ~secret_uri();

  /// True when the phrase is a "0x" seed (the password is then ignored, as in sp-core).
  bool is_hex_seed() const noexcept {
    return phrase.size() >= 2 && phrase[0] == '0' && phrase[1] == 'x';
  }
};

/// Parses; key_errc::invalid_uri (what = "secret URI", detail says where) when the text does not
/// match the grammar. The phrase is not validated here (keypair::from_uri does that). Error
/// details never repeat the phrase or the password.
std::optional<secret_uri> parse_secret_uri(std::string_view uri, error& err);
/// Throwing form: std::system_error carrying key_errc::invalid_uri.
secret_uri parse_secret_uri(std::string_view uri);

/// ed25519 hard derivation as sp-core: BLAKE2b-256(SCALE(("Ed25519HDKD", seed, chain_code))).
/// The caller wipes the result.
std::array<std::uint8_t, 32> ed25519_derive_hard(const std::array<std::uint8_t, 32>& seed,
                                                 const std::array<std::uint8_t, 32>& chain_code);

namespace detail {
/// SCALE compact encoding of a length (all four modes), appended to `out`.
void scale_compact(std::uint64_t n, std::vector<std::uint8_t>& out);
}  // namespace detail

}  // namespace bt
