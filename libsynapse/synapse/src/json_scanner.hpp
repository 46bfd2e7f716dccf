// A strict, bounded, exception-free JSON scanner for untrusted input (private to libsynapse).
//
// One pass over the text, either building bt::json for a value (parse_value) or only
// validating it (skip_value), so that a synapse body can be read field by field without a DOM
// of the whole document (the body reader in json_body.cpp). Rules (RFC 8259, plus PROTOCOL 1.4
// and D22): no NaN/Infinity, no comments, no trailing commas; strings must be valid UTF-8 with no
// raw control characters and no lone surrogate escapes; integers must fit 64 bits (positive ones
// become number_unsigned, negative ones number_integer, as nlohmann does) and are never rounded
// through double; floats are converted with std::from_chars (correctly rounded) and must be
// finite; duplicate object keys are refused at every depth, in skipped values too (D22: two
// readers may keep different values of a repeated key, so such a document has no one meaning);
// nesting is bounded.
#pragma once

#include <bt/codec_error.hpp>
#include <bt/json.hpp>

#include "codec_detail.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bt::detail {

/// Set of the keys of one JSON object, for duplicate detection. Keys are views into the input
/// (or into owned copies for keys that contained escapes). Small objects are checked as each
/// key arrives (a linear scan); past `small` keys, keys are only collected, 16 bytes each, and
/// checked once the object closes (repeated(): sort, then compare neighbours), so that a huge
/// object costs n log n time and no more than a small multiple of its own size in memory.
class json_key_set {
 public:
  static constexpr std::size_t small = 16;
  /// False when the key is known to be a repeat now; a repeat among many keys may only be found
  /// by repeated().
  bool insert(std::string_view key) {
    if (keys_.size() < small) {
      for (auto k : keys_)
        if (k == key) return false;
    }
    keys_.push_back(key);
    return true;
  }
  /// At the object's end: a key that occurs twice, or an empty optional.
  std::optional<std::string_view> repeated();
  /// Empties the set for the next object, keeping its capacity.
  void clear() noexcept { keys_.clear(); }

 private:
  std::vector<std::string_view> keys_;
};

/// A number literal's value as the scanner reads it: an integer keeps its sign's JSON type
/// (number_unsigned for a positive one, number_integer for a negative one, "-0" included), a
/// fraction or exponent makes it a double.
struct json_number {
  enum class kind : unsigned char { unsigned_integer, negative_integer, real };
  kind k = kind::unsigned_integer;
  std::uint64_t u = 0;  // unsigned_integer
  std::int64_t i = 0;   // negative_integer
  double d = 0;         // real
  /// The value as bt::json holds it.
  void to_json(json& out) const;
  /// The value as a double (json's get<double>() of to_json's result).
  double as_double() const noexcept {
    return k == kind::real               ? d
           : k == kind::negative_integer ? static_cast<double>(i)
                                         : static_cast<double>(u);
  }
};

class json_scanner {
 public:
  /// `what` names the input in errors ("body", "json").
  json_scanner(std::string_view text, std::size_t max_depth, std::string_view what) noexcept
      : begin_(text.data()),
        p_(text.data()),
        end_(text.data() + text.size()),
        max_depth_(max_depth),
        what_(what) {}

  /// Parses one complete document (value + only whitespace after it) into `out`.
  bool parse_document(json& out);

