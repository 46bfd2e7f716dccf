// Version-4 signed extrinsics and the serve_axon call (contract in extrinsic.hpp).
#include <bt/chain/extrinsic.hpp>
#include <bt/chain/scale_writer.hpp>

#include <arpa/inet.h>

#include <algorithm>
#include <bit>
#include <string>
#include <system_error>

namespace bt {
namespace {

[[noreturn]] void fail(chain_errc code, const std::string& message) {
  throw std::system_error(make_error_code(code), message);
}

// Follows one-field composites (newtypes such as NetUid) to the type that is encoded.
const portable_type& through_newtypes(const runtime_metadata& md, std::uint32_t id) {
  const portable_type* t = &md.type(id);
  for (int depth = 0;
       depth < 16 && t->shape == portable_type::kind::composite && t->fields.size() == 1; ++depth)
    t = &md.type(t->fields[0].type);
  return *t;
}

// Writes an unsigned value as the metadata's type for it: u8..u128 (fixed) or Compact<_>.
void write_uint(const runtime_metadata& md, std::uint32_t id, uint128_t value, scale_writer& w,
                const std::string& what) {
  const portable_type& t = through_newtypes(md, id);
  if (t.shape == portable_type::kind::compact) {
    w.compact_u128(value);
    return;
  }
  if (t.shape != portable_type::kind::primitive)
    fail(chain_errc::bad_metadata, what + ": not an integer");
  int bytes = 0;
  switch (t.primitive) {
    case scale_primitive::u8:
      bytes = 1;
      break;
    case scale_primitive::u16:
      bytes = 2;
      break;
    case scale_primitive::u32:
      bytes = 4;
      break;
    case scale_primitive::u64:
      bytes = 8;
      break;
    case scale_primitive::u128:
      bytes = 16;
      break;
    default:
      fail(chain_errc::bad_metadata, what + ": not an unsigned integer");
  }
  if (bytes < 16 && (value >> (8 * bytes)) != 0)
    fail(chain_errc::invalid_argument, what + ": value does not fit the runtime's type");
  for (int i = 0; i < bytes; ++i) w.u8(static_cast<std::uint8_t>(value >> (8 * i)));
}

// The variant `name` of an enum type, or nullptr.
const type_variant* variant_named(const portable_type& t, std::string_view name) {
  for (const auto& v : t.variants)
    if (v.name == name) return &v;
  return nullptr;
}

// Where the metadata states them (V15, V16), the address and signature enums must have the
// variants we encode: MultiAddress::Id = 0 and MultiSignature::Sr25519 = 1.
void check_envelope(const runtime_metadata& md) {
  if (md.address_type) {
    const type_variant* id = variant_named(md.type(*md.address_type), "Id");
    if (!id || id->index != 0)
      fail(chain_errc::bad_metadata, "the extrinsic address type has no MultiAddress::Id = 0");
  }
  if (md.signature_type) {
    const type_variant* sr = variant_named(md.type(*md.signature_type), "Sr25519");
    if (!sr || sr->index != 1)
      fail(chain_errc::bad_metadata,
           "the extrinsic signature type has no MultiSignature::Sr25519 = 1");
  }
  if (std::find(md.extrinsic_versions.begin(), md.extrinsic_versions.end(), 4) ==
      md.extrinsic_versions.end())
    fail(chain_errc::bad_metadata, "the runtime does not accept version-4 extrinsics");
}

void append(std::vector<std::uint8_t>& out, std::span<const std::uint8_t> b) {
  out.insert(out.end(), b.begin(), b.end());
}

}  // namespace

mortal_era mortal_era::from_block(std::uint64_t period, std::uint64_t current) noexcept {
  std::uint64_t p = period <= 4 ? 4 : std::bit_ceil(std::min<std::uint64_t>(period, 1u << 16));
  p = std::clamp<std::uint64_t>(p, 4, 1u << 16);
  const std::uint64_t phase = current % p;
  const std::uint64_t q = std::max<std::uint64_t>(p >> 12, 1);
  return {p, phase / q * q};
}

std::array<std::uint8_t, 2> mortal_era::encode() const noexcept {
  const std::uint64_t q = std::max<std::uint64_t>(period >> 12, 1);
  const int tz = std::countr_zero(period);
  const std::uint16_t low = static_cast<std::uint16_t>(std::clamp(tz - 1, 1, 15));
  const std::uint16_t v = static_cast<std::uint16_t>(low | ((phase / q) << 4));
  return {static_cast<std::uint8_t>(v), static_cast<std::uint8_t>(v >> 8)};
}

std::uint64_t mortal_era::birth(std::uint64_t current) const noexcept {
  return (std::max(current, phase) - phase) / period * period + phase;
}

std::optional<std::pair<uint128_t, std::uint8_t>> parse_ip(std::string_view text) {
  if (text.size() > INET6_ADDRSTRLEN) return std::nullopt;
  const std::string s(text);
  std::uint8_t buf[16];
  if (inet_pton(AF_INET, s.c_str(), buf) == 1) {
    uint128_t v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 8) | buf[i];
    return std::pair{v, std::uint8_t{4}};
  }
  if (inet_pton(AF_INET6, s.c_str(), buf) == 1) {
    uint128_t v = 0;
    for (int i = 0; i < 16; ++i) v = (v << 8) | buf[i];
    return std::pair{v, std::uint8_t{6}};
  }
  return std::nullopt;
}

