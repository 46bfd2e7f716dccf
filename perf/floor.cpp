#include "floor.hpp"

#include <bt/body_hash.hpp>
#include <bt/header_codec.hpp>
#include <bt/hex.hpp>
#include <bt/json_body.hpp>
#include <bt/version.hpp>

#include <chrono>
#include <ctime>
#include <stdexcept>

namespace bt::perf {

namespace {

/// CPU time of the calling thread: unlike wall time, not inflated when the scheduler lends the
/// core to another process mid-measurement (this machine is shared); equal to it otherwise.
double thread_cpu_us() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

constexpr const char* example_uuid = "5ecbd69c-1cec-11ee-b0dc-e29ce36fec1a";  // uuid1 text length

}  // namespace

http_exchange make_signed_exchange(const synapse_descriptor& d, synapse& s,
                                   const keypair& dendrite_key, const std::string& axon_hotkey,
                                   std::uint16_t axon_port, bool sign) {
  s.timeout = 5.0;
  s.dendrite.ip = "127.0.0.1";
  s.dendrite.version = version_as_int;
  s.dendrite.nonce = now_ns();
  s.dendrite.uuid = example_uuid;
  s.dendrite.hotkey = dendrite_key.ss58_address();
  s.axon.ip = "127.0.0.1";
  s.axon.port = axon_port;
  s.axon.hotkey = axon_hotkey;
  const std::string hash = body_hash(d, s);
  const std::string message = std::to_string(*s.dendrite.nonce) + "." + *s.dendrite.hotkey + "." +
                              axon_hotkey + "." + *s.dendrite.uuid + "." + hash;
  if (sign) s.dendrite.signature = "0x" + to_hex(dendrite_key.sign(message));

  http_exchange ex;
  ex.target = d.route();
  write_json_body(d, s, ex.request_body, json_style::python_dumps);
  header_list req_headers;
  to_headers(d, s, req_headers, {.body_bytes = ex.request_body.size()});
  ex.request_headers.emplace_back("content-type", "application/json");
  for (auto& kv : req_headers.items) ex.request_headers.push_back(std::move(kv));

  synapse& r = s;  // the axon echoes the body synapse with its status filled in
  r.axon.status_code = 200;
  r.axon.status_message = "Success";
  r.axon.process_time = 0.000123;
  write_json_body(d, r, ex.response_body, json_style::compact);
  header_list res_headers;
  to_headers(d, r, res_headers, {.body_bytes = ex.response_body.size()});
  ex.response_headers.emplace_back("content-type", "application/json");
  for (auto& kv : res_headers.items) ex.response_headers.push_back(std::move(kv));
  return ex;
}

void make_session_shaped(http_exchange& ex) {
  // "v1.{session_id: 32 hex}.{mac: 64 hex}" and "v2.{axon_nonce: 19 digits}.{mac: 64 hex}"
  ex.request_headers.emplace_back("bt-session",
                                  "v1." + std::string(32, 'a') + "." + std::string(64, 'b'));
  ex.response_headers.emplace_back("bt-response-mac",
                                   "v2." + std::to_string(now_ns()) + "." + std::string(64, 'c'));
}

crypto_timings measure_crypto(const keypair& key, std::size_t iterations) {
  if (iterations == 0) iterations = 1;
  const std::string hotkey = key.ss58_address();
  const std::string message = std::to_string(now_ns()) + "." + hotkey + "." + hotkey + "." +
                              example_uuid + "." + std::string(64, 'a');
  crypto_timings t;
  t.message_bytes = message.size();

  signature_bytes sig{};
  for (int i = 0; i < 50; ++i) sig = key.sign(message);  // warm-up (tables, caches)
  double t0 = thread_cpu_us();
  for (std::size_t i = 0; i < iterations; ++i) sig = key.sign(message);
  double t1 = thread_cpu_us();
  t.sign_us = (t1 - t0) / static_cast<double>(iterations);

  const std::span<const std::uint8_t> msg(reinterpret_cast<const std::uint8_t*>(message.data()),
                                          message.size());
  std::size_t failures = 0;
  for (int i = 0; i < 50; ++i)
    failures += static_cast<bool>(verify_signature(key.type(), key.public_key(), msg, sig));
  t0 = thread_cpu_us();
  for (std::size_t i = 0; i < iterations; ++i)
    failures += static_cast<bool>(verify_signature(key.type(), key.public_key(), msg, sig));
  t1 = thread_cpu_us();
  t.verify_us = (t1 - t0) / static_cast<double>(iterations);
  // A verification that fails would make the timing meaningless (an early exit).
  if (failures != 0) throw std::runtime_error("measure_crypto: the signature did not verify");
  return t;
}

}  // namespace bt::perf