  // ---- building blocks for streaming readers ------------------------------------------------
  void skip_ws() noexcept {
    // One test for the common case, a character above ' ' (compact JSON has no whitespace).
    while (p_ < end_ && static_cast<unsigned char>(*p_) <= ' ' &&
           (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t'))
      ++p_;
  }
  bool at_end() const noexcept { return p_ == end_; }
  /// Next non-consumed character, or '\0' at the end.
  char peek() const noexcept { return p_ < end_ ? *p_ : '\0'; }
  bool consume(char c) noexcept {
    if (p_ < end_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }
  /// Expects `c` (after whitespace); sets a syntax error otherwise.
  bool expect(char c) {
    if (consume(c)) return true;  // compact JSON: no whitespace before it
    return expect_after_ws(c);
  }

  /// Parses a value at nesting `depth` (the number of containers around it) into `out`.
  bool parse_value(json& out, std::size_t depth);
  /// Validates a value at nesting `depth` without building it.
  bool skip_value(std::size_t depth);
  /// Whether the next characters are an integer literal of at most 18 digits with no fraction or
  /// exponent (so within int64 whatever the digits); a look ahead that consumes nothing.
  bool next_is_short_integer() const noexcept;
  /// Parses a number literal (a '-' or a digit is next) with parse_value's rules and errors.
  bool parse_number(json_number& out);
  /// Scans a string (the opening quote is next) with parse_value's rules and errors: `raw` is
  /// its text between the quotes, still escaped when `escaped`.
  bool scan_string(std::string_view& raw, bool& escaped) {
    // Inline for the common string, printable ASCII up to its closing quote; any other goes
    // through scan_string_slow from its opening quote again.
    const char* start = p_ + 1;
    const char* q = start + json_plain_prefix(start, static_cast<std::size_t>(end_ - start), false);
    if (q < end_ && *q == '"') {
      raw = std::string_view(start, static_cast<std::size_t>(q - start));
      escaped = false;
      p_ = q + 1;
      return true;
    }
    return scan_string_slow(raw, escaped);
  }
  /// Writes a string scan_string accepted into `out`, decoded.
  bool assign_string(std::string_view raw, bool escaped, std::string& out) {
    if (escaped) return decode_string(raw, out);
    out.assign(raw);
    return true;
  }
  /// Parses the literal null ('n' is next), with parse_value's error otherwise.
  bool parse_null() {
    if (end_ - p_ >= 4 && std::memcmp(p_, "null", 4) == 0) {
      p_ += 4;
      return true;
    }
    return literal("null");  // its error
  }
  /// Parses an object key (the opening quote is next) into `key`; a decoded key (one with
  /// escapes) stays alive until the scan ends or, for keys of objects read by parse_value or
  /// skip_value, until its object closes.
  bool parse_key(std::string_view& key) {
    bool escaped = false;
    if (!scan_string(key, escaped)) return false;
    return !escaped || decode_key(key);
  }
  /// Checks that one more container fits at `depth` (for streaming readers that open one).
  bool enter(std::size_t depth);

  bool syntax_error(std::string why);
  /// Records an error with its own code and detail (the first error wins); returns false.
  bool fail(codec_errc code, std::string detail);
  /// Records a duplicate-key error naming `key`; returns false.
  bool duplicate_key(std::string_view key);
  bool failed() const noexcept { return static_cast<bool>(err_); }
  error take_error() { return std::move(err_); }
  /// Byte offset of the next character.
  std::size_t offset() const noexcept { return static_cast<std::size_t>(p_ - begin_); }

 private:
  /// parse_value (Build: into *out) and skip_value (out is null), one grammar.
  template <bool Build>
  bool scan_value(json* out, std::size_t depth);
  bool decode_string(std::string_view raw, std::string& out);
  bool literal(std::string_view word);
  /// scan_string for any string (escapes, UTF-8, errors).
  bool scan_string_slow(std::string_view& raw, bool& escaped);
  /// expect() past whitespace.
  bool expect_after_ws(char c);
  /// Replaces the escaped `key` with its decoded copy, kept in owned_keys_.
  bool decode_key(std::string_view& key);
  /// Empties the key set of the object opening at `depth`. One set per depth is reused for every
  /// object at that depth, so the scan allocates per depth, not per object (unique_key indexes
  /// key_sets_ each time: reading a nested value may grow the vector). Returns the mark of the
  /// decoded keys (owned_keys_) to give back to close_keys when the object closes.
  std::size_t open_keys(std::size_t depth) {
    if (depth >= key_sets_.size()) key_sets_.resize(depth + 1);
    key_sets_[depth].clear();
    return owned_key_count();
  }
  /// Frees the decoded keys of the object just closed and of those nested in it: objects close
  /// in the reverse order they open, so every decoded key past `mark` belongs to the object
  /// closing now or to one nested in it, and no set still refers to it.
  void close_keys(std::size_t mark) noexcept {
    while (owned_key_count() > mark) owned_keys_->pop_back();
  }
  /// Records `key` in the set of the object at `depth`; fails on a repeat. (Inline: this runs
  /// for every key of every object.)
  bool unique_key(std::size_t depth, std::string_view key) {
    return key_sets_[depth].insert(key) || duplicate_key(key);
  }
  /// At the end of the object at `depth`: fails if a key repeated among many.
  bool keys_unique(std::size_t depth) {
    const auto k = key_sets_[depth].repeated();
    return !k || duplicate_key(*k);
  }

  const char* begin_;
  const char* p_;
  const char* end_;
  std::size_t max_depth_;
  std::string_view what_;
  error err_;
  std::size_t owned_key_count() const noexcept { return owned_keys_ ? owned_keys_->size() : 0; }
  // Created at the first key with escapes: libstdc++'s deque allocates twice when constructed,
  // which every body read would pay otherwise. A deque: the keys' views stay valid as it grows.
  std::optional<std::deque<std::string>> owned_keys_;
  std::vector<json_key_set> key_sets_;  // [depth]; depth < enter()'s limit
};

}  // namespace bt::detail
