// The header codec: synapse <-> HTTP headers exactly as Bittensor's Synapse.to_headers() and
// from_headers() (PROTOCOL section 2), driven by the per-type descriptor.
#pragma once

#include <bt/codec_error.hpp>
#include <bt/synapse.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bt {

/// Receives headers in emission order. Names are lower case; values contain no CR/LF.
class header_sink {
 public:
  virtual void add(std::string_view name, std::string_view value) = 0;

 protected:
  ~header_sink() = default;
};

/// A header_sink collecting (name, value) pairs.
struct header_list final : header_sink {
  std::vector<std::pair<std::string, std::string>> items;
  void add(std::string_view name, std::string_view value) override {
    items.emplace_back(std::string(name), std::string(value));
  }
  /// Value of the first header with this exact name, or nullptr.
  const std::string* find(std::string_view name) const;
};

struct to_headers_options {
  /// Body length to include in total_size (our sizes are honest byte counts, PROTOCOL 2.4):
  /// header_size = bytes of the headers before it ("name: value\r\n" each),
  /// total_size  = header_size + body_bytes.
  std::size_t body_bytes = 0;
  /// When non-empty, emitted as computed_body_hash instead of hashing the hash fields again:
  /// a dendrite has just computed it for the signature, and each hashed field costs a SHA3-256.
  /// The caller guarantees it equals body_hash(d, s).
  std::string_view computed_body_hash = {};
};

/// Emits the headers of PROTOCOL 2.1 in Python's order: name, timeout, bt_header_axon_*,
/// bt_header_dendrite_*, bt_header_input_obj_* (required, non-null fields), header_size,
/// total_size, computed_body_hash (recomputed from the hash fields). Values are Python str();
/// header copies of messages are sanitised (control characters -> ' ', non-ASCII -> '?').
void to_headers(const synapse_descriptor& d, const synapse& s, header_sink& out,
                const to_headers_options& opt = {});

template <class T>
void to_headers(const T& s, header_sink& out, const to_headers_options& opt = {}) {
  to_headers(descriptor_for(s), s, out, opt);
}

/// What a header_reader stores. `axon_block`: a dendrite merges only the answer's axon block
/// (PROTOCOL 6.4), so a text value elsewhere is checked exactly as a stored one (the same
/// errors) but not copied; the target's members outside the axon block are then unspecified.
enum class header_scope { everything, axon_block };

/// Incremental header parser (PROTOCOL 2.7, stricter: names match by exact prefix,
/// case-insensitively). Feed every request or response header, then read the result.
/// Fills the base-synapse part of `target`: timeout, total_size, header_size,
/// computed_body_hash, dendrite.*, axon.*. bt_header_input_obj_* placeholders are checked to be
/// base64 JSON but never taken as data. Unknown headers are ignored.
/// A malformed value stops at the first error, which names the header.
class header_reader {
 public:
  /// Values longer than this (or names longer than 256 bytes) are rejected (value_too_long).
  static constexpr std::size_t max_value_bytes = 8192;

  explicit header_reader(synapse& target, header_scope scope = header_scope::everything) noexcept
      : target_(target), scope_(scope) {}

  /// Returns false once an error occurred (later calls are ignored).
  bool feed(std::string_view name, std::string_view value);
  const error& result() const noexcept { return err_; }
  /// Whether a computed_body_hash header was seen.
  bool saw_body_hash() const noexcept { return saw_body_hash_; }

 private:
  synapse& target_;
  header_scope scope_;
  error err_;
  bool saw_body_hash_ = false;
};

/// Parses a whole header collection: any range of elements with name and value accessors
/// (Beast fields: name_string()/value()) or of pairs.
template <class Fields>
error from_headers(const Fields& fields, synapse& target,
                   header_scope scope = header_scope::everything) {
  header_reader r(target, scope);
  for (const auto& f : fields) {
    if constexpr (requires { f.name_string(); }) {
      r.feed(std::string_view(f.name_string().data(), f.name_string().size()),
             std::string_view(f.value().data(), f.value().size()));
    } else {
      r.feed(f.first, f.second);
    }
  }
  return r.result();
}

/// Python int() of a header value: optional whitespace, sign, digits with single '_' between.
bool parse_python_int(std::string_view text, std::int64_t& out) noexcept;
/// Python float() of a header value ("12", "12.0", "1e-05", "inf", "nan", '_' separators).
bool parse_python_float(std::string_view text, double& out) noexcept;

}  // namespace bt
