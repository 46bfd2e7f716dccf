// Sessions between our own ends (see session_auth.hpp).
#include <bt/session_auth.hpp>

#include <bt/detail/text.hpp>
#include <bt/hex.hpp>
#include <bt/response_signature.hpp>
#include <bt/ss58.hpp>

#include "keyed_hmac.hpp"

#include <sodium.h>

#include <array>
#include <charconv>
#include <cstdint>
#include <optional>
#include <stdexcept>

namespace bt::session_auth {

namespace {
constexpr std::string_view scheme = "v1.";
// The answer MAC's own version: it covers a response signature's message (PROTOCOL 5.15), which
// is at version 2 (SHA-256 of the body); the offer, accept and request headers are unchanged.
constexpr std::string_view response_mac_scheme = "v2.";
constexpr std::size_t key_size = 32;
constexpr std::size_t id_size = 16;
constexpr std::size_t max_decimal_digits = 20;  // any uint64
static_assert(crypto_kx_PUBLICKEYBYTES == key_size && crypto_kx_SESSIONKEYBYTES == key_size);
static_assert(crypto_auth_hmacsha256_BYTES == key_size);
static_assert(crypto_auth_hmacsha256_KEYBYTES == key_size);

using key_bytes = std::array<std::uint8_t, key_size>;

/// Stores the reason (when asked for) and gives the empty result.
std::nullopt_t fail(std::string* why, std::string text) {
  if (why) *why = std::move(text);
  return std::nullopt;
}

/// Splits the next '.'-terminated field off `rest`; nullopt when there is no '.'.
std::optional<std::string_view> next_field(std::string_view& rest) {
  const auto dot = rest.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const auto field = rest.substr(0, dot);
  rest.remove_prefix(dot + 1);
  return field;
}

/// Exactly 2 * out.size() lower-case hex digits. Every caller decodes public wire text (session
/// ids, public keys, MACs), so a table lookup does, without branches on the digits (random hex
/// mispredicts a digit-class branch half the time): libsodium's constant-time decoder, made for
/// secrets, took about 2,000 instructions per 64 digits, three times in each session ping.
bool decode_lower_hex(std::string_view text, std::span<std::uint8_t> out) {
  if (text.size() != 2 * out.size()) return false;
  int bad = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int high = bt::detail::hex_values<true>[static_cast<unsigned char>(text[2 * i])];
    const int low = bt::detail::hex_values<true>[static_cast<unsigned char>(text[2 * i + 1])];
    bad |= high | low;
    out[i] =
        static_cast<std::uint8_t>((static_cast<unsigned>(high) << 4) | static_cast<unsigned>(low));
  }
  return bad >= 0;
}

/// 1 to 20 decimal digits, no sign, no leading '+', fits in uint64.
std::optional<std::uint64_t> parse_decimal(std::string_view s) {
  if (s.empty() || s.size() > max_decimal_digits) return std::nullopt;
  for (const char c : s)
    if (c < '0' || c > '9') return std::nullopt;
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return v;
}

/// "0x" and 128 lower-case hex digits.
bool decode_signature(std::string_view text, signature_bytes& sig) {
  return text.starts_with("0x") && decode_lower_hex(text.substr(2), sig);
}

std::span<const std::uint8_t> bytes_of(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

/// Verifies an sr25519 signature by the SS58 address `signer`; empty or the reason.
std::string verify_by(std::string_view signer, std::string_view message,
                      const signature_bytes& sig) {
  std::error_code ec;
  const auto pub = ss58::decode(signer, ec);
  if (!pub) return "hotkey '" + std::string(signer) + "' is not SS58";
  if (verify_signature(crypto_type::sr25519, pub->public_key, bytes_of(message), sig))
    return "signature mismatch with hotkey " + std::string(signer);
  return {};
}

std::string offer_message(std::string_view client_pk_hex, const request_identity& id) {
  std::string m = "bt-session-offer-v1.";
  for (const std::string_view part :
       {client_pk_hex, id.nonce, id.dendrite_hotkey, id.axon_hotkey, id.uuid}) {
    m.append(part);
    m.push_back('.');
  }
  m.pop_back();
  return m;
}

std::string accept_message(std::string_view session_id_hex, std::string_view client_pk_hex,
                           std::string_view axon_pk_hex, bounds b, const request_identity& id) {
  std::string m = "bt-session-accept-v1.";
  const std::string max_requests = std::to_string(b.max_requests);
  const std::string lifetime = std::to_string(b.lifetime_s);
  for (const std::string_view part :
       {session_id_hex, client_pk_hex, axon_pk_hex, std::string_view(max_requests),
        std::string_view(lifetime), id.nonce, id.dendrite_hotkey, id.axon_hotkey, id.uuid}) {
    m.append(part);
    m.push_back('.');
  }
  m.pop_back();
  return m;
}

/// A keyed BLAKE2b of "bt-session-v1.{direction}." + offer + "|" + accept under `kx_key`.
void bind_key(std::uint8_t* out, std::string_view direction, const std::uint8_t* kx_key,
              std::string_view offer, std::string_view accept) {
  crypto_generichash_state st;
  crypto_generichash_init(&st, kx_key, key_size, key_size);
  const std::string prefix = "bt-session-v1." + std::string(direction) + ".";
  crypto_generichash_update(&st, bytes_of(prefix).data(), prefix.size());
  crypto_generichash_update(&st, bytes_of(offer).data(), offer.size());
  crypto_generichash_update(&st, reinterpret_cast<const std::uint8_t*>("|"), 1);
  crypto_generichash_update(&st, bytes_of(accept).data(), accept.size());
  crypto_generichash_final(&st, out, key_size);
  sodium_memzero(&st, sizeof st);
}

/// The kx keys of one side, wiped on destruction.
struct kx_keys {
  key_bytes rx{}, tx{};
  ~kx_keys() {
    sodium_memzero(rx.data(), rx.size());
    sodium_memzero(tx.data(), tx.size());
  }
};

/// What a request's MAC covers before its canonical message: "bt-session-request-v1.{id}.".
std::string request_prefix(std::string_view id_hex) {
  std::string p("bt-session-request-v1.");
  p.append(id_hex);
  p.push_back('.');
  return p;
}

/// "{scheme}{label}.{mac, 64 hex}", built in one allocation (one per request and per answer).
std::string mac_header(std::string_view scheme, std::string_view label,
                       const detail::keyed_hmac::mac_bytes& mac) {
  std::string v;
  v.reserve(scheme.size() + label.size() + 1 + 2 * mac.size());
  v.append(scheme).append(label).append(1, '.');
  const std::size_t at = v.size();
  v.resize(at + 2 * mac.size());
  write_hex(mac, v.data() + at);
  return v;
}

}  // namespace

// ----- session_keys -----

struct session_keys::state {
  key_bytes c2s{}, s2c{};
  /// HMAC under c2s with the request prefix absorbed, and HMAC under s2c (set by make()).
  std::optional<detail::keyed_hmac> request_mac, response_mac;
  std::string id_hex;
  bounds limits{};
  ~state() {
    sodium_memzero(c2s.data(), c2s.size());
    sodium_memzero(s2c.data(), s2c.size());
  }
};

/// Builds keys from both sides' kx keys (rx/tx from the client's point of view).
struct keys_access {
  static session_keys make(const std::uint8_t* c2s_kx, const std::uint8_t* s2c_kx,
                           std::string_view id_hex, bounds b, std::string_view offer,
                           std::string_view accept) {
    auto st = std::make_unique<session_keys::state>();
    bind_key(st->c2s.data(), "c2s", c2s_kx, offer, accept);
    bind_key(st->s2c.data(), "s2c", s2c_kx, offer, accept);
    st->id_hex = id_hex;
    st->limits = b;
    st->request_mac.emplace(st->c2s, request_prefix(st->id_hex));
    st->response_mac.emplace(st->s2c, std::string_view());
    return session_keys(std::move(st));
  }
  static const session_keys::state* get(const session_keys& k) { return k.state_.get(); }
};

session_keys::session_keys(std::unique_ptr<state> s) noexcept : state_(std::move(s)) {}
session_keys::session_keys(session_keys&&) noexcept = default;
session_keys& session_keys::operator=(session_keys&&) noexcept = default;
session_keys::~session_keys() = default;

std::string_view session_keys::id_hex() const noexcept {
  return state_ ? std::string_view(state_->id_hex) : std::string_view();
}
bounds session_keys::limits() const noexcept {
  return state_ ? state_->limits : bounds{};
}

// ----- client_offer -----

struct client_offer::state {
  std::array<std::uint8_t, crypto_kx_SECRETKEYBYTES> sk{};
  std::string pk_hex;
  std::string nonce, dendrite_hotkey, axon_hotkey, uuid;  // the identity, owned
  std::string message;                                    // the signed offer string
  std::string header;
  ~state() { sodium_memzero(sk.data(), sk.size()); }
  request_identity id() const { return {nonce, dendrite_hotkey, axon_hotkey, uuid}; }
};

client_offer::client_offer(const keypair& dendrite_key, const request_identity& id)
    : state_(std::make_unique<state>()) {
  init_crypto();
  if (!dendrite_key.has_secret())
    throw std::invalid_argument("session offer: the dendrite key has no secret");
  if (dendrite_key.ss58_address() != id.dendrite_hotkey)
    throw std::invalid_argument("session offer: the dendrite key is not the request's hotkey");
  state_->nonce = id.nonce;
  state_->dendrite_hotkey = id.dendrite_hotkey;
  state_->axon_hotkey = id.axon_hotkey;
  state_->uuid = id.uuid;
  key_bytes pk{};
  crypto_kx_keypair(pk.data(), state_->sk.data());
  state_->pk_hex = to_hex(pk);
  state_->message = offer_message(state_->pk_hex, state_->id());
  const auto sig = dendrite_key.sign(state_->message);
  state_->header = std::string(scheme) + state_->pk_hex + ".0x" + to_hex(sig);
}

client_offer::client_offer(client_offer&&) noexcept = default;
client_offer& client_offer::operator=(client_offer&&) noexcept = default;
client_offer::~client_offer() = default;

const std::string& client_offer::header_value() const noexcept {
  static const std::string empty;
  return state_ ? state_->header : empty;
}

std::optional<session_keys> client_offer::complete(std::string_view accept_value,
                                                   std::string* why) && {
  // Taking the state wipes the ephemeral secret when this function returns, whatever the result.
  const std::unique_ptr<state> st = std::move(state_);
  if (!st) return fail(why, "no offer (moved from or already completed)");
  constexpr const char* shape =
      "malformed bt-session-accept (expected 'v1.<session id>.<key>.<max requests>.<lifetime "
      "s>.0x<signature>')";
  if (!accept_value.starts_with(scheme)) return fail(why, shape);
  std::string_view rest = accept_value.substr(scheme.size());
  const auto id_hex = next_field(rest);
  const auto axon_pk_hex = next_field(rest);
  const auto max_text = next_field(rest);
  const auto life_text = next_field(rest);
  if (!id_hex || !axon_pk_hex || !max_text || !life_text) return fail(why, shape);
  std::array<std::uint8_t, id_size> id{};
  key_bytes axon_pk{};
  signature_bytes sig{};
  if (!decode_lower_hex(*id_hex, id))
    return fail(why, "malformed bt-session-accept session id (32 lower-case hex digits)");
  if (!decode_lower_hex(*axon_pk_hex, axon_pk))
    return fail(why, "malformed bt-session-accept key (64 lower-case hex digits)");
  const auto max_requests = parse_decimal(*max_text);
  const auto lifetime = parse_decimal(*life_text);
  if (!max_requests || !lifetime || *max_requests == 0 || *lifetime == 0)
    return fail(why, "malformed bt-session-accept bounds (positive decimal integers)");
  if (!decode_signature(rest, sig))
    return fail(why, "malformed bt-session-accept signature (0x and 128 lower-case hex digits)");
  const bounds b{*max_requests, *lifetime};
  const std::string accept = accept_message(*id_hex, st->pk_hex, *axon_pk_hex, b, st->id());
  if (auto bad = verify_by(st->axon_hotkey, accept, sig); !bad.empty())
    return fail(why, "bt-session-accept " + bad);
  key_bytes client_pk{};
  decode_hex(st->pk_hex, client_pk);
  kx_keys kx;
  if (crypto_kx_client_session_keys(kx.rx.data(), kx.tx.data(), client_pk.data(), st->sk.data(),
                                    axon_pk.data()) != 0)
    return fail(why, "bt-session-accept key rejected by the key exchange");
  return keys_access::make(kx.tx.data(), kx.rx.data(), *id_hex, b, st->message, accept);
}

// ----- axon side -----

std::optional<accepted> accept(std::string_view offer_value, const request_identity& id,
                               const keypair& axon_key, bounds b, std::string* why) {
  init_crypto();
  constexpr const char* shape = "malformed bt-session-offer (expected 'v1.<key>.0x<signature>')";
  if (b.max_requests == 0 || b.lifetime_s == 0)
    return fail(why, "session bounds must be at least 1");
  if (id.axon_hotkey != axon_key.ss58_address())
    return fail(why, "the request is addressed to another axon hotkey");
  if (!offer_value.starts_with(scheme)) return fail(why, shape);
  std::string_view rest = offer_value.substr(scheme.size());
  const auto client_pk_hex = next_field(rest);
  if (!client_pk_hex) return fail(why, shape);
  key_bytes client_pk{};
  signature_bytes sig{};
  if (!decode_lower_hex(*client_pk_hex, client_pk))
    return fail(why, "malformed bt-session-offer key (64 lower-case hex digits)");
  if (!decode_signature(rest, sig))
    return fail(why, "malformed bt-session-offer signature (0x and 128 lower-case hex digits)");
  const std::string offer = offer_message(*client_pk_hex, id);
  if (auto bad = verify_by(id.dendrite_hotkey, offer, sig); !bad.empty())
    return fail(why, "bt-session-offer " + bad);

  std::array<std::uint8_t, id_size> session_id{};
  randombytes_buf(session_id.data(), session_id.size());
  const std::string id_hex = to_hex(session_id);
  key_bytes axon_pk{};
  std::array<std::uint8_t, crypto_kx_SECRETKEYBYTES> axon_sk{};
  crypto_kx_keypair(axon_pk.data(), axon_sk.data());
  kx_keys kx;
  const int rc = crypto_kx_server_session_keys(kx.rx.data(), kx.tx.data(), axon_pk.data(),
                                               axon_sk.data(), client_pk.data());
  sodium_memzero(axon_sk.data(), axon_sk.size());
  if (rc != 0) return fail(why, "bt-session-offer key rejected by the key exchange");
  const std::string axon_pk_hex = to_hex(axon_pk);
  const std::string accept = accept_message(id_hex, *client_pk_hex, axon_pk_hex, b, id);
  const auto accept_sig = axon_key.sign(accept);
  std::string header = std::string(scheme) + id_hex + "." + axon_pk_hex + "." +
                       std::to_string(b.max_requests) + "." + std::to_string(b.lifetime_s) + ".0x" +
                       to_hex(accept_sig);
  // Server rx is the client's tx: c2s.
  return accepted{keys_access::make(kx.rx.data(), kx.tx.data(), id_hex, b, offer, accept),
                  std::move(header)};
}

// ----- MACs -----

std::string request_mac(const session_keys& keys, std::string_view canonical) {
  const auto* st = keys_access::get(keys);
  if (!st) throw std::logic_error("session_auth::request_mac: no session keys");
  return mac_header(scheme, st->id_hex, (*st->request_mac)(canonical));
}

std::string check_request_mac(const session_keys& keys, std::string_view header_value,
                              std::string_view canonical) {
  const auto* st = keys_access::get(keys);
  if (!st) return "no session keys";
  constexpr const char* shape = "malformed bt-session (expected 'v1.<session id>.<mac>')";
  if (!header_value.starts_with(scheme)) return shape;
  std::string_view rest = header_value.substr(scheme.size());
  const auto id_hex = next_field(rest);
  std::array<std::uint8_t, id_size> id{};
  key_bytes mac{};
  if (!id_hex || !decode_lower_hex(*id_hex, id) || !decode_lower_hex(rest, mac)) return shape;
  if (*id_hex != st->id_hex) return "unknown session id";
  if (!st->request_mac->ok(canonical, mac)) return "MAC invalid";
  return {};
}

std::string response_mac(const session_keys& keys, std::string_view axon_nonce,
                         std::string_view caller_hotkey, std::string_view request_id, int status,
                         std::string_view body, std::string_view axon_hotkey) {
  const auto* st = keys_access::get(keys);
  if (!st) throw std::logic_error("session_auth::response_mac: no session keys");
  const std::string m = response_signature::signed_message(axon_nonce, axon_hotkey, caller_hotkey,
                                                           request_id, status, body);
  return mac_header(response_mac_scheme, axon_nonce, (*st->response_mac)(m));
}

std::string check_response_mac(const session_keys& keys, std::string_view header_value,
                               std::string_view caller_hotkey, std::string_view request_id,
                               int status, std::string_view body, std::string_view axon_hotkey) {
  const auto* st = keys_access::get(keys);
  if (!st) return "no session keys";
  constexpr const char* shape = "malformed bt-response-mac (expected 'v2.<nonce>.<mac>')";
  if (!header_value.starts_with(response_mac_scheme)) return shape;
  std::string_view rest = header_value.substr(response_mac_scheme.size());
  const auto nonce = next_field(rest);
  key_bytes mac{};
  if (!nonce || !parse_decimal(*nonce) || !decode_lower_hex(rest, mac)) return shape;
  const std::string m = response_signature::signed_message(*nonce, axon_hotkey, caller_hotkey,
                                                           request_id, status, body);
  if (!st->response_mac->ok(m, mac))
    return "MAC mismatch with the session of axon " + std::string(axon_hotkey);
  return {};
}

}  // namespace bt::session_auth