void check_serve_axon_args(const serve_axon_args& a) {
  if (a.port == 0) fail(chain_errc::invalid_argument, "port 0: the chain refuses it");
  if (a.ip_type == 4) {
    if (a.ip > 0xffffffffu)
      fail(chain_errc::invalid_argument, "ip_type 4 with an ip above 32 bits");
    const auto v4 = static_cast<std::uint32_t>(a.ip);
    if (v4 == 0) fail(chain_errc::invalid_argument, "unspecified address 0.0.0.0");
    if ((v4 >> 24) == 127) fail(chain_errc::invalid_argument, "loopback address (127.0.0.0/8)");
    if (v4 == 0xffffffffu) fail(chain_errc::invalid_argument, "broadcast address 255.255.255.255");
  } else if (a.ip_type == 6) {
    if (a.ip == 0) fail(chain_errc::invalid_argument, "unspecified address ::");
    if (a.ip == 1) fail(chain_errc::invalid_argument, "loopback address ::1");
    if (a.ip == ~static_cast<uint128_t>(0))
      fail(chain_errc::invalid_argument, "all-ones IPv6 address");
    // IPv4-mapped (::ffff:a.b.c.d) loopback or unspecified.
    if ((a.ip >> 32) == 0xffff) {
      const auto v4 = static_cast<std::uint32_t>(a.ip);
      if (v4 == 0 || (v4 >> 24) == 127)
        fail(chain_errc::invalid_argument, "IPv4-mapped loopback or unspecified address");
    }
  } else {
    fail(chain_errc::invalid_argument,
         "ip_type " + std::to_string(a.ip_type) + ": the chain accepts 4 and 6 only");
  }
}

std::vector<std::uint8_t> encode_serve_axon_call(const runtime_metadata& md,
                                                 const serve_axon_args& a) {
  check_serve_axon_args(a);
  const call_ref call = md.find_call("SubtensorModule", "serve_axon");
  const std::pair<const char*, uint128_t> args[] = {{"netuid", a.netuid},
                                                    {"version", a.version},
                                                    {"ip", a.ip},
                                                    {"port", a.port},
                                                    {"ip_type", a.ip_type},
                                                    {"protocol", a.protocol},
                                                    {"placeholder1", a.placeholder1},
                                                    {"placeholder2", a.placeholder2}};
  const auto& fields = call.variant->fields;
  if (fields.size() != std::size(args))
    fail(chain_errc::bad_metadata, "SubtensorModule.serve_axon has " +
                                       std::to_string(fields.size()) + " arguments, expected 8");
  scale_writer w;
  w.u8(call.pallet_index);
  w.u8(call.call_index);
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const std::string name = fields[i].name.value_or("");
    if (name != args[i].first)
      fail(chain_errc::bad_metadata, "SubtensorModule.serve_axon argument " + std::to_string(i) +
                                         " is '" + name + "', expected '" + args[i].first + "'");
    write_uint(md, fields[i].type, args[i].second, w, std::string("serve_axon.") + name);
  }
  return w.take();
}

