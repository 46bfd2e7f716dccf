// Synapse.body_hash (PROTOCOL 3.1): H(H(str(v1)) || ... || H(str(vn))) over the descriptor's
// hash fields in required_hash_fields order, H = lowercase hex SHA3-256.
#include <bt/body_hash.hpp>

#include <bt/hex.hpp>
#include <bt/sha3.hpp>

#include <atomic>

namespace bt {
namespace {

std::atomic<std::uint64_t> passes{0};

std::string_view hex_of(const sha3_256_digest& d, char (&buf)[64]) noexcept {
  write_hex(d, buf);
  return {buf, sizeof buf};
}

}  // namespace

std::string body_hash(const synapse_descriptor& d, const synapse& s) {
  if (d.hash_fields().empty()) return d.constant_body_hash();
  passes.fetch_add(1, std::memory_order_relaxed);
  sha3_256_hasher outer;
  std::string text;
  text.reserve(64);
  char hex[64];
  for (std::size_t index : d.hash_fields()) {
    const auto& f = d.fields()[index];
    text.clear();
    f.ops->python_str(s, f, text);
    outer.update(hex_of(sha3_256(text), hex));
  }
  return std::string(hex_of(outer.finish(), hex));
}

namespace detail {
std::uint64_t body_hash_passes() noexcept {
  return passes.load(std::memory_order_relaxed);
}
}  // namespace detail

}  // namespace bt
