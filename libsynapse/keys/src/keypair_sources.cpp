// keypair::from_mnemonic and keypair::from_uri (the rest of bt::keypair is in keypair.cpp).
#include <bt/keypair.hpp>

#include <bt/hex.hpp>
#include <bt/mnemonic.hpp>
#include <bt/secret_uri.hpp>
#include "keypair_access.hpp"
#include "throw_error.hpp"

#include <sodium.h>

#include <system_error>

namespace bt {
namespace {

// Words joined by single spaces: the form stored as secretPhrase, readable by every wallet
// (polkadot-js splits on single spaces).
std::string normalise_phrase(std::string_view phrase) {
  std::string out;
  std::size_t i = 0;
  auto space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
  };
  while (i < phrase.size()) {
    while (i < phrase.size() && space(phrase[i])) ++i;
    const std::size_t start = i;
    while (i < phrase.size() && !space(phrase[i])) ++i;
    if (i > start) {
      if (!out.empty()) out += ' ';
      out.append(phrase.substr(start, i - start));
    }
  }
  return out;
}

// The root seed of a URI: the 0x seed, or the mnemonic's mini secret with the URI's password.
std::optional<seed_bytes> root_seed(const secret_uri& uri, error& err) {
  if (uri.is_hex_seed()) {
    auto bytes = from_hex(std::string_view(uri.phrase).substr(2));
    if (!bytes || bytes->size() != 32) {
      if (bytes) sodium_memzero(bytes->data(), bytes->size());
      err = {make_error_code(key_errc::invalid_uri), "secret URI",
             "a 0x seed must be 64 hex digits (32 bytes)"};
      return std::nullopt;
    }
    seed_bytes seed{};
    std::copy(bytes->begin(), bytes->end(), seed.begin());
    sodium_memzero(bytes->data(), bytes->size());
    return seed;
  }
  const std::string_view password =
      uri.password ? std::string_view(*uri.password) : std::string_view{};
  return mnemonic_to_mini_secret(uri.phrase, password, err);
}

}  // namespace

std::optional<keypair> keypair::from_mnemonic(std::string_view phrase, std::string_view password,
                                              crypto_type type, error& err) {
  init_crypto();
  auto seed = mnemonic_to_mini_secret(phrase, password, err);
  if (!seed) return std::nullopt;
  auto kp = keypair_access::make_from_seed(*seed, type, normalise_phrase(phrase));
  sodium_memzero(seed->data(), seed->size());
  return kp;
}

keypair keypair::from_mnemonic(std::string_view phrase, std::string_view password,
                               crypto_type type) {
  error err;
  auto kp = from_mnemonic(phrase, password, type, err);
  if (!kp) detail::throw_error(err);
  return std::move(*kp);
}

std::optional<keypair> keypair::from_uri(std::string_view text, crypto_type type, error& err) {
  init_crypto();
  if (type != crypto_type::sr25519 && type != crypto_type::ed25519) {
    err = {make_error_code(key_errc::unsupported_crypto), "secret URI",
           "crypto type " + std::to_string(static_cast<int>(type))};
    return std::nullopt;
  }
  auto uri = parse_secret_uri(text, err);
  if (!uri) return std::nullopt;
  auto seed = root_seed(*uri, err);
  if (!seed) return std::nullopt;

  // As btwallet's Keypair::create_from_uri: the result records neither a seed nor a phrase, so a
  // keyfile written from it holds only privateKey (PROTOCOL 9.6).
  if (type == crypto_type::ed25519) {
    for (const auto& j : uri->junctions) {
      if (!j.hard) {
        sodium_memzero(seed->data(), seed->size());
        err = {make_error_code(key_errc::unsupported_crypto), "secret URI",
               "ed25519 supports only hard junctions (\"//x\"), as sp-core"};
        return std::nullopt;
      }
      auto next = ed25519_derive_hard(*seed, j.chain_code);
      *seed = next;
      sodium_memzero(next.data(), next.size());
    }
    // The ed25519 seed is the secret key itself, so make_ed25519 necessarily keeps it.
    auto kp = keypair_access::make_ed25519(*seed);
    sodium_memzero(seed->data(), seed->size());
    return kp;
  }

  sr25519::secret_key secret = sr25519::expand_mini_secret(*seed);
  sodium_memzero(seed->data(), seed->size());
  for (const auto& j : uri->junctions) {
    if (j.hard) {
      secret = sr25519::derive_hard(secret, j.chain_code);
    } else {
      const auto pub = sr25519::to_public(secret);
      secret = sr25519::derive_soft(secret, pub, j.chain_code);
    }
  }
  return keypair_access::make_sr25519(secret);
}

keypair keypair::from_uri(std::string_view uri, crypto_type type) {
  error err;
  auto kp = from_uri(uri, type, err);
  if (!kp) detail::throw_error(err);
  return std::move(*kp);
}

}  // namespace bt
