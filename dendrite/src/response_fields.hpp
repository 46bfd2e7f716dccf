// The header fields of a response the dendrite reads: Beast's fields with an allocator that
// takes their memory from the call's response_arena, so parsing an answer's ~20 header fields
// costs no heap allocation (with std::allocator, Beast allocates one element per field). And
// the codec's merges of such a response (dendrite_codec.cpp).
#pragma once

#include <bt/detail/dendrite_ops.hpp>  // synapse_ref

#include <boost/beast/http/fields.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <cstddef>
#include <new>
#include <string>
#include <string_view>
#include <system_error>

namespace bt::detail {

/// Bump allocation for one response's head: a fixed block in the call, then (a head larger than
/// it) one heap allocation each. Nothing is freed before reset(), which frees the heap part and
/// must only run once nothing allocated here is in use (the parser that used it is destroyed).
/// Used by one call's executor at a time, like the call's parser.
class response_arena {
 public:
  /// Enough for a typical answer's head (a synapse answer: ~20 fields, ~1 KiB of text).
  static constexpr std::size_t inline_bytes = 4096;

  response_arena() = default;
  response_arena(const response_arena&) = delete;
  response_arena& operator=(const response_arena&) = delete;
  ~response_arena() { reset(); }

  void* allocate(std::size_t bytes, std::size_t align) {
    const std::size_t at = (used_ + align - 1) & ~(align - 1);
    if (align <= alignof(std::max_align_t) && at <= inline_bytes && bytes <= inline_bytes - at) {
      used_ = at + bytes;
      return block_ + at;
    }
    return allocate_spilled(bytes, align);
  }

  /// Frees every allocation at once.
  void reset() noexcept {
    used_ = 0;
    while (spilled_) {
      spilled* next = spilled_->next;
      ::operator delete(spilled_);
      spilled_ = next;
    }
  }

 private:
  /// A heap allocation of a head that outgrew the block, linked to be freed by reset().
  struct spilled {
    spilled* next;
  };

  void* allocate_spilled(std::size_t bytes, std::size_t align) {
    // The link sits in front of the allocation, padded to keep it aligned.
    const std::size_t pad = align > sizeof(spilled) ? align : alignof(std::max_align_t);
    if (align > alignof(std::max_align_t) || bytes > static_cast<std::size_t>(-1) - pad)
      throw std::bad_alloc();
    auto* s = static_cast<spilled*>(::operator new(pad + bytes));
    s->next = spilled_;
    spilled_ = s;
    return reinterpret_cast<std::byte*>(s) + pad;
  }

  alignas(std::max_align_t) std::byte block_[inline_bytes];
  std::size_t used_ = 0;
  spilled* spilled_ = nullptr;
};

/// An allocator over a response_arena (deallocate does nothing: the arena's reset frees).
template <class T>
class arena_allocator {
 public:
  using value_type = T;

  explicit arena_allocator(response_arena& arena) noexcept : arena_(&arena) {}
  template <class U>
  arena_allocator(const arena_allocator<U>& other) noexcept : arena_(other.arena()) {}

  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(arena_->allocate(n * sizeof(T), alignof(T)));
  }
  void deallocate(T*, std::size_t) noexcept {}

  response_arena* arena() const noexcept { return arena_; }

  template <class U>
  bool operator==(const arena_allocator<U>& other) const noexcept {
    return arena_ == other.arena();
  }

 private:
  response_arena* arena_;
};

using response_fields = boost::beast::http::basic_fields<arena_allocator<char>>;
/// A response as the dendrite reads it (the dialects see it whole).
using http_response =
    boost::beast::http::response<boost::beast::http::string_body, response_fields>;

/// apply_response and apply_stream_headers (bt/detail/dendrite_ops.hpp) of a response read
/// with the arena's fields.
std::error_code apply_response(const synapse_ref& ref, unsigned status,
                               const response_fields& headers, std::string_view body,
                               std::string& detail);
std::error_code apply_stream_headers(synapse& s, const response_fields& headers,
                                     std::string& detail);

}  // namespace bt::detail