signed_extrinsic sign_extrinsic(const runtime_metadata& md, std::vector<std::uint8_t> call,
                                const signing_context& ctx, const keypair& signer) {
  if (signer.type() != crypto_type::sr25519 || !signer.has_secret())
    fail(chain_errc::invalid_argument, "the signer must be an sr25519 keypair with its secret");
  check_envelope(md);

  scale_writer extra;
  scale_writer implicit;
  for (const auto& x : md.extensions) {
    const bool extra_empty = md.is_empty_type(x.extra_type);
    const bool implicit_empty = md.is_empty_type(x.implicit_type);
    // What we encode for a known extension, and whether that matches the metadata's types.
    const auto expect = [&](bool has_extra, bool has_implicit) {
      if (has_extra == extra_empty || has_implicit == implicit_empty)
        fail(chain_errc::bad_metadata,
             "signed extension " + x.identifier + " does not have the data this client encodes");
    };
    const std::string& id = x.identifier;
    if (id == "CheckSpecVersion") {
      expect(false, true);
      write_uint(md, x.implicit_type, ctx.spec_version, implicit, id);
    } else if (id == "CheckTxVersion") {
      expect(false, true);
      write_uint(md, x.implicit_type, ctx.transaction_version, implicit, id);
    } else if (id == "CheckGenesis") {
      expect(false, true);
      implicit.bytes(ctx.genesis_hash);
    } else if (id == "CheckMortality" || id == "CheckEra") {
      expect(true, true);
      extra.bytes(ctx.era.encode());
      implicit.bytes(ctx.era_block_hash);
    } else if (id == "CheckNonce") {
      expect(true, false);
      write_uint(md, x.extra_type, ctx.nonce, extra, id);
    } else if (id == "ChargeTransactionPayment") {
      expect(true, false);
      write_uint(md, x.extra_type, ctx.tip, extra, id);
    } else if (id == "CheckMetadataHash") {
      expect(true, true);
      extra.u8(0);             // Mode::Disabled
      implicit.option(false);  // no metadata hash
    } else if (extra_empty && implicit_empty) {
      // CheckNonZeroSender, CheckWeight and the runtime's own no-data extensions.
    } else {
      fail(chain_errc::unknown_extension,
           "signed extension " + id + " carries data this client cannot encode");
    }
  }

  signed_extrinsic out;
  out.call = std::move(call);
  out.extra = extra.take();
  out.implicit = implicit.take();
  std::vector<std::uint8_t> payload;
  payload.reserve(out.call.size() + out.extra.size() + out.implicit.size());
  append(payload, out.call);
  append(payload, out.extra);
  append(payload, out.implicit);
  if (payload.size() > 256) {
    const hash256 h = blake2b_256(payload);
    payload.assign(h.begin(), h.end());
  }
  out.signing_payload = std::move(payload);
  out.signature = signer.sign(out.signing_payload);

  scale_writer body;
  body.u8(0x84);  // signed, format version 4
  body.u8(0);     // MultiAddress::Id
  body.bytes(signer.public_key());
  body.u8(1);  // MultiSignature::Sr25519
  body.bytes(out.signature);
  body.bytes(out.extra);
  body.bytes(out.call);
  scale_writer whole;
  whole.byte_vec(body.view());
  out.extrinsic = whole.take();
  return out;
}

}  // namespace bt
