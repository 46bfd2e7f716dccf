// Epistula v2 request signing (see epistula.hpp).
#include <bt/epistula.hpp>

#include <bt/detail/uuid.hpp>
#include <bt/hex.hpp>
#include <bt/sha256.hpp>

#include <chrono>

namespace bt::epistula {

std::string signed_message(std::string_view body_sha256_hex, std::string_view uuid,
                           std::string_view timestamp, std::string_view signed_for) {
  std::string m;
  m.reserve(body_sha256_hex.size() + uuid.size() + timestamp.size() + signed_for.size() + 3);
  m.append(body_sha256_hex);
  m.push_back('.');
  m.append(uuid);
  m.push_back('.');
  m.append(timestamp);
  m.push_back('.');
  m.append(signed_for);
  return m;
}

request_headers sign_request(const keypair& key, std::string_view body, std::string_view signed_for,
                             std::int64_t timestamp_ms) {
  request_headers h;
  h.timestamp = std::to_string(timestamp_ms);
  h.uuid = detail::make_uuid4();
  h.signed_by = key.ss58_address();
  h.signed_for = std::string(signed_for);
  const auto sig = key.sign(signed_message(sha256_hex(body), h.uuid, h.timestamp, signed_for));
  h.signature = "0x" + to_hex(sig);
  return h;
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace bt::epistula
