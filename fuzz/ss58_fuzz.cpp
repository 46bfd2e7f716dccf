// Fuzz target: SS58 addresses (bt::ss58::decode, encode) and keypair::from_ss58.
//
// Invariants:
//  - an address that decodes re-encodes (same key, same format) to an address that decodes to
//    the same key and format, and to the very same text unless the input spelled a format below
//    64 in the two-byte form (which sp-core accepts too; the re-encoding is then shorter);
//  - any 32 bytes + format in 0..16383 except 46/47 encode, and decode back (second half of
//    the input, when it is at least 34 bytes long).
#include <bt/ss58.hpp>

#include "fuzz_support.hpp"

#include <algorithm>
#include <array>
#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  bt::fuzz::init_once();
  const std::string_view text = bt::fuzz::as_text(data, size);

  std::error_code ec;
  const auto d = bt::ss58::decode(text, ec);
  BT_FUZZ_CHECK(d.has_value() == !ec);
  if (d) {
    BT_FUZZ_CHECK(d->format <= bt::ss58::max_format && d->format != 46 && d->format != 47);
    std::error_code ec2;
    const auto again = bt::ss58::encode(d->public_key, d->format, ec2);
    BT_FUZZ_CHECK(again.has_value() && !ec2);
    const auto d2 = bt::ss58::decode(*again, ec2);
    BT_FUZZ_CHECK(d2 && d2->public_key == d->public_key && d2->format == d->format);
    if (*again != text) BT_FUZZ_CHECK(d->format < 64 && again->size() < text.size());
    bt::error err;
    const auto kp = bt::keypair::from_ss58(text, bt::crypto_type::sr25519, err);
    BT_FUZZ_CHECK(!kp || kp->public_key() == d->public_key);
  }

  if (size >= 34) {
    std::array<std::uint8_t, 32> key{};
    std::memcpy(key.data(), data, 32);
    const int format = ((data[32] << 8) | data[33]) & 0x3fff;
    std::error_code ec3;
    const auto enc = bt::ss58::encode(key, format, ec3);
    if (format == 46 || format == 47) {
      BT_FUZZ_CHECK(!enc && ec3);
    } else {
      BT_FUZZ_CHECK(enc && !ec3);
      const auto dec = bt::ss58::decode(*enc, ec3);
      BT_FUZZ_CHECK(dec && dec->public_key == key && dec->format == format);
    }
  }
  return 0;
}
