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

/// The outer hash over the hex digests of each hashed field's text; `text_of(i)` gives the i-th
/// hashed field's str(), valid until the next call. Counts one pass.
template <class TextOf>
std::string hash_texts(std::size_t count, TextOf&& text_of) {
  passes.fetch_add(1, std::memory_order_relaxed);
  sha3_256_hasher outer;
  char hex[64];
  for (std::size_t i = 0; i < count; ++i) outer.update(hex_of(sha3_256(text_of(i)), hex));
  return std::string(hex_of(outer.finish(), hex));
}

void append_text(const synapse_descriptor& d, const synapse& s, std::size_t i, std::string& out) {
  const auto& f = d.fields()[d.hash_fields()[i]];
  f.ops->python_str(s, f, out);
}

}  // namespace

std::string body_hash(const synapse_descriptor& d, const synapse& s) {
  if (d.hash_fields().empty()) return d.constant_body_hash();
  std::string text;
  text.reserve(64);
  return hash_texts(d.hash_fields().size(), [&](std::size_t i) -> const std::string& {
    text.clear();
    append_text(d, s, i, text);
    return text;
  });
}

const std::string& body_hash_memo::compute(const synapse_descriptor& d, const synapse& s) {
  type_ = &d;
  const std::size_t n = d.hash_fields().size();
  texts_.resize(n);
  if (n == 0) return hash_ = d.constant_body_hash();
  for (std::size_t i = 0; i < n; ++i) {
    texts_[i].clear();
    append_text(d, s, i, texts_[i]);
  }
  hash_ = hash_texts(n, [&](std::size_t i) -> const std::string& { return texts_[i]; });
  return hash_;
}

const std::string& body_hash_memo::current(const synapse_descriptor& d, const synapse& s) {
  if (type_ != &d) return compute(d, s);
  std::string text;
  for (std::size_t i = 0; i < texts_.size(); ++i) {
    text.clear();
    append_text(d, s, i, text);
    if (text != texts_[i]) return compute(d, s);
  }
  return hash_;
}

namespace detail {
std::uint64_t body_hash_passes() noexcept {
  return passes.load(std::memory_order_relaxed);
}
}  // namespace detail

}  // namespace bt
