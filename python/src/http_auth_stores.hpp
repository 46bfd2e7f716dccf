// The replay stores of bittensor_cpp.http_auth (btauth/1, PROTOCOL 14): what verify() asks, after
// a signature verified, whether this sender used this nonce before. The contract verify() relies
// on is Python's: an object with `check_and_store(hotkey, nonce_ns) -> bool` (True: first use,
// now recorded; False: seen before) and a `retention` in seconds (how long a record is kept),
// which must cover the freshness window (max_age + allowed_skew) or a replay could pass once its
// record expired while the nonce is still fresh.
#pragma once

#include "common.hpp"

#include <hiredis/hiredis.h>

#include <bt/redis_nonce_store.hpp>

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <utility>

namespace btpy {

/// Seconds (a Python float) as whole nanoseconds; ValueError naming `what` unless finite and
/// within [0, 10^9 s].
std::int64_t seconds_to_ns(double seconds, const char* what);

/// InMemoryNonceStore: one process's records, thread-safe. Memory stays bounded: a record is
/// dropped `retention` after it was stored (by the monotonic clock), so the store holds at most
/// the records of the last `retention` seconds.
class memory_nonce_store {
 public:
  explicit memory_nonce_store(double retention_s);
  double retention() const noexcept { return static_cast<double>(retention_ns_) / 1e9; }
  bool check_and_store(const std::string& hotkey, std::int64_t nonce_ns);
  std::size_t size();

 private:
  void expire(std::int64_t now_ns);  // with m_ held

  std::int64_t retention_ns_;
  std::mutex m_;
  std::unordered_set<std::string> seen_;
  std::deque<std::pair<std::int64_t, std::string>> by_expiry_;  // stored in this order
};

/// RedisNonceStore: records shared by every process using one Redis, each one key
/// `{prefix}:{hotkey}:{nonce}` set with `SET key 1 NX EX {ceil(retention)}` (NX: only the first
/// writer succeeds). Either a URL (redis://[[user]:password@]host[:port][/db], the axon's parser),
/// reached by this class's own hiredis connection with the GIL released during the round trip,
/// or a redis-py-style client object whose set(key, 1, nx=True, ex=seconds) is called.
/// Fail closed: an unreachable Redis or an error reply raises ConnectionError (the request is
/// neither accepted nor recorded); the connection is made again on the next call. A failed SET is
/// never retried, since it may have landed.
class redis_nonce_store_py {
 public:
  redis_nonce_store_py(py::object url_or_client, double retention_s, std::string prefix,
                       double timeout_s);
  ~redis_nonce_store_py();
  redis_nonce_store_py(const redis_nonce_store_py&) = delete;
  redis_nonce_store_py& operator=(const redis_nonce_store_py&) = delete;

  double retention() const noexcept { return static_cast<double>(retention_ns_) / 1e9; }
  const std::string& prefix() const noexcept { return prefix_; }
  /// The key a (hotkey, nonce) record is stored under.
  std::string key(const std::string& hotkey, std::int64_t nonce_ns) const;
  bool check_and_store(const std::string& hotkey, std::int64_t nonce_ns);
  /// Drops the connection (the next call connects again).
  void close();

 private:
  using context_ptr = std::unique_ptr<redisContext, decltype(&redisFree)>;
  /// The SET over our own connection, with the GIL released; throws std::runtime_error.
  bool set_over_connection(const std::string& key);
  context_ptr connect() const;  // with m_ held

  std::int64_t retention_ns_;
  long long expiry_s_;
  std::string prefix_;
  py::object client_;  // a client object, or None when a URL was given
  bt::redis_nonce_store::endpoint where_;
  std::int64_t timeout_us_ = 0;
  std::mutex m_;
  context_ptr ctx_{nullptr, &redisFree};
};

void init_http_auth_stores(py::module_& auth);

}  // namespace btpy
