#include <bt/ss58.hpp>

#include <bt/key_error.hpp>

#include <sodium.h>

#include <algorithm>
#include <vector>

namespace bt::ss58 {
namespace {

constexpr char alphabet[] = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

// Longest possible address: 2 + 32 + 2 bytes encode to at most 50 characters. Anything longer
// is a length error, found without the quadratic base58 decoding.
constexpr std::size_t max_address_chars = 50;

constexpr std::array<std::int8_t, 128> make_digits() {
  std::array<std::int8_t, 128> d{};
  for (auto& x : d) x = -1;
  for (int i = 0; i < 58; ++i)
    d[static_cast<unsigned char>(alphabet[i])] = static_cast<std::int8_t>(i);
  return d;
}
constexpr auto digit_of = make_digits();

// BLAKE2b-512("SS58PRE" || data)[0..2]
std::array<std::uint8_t, 2> checksum(std::span<const std::uint8_t> data) noexcept {
  static constexpr std::uint8_t pre[] = {'S', 'S', '5', '8', 'P', 'R', 'E'};
  crypto_generichash_state st;
  std::array<std::uint8_t, 64> h;
  crypto_generichash_init(&st, nullptr, 0, h.size());
  crypto_generichash_update(&st, pre, sizeof pre);
  crypto_generichash_update(&st, data.data(), data.size());
  crypto_generichash_final(&st, h.data(), h.size());
  return {h[0], h[1]};
}

std::string base58_encode(std::span<const std::uint8_t> data) {
  std::size_t zeros = 0;
  while (zeros < data.size() && data[zeros] == 0) ++zeros;
  // Big-endian base-58 digits, least significant last; 138/100 > log(256)/log(58).
  std::vector<std::uint8_t> digits((data.size() - zeros) * 138 / 100 + 1, 0);
  std::size_t used = 0;
  for (std::size_t i = zeros; i < data.size(); ++i) {
    int carry = data[i];
    std::size_t j = 0;
    for (auto it = digits.rbegin(); (carry != 0 || j < used) && it != digits.rend(); ++it, ++j) {
      carry += 256 * *it;
      *it = static_cast<std::uint8_t>(carry % 58);
      carry /= 58;
    }
    used = j;
  }
  std::string out(zeros, '1');
  auto it = digits.begin() + static_cast<std::ptrdiff_t>(digits.size() - used);
  for (; it != digits.end(); ++it) out.push_back(alphabet[*it]);
  return out;
}

// Characters and length (<= max_address_chars) are checked by the caller; no allocation.
// Returns the number of bytes written to `out` (leading '1's become zero bytes).
std::size_t base58_decode(std::string_view text,
                          std::array<std::uint8_t, max_address_chars>& out) noexcept {
  std::size_t zeros = 0;
  while (zeros < text.size() && text[zeros] == '1') ++zeros;
  std::array<std::uint8_t, max_address_chars> bytes{};  // big-endian, least significant last
  std::size_t used = 0;
  for (std::size_t i = zeros; i < text.size(); ++i) {
    int carry = digit_of[static_cast<unsigned char>(text[i])];
    std::size_t j = 0;
    for (auto it = bytes.rbegin(); (carry != 0 || j < used) && it != bytes.rend(); ++it, ++j) {
      carry += 58 * *it;
      *it = static_cast<std::uint8_t>(carry & 0xff);
      carry >>= 8;
    }
    used = j;
  }
  // zeros + used <= text.size(): every character yields at most one byte.
  std::fill_n(out.begin(), zeros, 0);
  std::copy(bytes.end() - static_cast<std::ptrdiff_t>(used), bytes.end(),
            out.begin() + static_cast<std::ptrdiff_t>(zeros));
  return zeros + used;
}

bool is_reserved(int format) noexcept {
  return format == 46 || format == 47;
}

/// The last address this thread decoded successfully, and its decoding. A decode is a quadratic
/// base58 division and a BLAKE2b checksum (docs/performance.md, "Crypto"), and its callers decode
/// the same few addresses over and over: the dendrite checks the axon's hotkey on every call, the
/// axon the caller's on every request. The result depends on the text alone, so the cache needs no
/// invalidation; one entry per thread needs no lock.
struct last_decoded {
  std::array<char, max_address_chars> text{};
  std::size_t size = 0;  ///< 0: empty (no valid address is empty)
  decoded value{};

