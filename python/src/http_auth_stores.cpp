// bittensor_cpp.http_auth.InMemoryNonceStore and RedisNonceStore (see http_auth_stores.hpp).
#include "http_auth_stores.hpp"

#include <sys/time.h>
#include <chrono>
#include <cmath>
#include <stdexcept>

namespace btpy {
namespace {

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

[[noreturn]] void raise_connection_error(const std::string& message) {
  PyErr_SetString(PyExc_ConnectionError, message.c_str());
  throw py::error_already_set();
}

/// One command's reply, freed with it.
using reply_ptr = std::unique_ptr<redisReply, decltype(&freeReplyObject)>;

reply_ptr command(redisContext* c, int argc, const char** argv, const std::size_t* lens) {
  return reply_ptr(static_cast<redisReply*>(redisCommandArgv(c, argc, argv, lens)),
                   &freeReplyObject);
}

}  // namespace

std::int64_t seconds_to_ns(double seconds, const char* what) {
  if (!std::isfinite(seconds) || seconds < 0 || seconds > 1e9)
    throw py::value_error(std::string(what) + " must be a number of seconds from 0 to 1e9");
  return std::llround(seconds * 1e9);
}

memory_nonce_store::memory_nonce_store(double retention_s)
    : retention_ns_(seconds_to_ns(retention_s, "retention")) {}

void memory_nonce_store::expire(std::int64_t now_ns) {
  while (!by_expiry_.empty() && by_expiry_.front().first <= now_ns) {
    seen_.erase(by_expiry_.front().second);
    by_expiry_.pop_front();
  }
}

bool memory_nonce_store::check_and_store(const std::string& hotkey, std::int64_t nonce_ns) {
  // The nonce is last and all digits, so the key names one (hotkey, nonce) pair only.
  std::string key = hotkey;
  key.push_back(' ');
  key.append(std::to_string(nonce_ns));
  const std::int64_t now = steady_ns();
  std::lock_guard lock(m_);
  expire(now);
  if (!seen_.insert(key).second) return false;
  by_expiry_.emplace_back(now + retention_ns_, std::move(key));
  return true;
}

std::size_t memory_nonce_store::size() {
  std::lock_guard lock(m_);
  expire(steady_ns());
  return seen_.size();
}

redis_nonce_store_py::redis_nonce_store_py(py::object url_or_client, double retention_s,
                                           std::string prefix, double timeout_s)
    : retention_ns_(seconds_to_ns(retention_s, "retention")),
      expiry_s_((retention_ns_ + 999'999'999) / 1'000'000'000),
      prefix_(std::move(prefix)),
      timeout_us_(seconds_to_ns(timeout_s, "timeout") / 1000) {
  if (expiry_s_ < 1) throw py::value_error("retention must be positive");
  if (timeout_us_ < 1000) throw py::value_error("timeout must be at least 0.001 seconds");
  if (py::isinstance<py::str>(url_or_client))
    where_ = bt::redis_nonce_store::parse_url(url_or_client.cast<std::string>());
  else if (py::hasattr(url_or_client, "set"))
    client_ = std::move(url_or_client);
  else
    throw py::type_error("RedisNonceStore needs a redis:// URL or a client with a set() method");
}

redis_nonce_store_py::~redis_nonce_store_py() = default;

std::string redis_nonce_store_py::key(const std::string& hotkey, std::int64_t nonce_ns) const {
  return prefix_ + ":" + hotkey + ":" + std::to_string(nonce_ns);
}

bool redis_nonce_store_py::check_and_store(const std::string& hotkey, std::int64_t nonce_ns) {
  const std::string k = key(hotkey, nonce_ns);
  if (client_) {
    py::object stored = client_.attr("set")(k, 1, py::arg("nx") = true, py::arg("ex") = expiry_s_);
    return py::bool_(stored);
  }
  std::string error;
  bool stored = false;
  {
    py::gil_scoped_release release;
    try {
      stored = set_over_connection(k);
    } catch (const std::runtime_error& e) {
      error = e.what();
    }
  }
  if (!error.empty()) raise_connection_error(error);
  return stored;
}

redis_nonce_store_py::context_ptr redis_nonce_store_py::connect() const {
  const std::string at = where_.host + ":" + std::to_string(where_.port);
  timeval tv{static_cast<time_t>(timeout_us_ / 1'000'000),
             static_cast<suseconds_t>(timeout_us_ % 1'000'000)};
  context_ptr c(redisConnectWithTimeout(where_.host.c_str(), where_.port, tv), &redisFree);
  if (!c) throw std::runtime_error("redis " + at + ": out of memory");
  if (c->err) throw std::runtime_error("redis " + at + ": " + c->errstr);
  redisSetTimeout(c.get(), tv);
  const auto expect_ok = [&](int argc, const char** argv, const std::size_t* lens,
                             const char* what) {
    reply_ptr r = command(c.get(), argc, argv, lens);
    if (!r) throw std::runtime_error("redis " + at + ": " + what + ": " + c->errstr);
    if (r->type == REDIS_REPLY_ERROR)  // Redis's text names the problem, never the password
      throw std::runtime_error("redis " + at + ": " + what + ": " + std::string(r->str, r->len));
  };
  if (!where_.password.empty()) {
    if (where_.user.empty()) {
      const char* argv[] = {"AUTH", where_.password.c_str()};
      const std::size_t lens[] = {4, where_.password.size()};
      expect_ok(2, argv, lens, "AUTH");
    } else {
      const char* argv[] = {"AUTH", where_.user.c_str(), where_.password.c_str()};
      const std::size_t lens[] = {4, where_.user.size(), where_.password.size()};
      expect_ok(3, argv, lens, "AUTH");
    }
  }
  if (where_.db != 0) {
    const std::string db = std::to_string(where_.db);
    const char* argv[] = {"SELECT", db.c_str()};
    const std::size_t lens[] = {6, db.size()};
    expect_ok(2, argv, lens, "SELECT");
  }
  return c;
}

bool redis_nonce_store_py::set_over_connection(const std::string& k) {
  std::lock_guard lock(m_);
  if (!ctx_) ctx_ = connect();
  const std::string ex = std::to_string(expiry_s_);
  const char* argv[] = {"SET", k.c_str(), "1", "NX", "EX", ex.c_str()};
  const std::size_t lens[] = {3, k.size(), 1, 2, 2, ex.size()};
  reply_ptr r = command(ctx_.get(), 6, argv, lens);
  if (!r) {
    const std::string why = ctx_->errstr;
    ctx_.reset();  // broken or timed out: the next call connects again
    throw std::runtime_error("redis " + where_.host + ":" + std::to_string(where_.port) +
                             ": SET: " + why);
  }
  if (r->type == REDIS_REPLY_ERROR)
    throw std::runtime_error("redis: SET: " + std::string(r->str, r->len));
  return r->type == REDIS_REPLY_STATUS;  // +OK: stored; nil: the key existed
}

void redis_nonce_store_py::close() {
  py::gil_scoped_release release;
  std::lock_guard lock(m_);
  ctx_.reset();
}

void init_http_auth_stores(py::module_& auth) {
  py::class_<memory_nonce_store, std::shared_ptr<memory_nonce_store>>(
      auth, "InMemoryNonceStore",
      "The (hotkey, nonce) pairs this process accepted, each kept `retention` seconds after it "
      "was stored, then forgotten (memory stays bounded). Thread-safe; not shared between "
      "processes (use RedisNonceStore for a fleet).")
      .def(py::init<double>(), py::arg("retention") = 60.0)
      .def_property_readonly("retention", &memory_nonce_store::retention,
                             "Seconds a record is kept.")
      .def("check_and_store", &memory_nonce_store::check_and_store, py::arg("hotkey"),
           py::arg("nonce_ns"), "True (and records it) on first use, False when seen before.")
      .def("__len__", &memory_nonce_store::size, "Records held now.");

  py::class_<redis_nonce_store_py, std::shared_ptr<redis_nonce_store_py>>(
      auth, "RedisNonceStore",
      "Records in Redis, shared by every process that uses it: SET {prefix}:{hotkey}:{nonce} 1 "
      "NX EX {retention}. Given a redis:// URL it connects itself (the GIL released during the "
      "round trip); given a client object (redis-py's), it calls client.set(). An unreachable "
      "Redis raises ConnectionError (fail closed).")
      .def(py::init<py::object, double, std::string, double>(), py::arg("url_or_client"),
           py::kw_only(), py::arg("retention") = 60.0, py::arg("prefix") = "btauth",
           py::arg("timeout") = 1.0)
      .def_property_readonly("retention", &redis_nonce_store_py::retention,
                             "Seconds a record is kept (EX rounds it up to whole seconds).")
      .def_property_readonly("prefix", &redis_nonce_store_py::prefix)
      .def("key", &redis_nonce_store_py::key, py::arg("hotkey"), py::arg("nonce_ns"),
           "The Redis key of a (hotkey, nonce) record.")
      .def("check_and_store", &redis_nonce_store_py::check_and_store, py::arg("hotkey"),
           py::arg("nonce_ns"), "True (and records it) on first use, False when seen before.")
      .def("close", &redis_nonce_store_py::close,
           "Drops the connection; the next call connects again.");
}

}  // namespace btpy
