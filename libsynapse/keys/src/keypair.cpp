// bt::keypair except from_mnemonic and from_uri (the identity sources: mnemonic/URI files),
// verify_signature, init_crypto, and keypair_access (detail/keypair_access.hpp).
#include <bt/keypair.hpp>

#include <bt/ed25519.hpp>
#include <bt/hex.hpp>
#include <bt/sr25519.hpp>
#include <bt/ss58.hpp>
#include "keypair_access.hpp"

#include <sodium.h>

#include <algorithm>
#include <stdexcept>

namespace bt {
namespace {

bool sodium_ready() noexcept {
  static const bool ok = sodium_init() >= 0;
  return ok;
}

std::span<const std::uint8_t> as_bytes(std::string_view s) noexcept {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

void wipe(std::string& s) noexcept {
  if (!s.empty()) sodium_memzero(s.data(), s.size());
}

}  // namespace

void init_crypto() {
  if (!sodium_ready()) throw std::runtime_error("libsodium initialisation (sodium_init) failed");
}

// Exactly one of sr / ed is meaningful, according to keypair::type_.
struct keypair::secret_state {
  sr25519::secret_key sr;
  ed25519::secret_key ed;
  std::optional<seed_bytes> seed;
  std::optional<std::string> mnemonic;

  secret_state() = default;
  secret_state(const secret_state&) = default;
  secret_state& operator=(const secret_state&) = delete;
  ~secret_state() {
    if (seed) sodium_memzero(seed->data(), seed->size());
    if (mnemonic) wipe(*mnemonic);
  }
};

// --- keypair_access ---

keypair keypair_access::make_sr25519(const sr25519::secret_key& secret,
                                     const std::optional<seed_bytes>& seed,
                                     std::optional<std::string> mnemonic) {
  init_crypto();
  keypair kp;
  kp.type_ = crypto_type::sr25519;
  kp.secret_ = std::make_unique<keypair::secret_state>();
  kp.secret_->sr = secret;
  kp.secret_->seed = seed;
  if (mnemonic) {
    kp.secret_->mnemonic = std::move(*mnemonic);
    wipe(*mnemonic);  // a moved-from string may keep its (small-buffer) bytes
  }
  kp.public_key_ = sr25519::to_public(secret);
  kp.ss58_address_ = ss58::encode(kp.public_key_);
  return kp;
}

keypair keypair_access::make_ed25519(const seed_bytes& seed, std::optional<std::string> mnemonic) {
  init_crypto();
  keypair kp;
  kp.type_ = crypto_type::ed25519;
  kp.secret_ = std::make_unique<keypair::secret_state>();
  kp.secret_->ed = ed25519::from_seed(seed);
  kp.secret_->seed = seed;
  if (mnemonic) {
    kp.secret_->mnemonic = std::move(*mnemonic);
    wipe(*mnemonic);
  }
  std::copy_n(kp.secret_->ed.bytes.begin() + 32, 32, kp.public_key_.begin());
  kp.ss58_address_ = ss58::encode(kp.public_key_);
  return kp;
}

keypair keypair_access::make_from_seed(const seed_bytes& seed, crypto_type type,
                                       std::optional<std::string> mnemonic) {
  if (type == crypto_type::ed25519) return make_ed25519(seed, std::move(mnemonic));
  sr25519::secret_key sk = sr25519::expand_mini_secret(seed);
  return make_sr25519(sk, seed, std::move(mnemonic));
}

const sr25519::secret_key* keypair_access::sr25519_secret(const keypair& kp) noexcept {
  return kp.secret_ && kp.type_ == crypto_type::sr25519 ? &kp.secret_->sr : nullptr;
}

const ed25519::secret_key* keypair_access::ed25519_secret(const keypair& kp) noexcept {
  return kp.secret_ && kp.type_ == crypto_type::ed25519 ? &kp.secret_->ed : nullptr;
}

// --- factories ---

keypair keypair::from_seed(std::span<const std::uint8_t, 32> seed, crypto_type type) {
  seed_bytes s;
  std::copy(seed.begin(), seed.end(), s.begin());
  keypair kp = keypair_access::make_from_seed(s, type);
  sodium_memzero(s.data(), s.size());
  return kp;
}

std::optional<keypair> keypair::from_secret_key(std::span<const std::uint8_t> secret,
                                                crypto_type type, error& err,
                                                const public_key_bytes* expected_public) {
  init_crypto();
  const auto fail = [&](std::string detail) -> std::optional<keypair> {
    err = {make_error_code(key_errc::invalid_secret_key), "secret key", std::move(detail)};
    return std::nullopt;
  };
  if (secret.size() != 64) return fail("expected 64 bytes, got " + std::to_string(secret.size()));

  if (type == crypto_type::ed25519) {
    ed25519::secret_key sk;
    if (ed25519::from_bytes(secret, sk))
      return fail("the second half is not the seed's public key");
    if (expected_public != nullptr &&
        !std::equal(sk.bytes.begin() + 32, sk.bytes.end(), expected_public->begin()))
      return fail("the key does not belong to the expected public key");
    seed_bytes seed;
    std::copy_n(sk.bytes.begin(), 32, seed.begin());
    keypair kp = keypair_access::make_ed25519(seed);
    sodium_memzero(seed.data(), seed.size());
    return kp;
  }

  // sr25519: canonical (btwallet) form first, then scalar*8 (polkadot-js) form.
  sr25519::secret_key canonical, ed_form;
  const bool has_canonical = !sr25519::from_bytes(secret, canonical);
  (void)sr25519::from_ed25519_bytes(secret, ed_form);  // cannot fail for 64 bytes
  if (expected_public == nullptr) {
    return keypair_access::make_sr25519(has_canonical ? canonical : ed_form);
  }
  if (has_canonical && sr25519::to_public(canonical) == *expected_public)
    return keypair_access::make_sr25519(canonical);
  if (sr25519::to_public(ed_form) == *expected_public) return keypair_access::make_sr25519(ed_form);
  return fail(
      "neither the canonical nor the ed25519 (scalar*8) form gives the expected public key");
}

keypair keypair::from_public_key(const public_key_bytes& pub, crypto_type type) {
  init_crypto();
  keypair kp;
  kp.type_ = type;
  kp.public_key_ = pub;
  kp.ss58_address_ = ss58::encode(pub);
  return kp;
}

std::optional<keypair> keypair::from_ss58(std::string_view address, crypto_type type, error& err) {
  init_crypto();
  std::error_code ec;
  auto d = ss58::decode(address, ec);
  if (!d) {
    err = {ec, "ss58 address", std::string(address.substr(0, 64))};
    return std::nullopt;
  }
  keypair kp;
  kp.type_ = type;
  kp.public_key_ = d->public_key;
  // Kept as given when it is format 42; another format's address is re-encoded with 42 (the
  // address of the same account in Bittensor's format).
  kp.ss58_address_ =
      d->format == ss58::default_format ? std::string(address) : ss58::encode(d->public_key);
  return kp;
}

keypair keypair::from_ss58(std::string_view address, crypto_type type) {
  error err;
  auto kp = from_ss58(address, type, err);
  if (!kp) throw std::system_error(err.code, err.message());
  return std::move(*kp);
}

// --- value semantics ---

keypair::keypair(const keypair& other)
    : type_(other.type_),
      public_key_(other.public_key_),
      ss58_address_(other.ss58_address_),
      secret_(other.secret_ ? std::make_unique<secret_state>(*other.secret_) : nullptr) {}

keypair& keypair::operator=(const keypair& other) {
  if (this != &other) {
    keypair copy(other);
    *this = std::move(copy);
  }
  return *this;
}

keypair::keypair(keypair&&) noexcept = default;
keypair& keypair::operator=(keypair&&) noexcept = default;
keypair::~keypair() = default;  // secret_state wipes itself

// --- accessors ---

std::string keypair::ss58_address(std::uint16_t format) const {
  return ss58::encode(public_key_, format);
}

bool keypair::has_secret() const noexcept {
  return secret_ != nullptr;
}

signature_bytes keypair::sign(std::span<const std::uint8_t> message) const {
  if (!secret_) throw std::logic_error("bt::keypair::sign: public-only keypair " + ss58_address_);
  if (type_ == crypto_type::sr25519) return sr25519::sign(secret_->sr, public_key_, message);
  return ed25519::sign(secret_->ed, message);
}

signature_bytes keypair::sign(std::string_view message) const {
  return sign(as_bytes(message));
}

bool keypair::verify(std::span<const std::uint8_t> message,
                     std::span<const std::uint8_t> signature) const noexcept {
  return !verify_signature(type_, public_key_, message, signature);
}

bool keypair::verify(std::string_view message,
                     std::span<const std::uint8_t> signature) const noexcept {
  return verify(as_bytes(message), signature);
}

std::optional<std::array<std::uint8_t, 64>> keypair::secret_key_bytes() const {
  if (!secret_) return std::nullopt;
  if (type_ == crypto_type::sr25519) return sr25519::to_bytes(secret_->sr);
  return secret_->ed.bytes;
}

std::optional<seed_bytes> keypair::seed() const {
  if (!secret_) return std::nullopt;
  return secret_->seed;
}

std::optional<std::string> keypair::mnemonic() const {
  if (!secret_) return std::nullopt;
  return secret_->mnemonic;
}

std::error_code verify_signature(crypto_type type, const public_key_bytes& pub,
                                 std::span<const std::uint8_t> message,
                                 std::span<const std::uint8_t> signature) noexcept {
  // Verification needs no randomness; a failed sodium_init (never seen in practice) leaves the
  // portable implementations in place, which verify correctly.
  (void)sodium_ready();
  switch (type) {
    case crypto_type::sr25519:
      return sr25519::verify(pub, message, signature);
    case crypto_type::ed25519:
      return ed25519::verify(pub, message, signature);
  }
  return key_errc::unsupported_crypto;
}

}  // namespace bt