  bool holds(std::string_view address) const noexcept {
    return size != 0 && address.size() == size &&
           std::equal(address.begin(), address.end(), text.begin());
  }
};
thread_local last_decoded last;

}  // namespace

std::optional<std::string> encode(std::span<const std::uint8_t, 32> public_key, int format,
                                  std::error_code& ec) {
  if (format < 0 || format > max_format) {
    ec = key_errc::ss58_bad_prefix;
    return std::nullopt;
  }
  if (is_reserved(format)) {
    ec = key_errc::ss58_reserved_prefix;
    return std::nullopt;
  }
  std::array<std::uint8_t, 2 + 32 + 2> data;
  std::size_t n = 0;
  if (format < 64) {
    data[n++] = static_cast<std::uint8_t>(format);
  } else {
    data[n++] = static_cast<std::uint8_t>(((format & 0xfc) >> 2) | 0x40);
    data[n++] = static_cast<std::uint8_t>((format >> 8) | ((format & 0x03) << 6));
  }
  std::copy(public_key.begin(), public_key.end(), data.begin() + static_cast<std::ptrdiff_t>(n));
  n += 32;
  const auto sum = checksum(std::span(data.data(), n));
  data[n++] = sum[0];
  data[n++] = sum[1];
  ec.clear();
  return base58_encode(std::span(data.data(), n));
}

std::string encode(std::span<const std::uint8_t, 32> public_key, int format) {
  std::error_code ec;
  auto s = encode(public_key, format, ec);
  if (!s) throw std::system_error(ec, "ss58 encode");
  return std::move(*s);
}

std::optional<decoded> decode(std::string_view address, std::error_code& ec) noexcept {
  if (last.holds(address)) {
    ec.clear();
    return last.value;
  }
  const auto fail = [&](key_errc e) {
    ec = e;
    return std::nullopt;
  };
  for (char c : address) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 128 || digit_of[u] < 0) return fail(key_errc::ss58_bad_character);
  }
  if (address.size() > max_address_chars) return fail(key_errc::ss58_bad_length);
  std::array<std::uint8_t, max_address_chars> data;
  const std::size_t size = base58_decode(address, data);
  if (size < 2) return fail(key_errc::ss58_bad_length);
  std::size_t prefix_len;
  int format;
  if (data[0] < 64) {
    prefix_len = 1;
    format = data[0];
  } else if (data[0] < 128) {
    prefix_len = 2;
    const int lower = ((data[0] << 2) & 0xff) | (data[1] >> 6);
    const int upper = data[1] & 0x3f;
    format = lower | (upper << 8);
  } else {
    return fail(key_errc::ss58_bad_prefix);
  }
  if (size != prefix_len + 32 + 2) return fail(key_errc::ss58_bad_length);
  if (is_reserved(format)) return fail(key_errc::ss58_reserved_prefix);
  const auto sum = checksum(std::span(data.data(), prefix_len + 32));
  if (data[prefix_len + 32] != sum[0] || data[prefix_len + 33] != sum[1])
    return fail(key_errc::ss58_bad_checksum);
  decoded out;
  std::copy_n(data.begin() + static_cast<std::ptrdiff_t>(prefix_len), 32, out.public_key.begin());
  out.format = static_cast<std::uint16_t>(format);
  std::copy(address.begin(), address.end(), last.text.begin());
  last.size = address.size();
  last.value = out;
  ec.clear();
  return out;
}

decoded decode(std::string_view address) {
  std::error_code ec;
  auto d = decode(address, ec);
  if (!d) throw std::system_error(ec, "ss58 decode");
  return *d;
}

}  // namespace bt::ss58
