// bittensor_cpp.http_auth: btauth/1 (PROTOCOL 14), the signed HTTP requests of Bittensor SDK
// v11, with the SDK's call shapes so that a subnet swaps one import. Payload, signing and the
// verifier are libsynapse's bt::btauth (one definition for every end); this file converts Python
// values, releases the GIL while C++ hashes, signs and verifies, raises the SDK's exception
// classes, and asks the replay store (http_auth_stores.hpp) only after the signature verified.
#include "http_auth_stores.hpp"

#include <bt/btauth.hpp>
#include <bt/request_nonce.hpp>
#include <bt/sha256.hpp>
#include <bt/wallet.hpp>

#include <pybind11/stl.h>

#include <array>
#include <atomic>
#include <optional>

namespace btpy {
namespace {

namespace ba = bt::btauth;

/// The module's Python types, made once at import and never freed (the module keeps them too).
struct auth_types {
  PyObject* auth_error = nullptr;
  std::array<PyObject*, 5> by_failure{};  // indexed by bt::btauth::failure
  PyObject* caller = nullptr;
};
auth_types types;

/// An exception class of the module: a subclass of `base` with a `status_code` class attribute
/// (the HTTP status a server should answer with).
PyObject* make_error(py::module_& auth, const char* name, PyObject* base, int status,
                     const char* doc) {
  const std::string qualified = std::string("bittensor_cpp.http_auth.") + name;
  PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, base, nullptr);
  if (!cls) throw py::error_already_set();
  py::handle h(cls);
  h.attr("status_code") = status;
  auth.add_object(name, py::reinterpret_borrow<py::object>(h));
  return cls;  // the reference PyErr_NewExceptionWithDoc returned: kept for the process
}

[[noreturn]] void raise_refusal(const ba::refusal& r) {
  PyErr_SetString(types.by_failure[static_cast<std::size_t>(r.kind)], r.why.c_str());
  throw py::error_already_set();
}

/// A header name or value: str (as UTF-8) or bytes (raw ASGI headers), anything else TypeError.
std::string header_text(py::handle v) {
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  if (py::isinstance<py::bytes>(v)) return std::string(v.cast<py::bytes>());
  throw py::type_error("header names and values must be str or bytes, not " +
                       std::string(py::str(v.get_type().attr("__name__"))));
}

/// The X-Bittensor-* fields of `headers`: a Mapping (its items(), so a multi-dict's repeated
/// names are all seen and refused as repeats) or a sequence of (name, value) pairs.
ba::header_fields read_headers(py::handle headers) {
  ba::header_fields fields;
  const py::object items = py::hasattr(headers, "items")
                               ? headers.attr("items")()
                               : py::reinterpret_borrow<py::object>(headers);
  for (py::handle item : py::iter(items)) {
    const auto pair = item.cast<py::sequence>();
    if (pair.size() != 2) throw py::type_error("a header must be a (name, value) pair");
    const std::string name = header_text(pair[0]);
    if (ba::header_fields::is_btauth(name)) fields.feed(name, header_text(pair[1]));
  }
  return fields;
}

/// The signing key: our Keypair; our Wallet (its hotkey, loaded from disk); or any object whose
/// `hotkey` attribute is our Keypair (an SDK-style wallet), or a method returning one.
std::shared_ptr<bt::keypair> signing_key(py::handle who) {
  if (py::isinstance<bt::keypair>(who)) return who.cast<std::shared_ptr<bt::keypair>>();
  if (py::isinstance<bt::wallet>(who)) {
    const auto& w = who.cast<const bt::wallet&>();
    bt::error err;
    std::optional<bt::keypair> kp;
    {
      py::gil_scoped_release r;
      kp = w.load_hotkey(err);
    }
    if (!kp) raise_bt_error(err.message());
    return std::make_shared<bt::keypair>(std::move(*kp));
  }
  if (py::hasattr(who, "hotkey")) {
    py::object hk = who.attr("hotkey");
    if (!py::isinstance<bt::keypair>(hk) && PyCallable_Check(hk.ptr())) hk = hk();
    if (py::isinstance<bt::keypair>(hk)) return hk.cast<std::shared_ptr<bt::keypair>>();
  }
  throw py::type_error(
      "sign needs a bittensor_cpp Keypair, a bittensor_cpp Wallet or an object whose hotkey is a "
      "bittensor_cpp Keypair");
}

py::dict sign(py::handle who, const std::string& method, const std::string& path, py::handle body,
              std::optional<std::string> receiver, std::optional<std::int64_t> nonce_ns) {
  const auto key = signing_key(who);
  if (!key->has_secret()) throw bt_py_error("sign: this keypair has no secret key");
  const std::string bytes = message_bytes(body, "body");
  ba::request_headers h;
  {
    py::gil_scoped_release r;
    h = ba::sign_request(*key, method, path, bytes, receiver.value_or(""),
                         nonce_ns ? *nonce_ns : bt::next_request_nonce());
  }
  py::dict out;
  out[py::str(ba::version_header)] = py::str(ba::version);
  out[py::str(ba::hotkey_header)] = h.hotkey;
  out[py::str(ba::nonce_header)] = h.nonce;
  out[py::str(ba::signature_header)] = h.signature;
  if (!h.crypto.empty()) out[py::str(ba::crypto_header)] = h.crypto;
  if (!h.receiver.empty()) out[py::str(ba::receiver_header)] = h.receiver;
  return out;
}

py::object verify(py::handle headers, py::handle body, const std::string& method,
                  const std::string& path, const std::string& self_hotkey, double max_age,
                  double allowed_skew, bool require_receiver, py::object nonce_store,
                  std::optional<std::int64_t> now_ns) {
  static const auto default_store = std::make_shared<memory_nonce_store>(60.0);
  ba::policy policy;
  policy.max_age_ns = seconds_to_ns(max_age, "max_age");
  policy.allowed_skew_ns = seconds_to_ns(allowed_skew, "allowed_skew");
  policy.require_receiver = require_receiver;
  policy.self_hotkey = self_hotkey;

  // Our memory store is called directly (no Python call, about 1 us less per request); any
  // other store, a Python subclass of it included, through its Python methods.
  memory_nonce_store* memory = nonce_store.is_none() ? default_store.get() : nullptr;
  if (!memory && py::type::of(nonce_store).is(py::type::of<memory_nonce_store>()))
    memory = nonce_store.cast<memory_nonce_store*>();
  // A configuration error, refused before any request is judged (as the SDK does).
  const py::object retention =
      memory ? py::float_(memory->retention()) : py::getattr(nonce_store, "retention", py::none());
  if (!retention.is_none() && retention.cast<double>() * 1e9 <
                                  static_cast<double>(policy.max_age_ns + policy.allowed_skew_ns))
    throw py::value_error(
        "nonce_store.retention (" + std::string(py::str(retention)) +
        " s) is shorter than max_age + allowed_skew: a request could be replayed once its record "
        "expired while its nonce is still fresh");

  const ba::header_fields fields = read_headers(headers);
  const std::string bytes = message_bytes(body, "body");
  ba::claim claim;
  ba::result refused;
  {
    py::gil_scoped_release r;
    const std::int64_t now = now_ns ? *now_ns : ba::now_ns();
    std::string scratch;
    refused = ba::check_head(fields, now, policy, claim);
    if (!refused) refused = ba::check_signature(fields, claim, method, path, bytes, scratch);
  }
  if (refused) raise_refusal(*refused);

  const std::string& hotkey = fields.value(ba::header_fields::hotkey_f);
  const bool first_use = memory ? memory->check_and_store(hotkey, claim.nonce_ns)
                                : static_cast<bool>(py::bool_(
                                      nonce_store.attr("check_and_store")(hotkey, claim.nonce_ns)));
  if (!first_use)
    raise_refusal({ba::failure::replayed_request,
                   std::string(ba::class_name(ba::failure::replayed_request)) +
                       ": X-Bittensor-Nonce " + std::to_string(claim.nonce_ns) + " of " + hotkey +
                       " was accepted before"});
  return py::reinterpret_borrow<py::object>(types.caller)(
      hotkey, claim.nonce_ns, std::string(ba::scheme_name(claim.scheme)));
}

py::bytes build_payload(const std::string& method, const std::string& path, py::handle body,
                        std::int64_t nonce_ns, const std::string& sender,
                        std::optional<std::string> receiver, const std::string& crypto) {
  const std::string bytes = message_bytes(body, "body");
  return py::bytes(ba::build_payload(parse_crypto(crypto), method, path, bt::sha256_hex(bytes),
                                     nonce_ns, sender, receiver.value_or("")));
}

}  // namespace

void init_http_auth(py::module_& m) {
  py::module_ auth = m.def_submodule(
      "http_auth",
      "btauth/1, the signed HTTP requests of Bittensor SDK v11 (bittensor.http_auth's calls): "
      "sign() a request's X-Bittensor-* headers, verify() them on the receiving end.");
  // `import bittensor_cpp.http_auth` finds the submodule too.
  py::module_::import("sys").attr("modules")["bittensor_cpp.http_auth"] = auth;

  types.auth_error = make_error(auth, "AuthError", PyExc_Exception, 401,
                                "A request's btauth/1 headers were refused; str(e) is safe to "
                                "return to the caller, status_code the HTTP status to answer.");
  const auto sub = [&](ba::failure f, int status, const char* doc) {
    const std::string name(ba::class_name(f));
    types.by_failure[static_cast<std::size_t>(f)] =
        make_error(auth, name.c_str(), types.auth_error, status, doc);
  };
  sub(ba::failure::malformed_auth, 400, "A header missing, repeated or not of its form.");
  sub(ba::failure::wrong_receiver, 401,
      "Signed for another receiver, or unbound where a receiver is required.");
  sub(ba::failure::stale_request, 401, "The nonce is outside the freshness window.");
  sub(ba::failure::bad_signature, 401, "The signature does not verify.");
  sub(ba::failure::replayed_request, 401, "This sender used this nonce before.");

  py::object caller =
      py::module_::import("collections")
          .attr("namedtuple")("Caller", py::make_tuple("hotkey_ss58", "nonce_ns", "crypto_type"),
                              py::arg("module") = "bittensor_cpp.http_auth");
  caller.attr("__doc__") =
      "The verified sender of a request: hotkey_ss58, nonce_ns and crypto_type ('sr25519' or "
      "'ed25519').";
  types.caller = caller.inc_ref().ptr();  // kept for the process, as the exception classes
  auth.add_object("Caller", caller);

  init_http_auth_stores(auth);

  auth.def("sign", &sign, py::arg("wallet_or_keypair"), py::kw_only(), py::arg("method"),
           py::arg("path"), py::arg("body") = py::bytes(), py::arg("receiver_ss58") = py::none(),
           py::arg("nonce_ns") = py::none(),
           "The X-Bittensor-* headers (a dict) of a request signed by the keypair (or the "
           "wallet's hotkey). path is the request target as sent (with ?query); body bytes or str "
           "(UTF-8); receiver_ss58 binds the request to that receiver; nonce_ns defaults to now, "
           "kept above the last nonce this process made.");
  auth.def("verify", &verify, py::arg("headers"), py::arg("body"), py::kw_only(), py::arg("method"),
           py::arg("path"), py::arg("self_hotkey_ss58"), py::arg("max_age") = 10.0,
           py::arg("allowed_skew") = 2.0, py::arg("require_receiver") = true,
           py::arg("nonce_store") = py::none(), py::arg("now_ns") = py::none(),
           "The Caller of a signed request, or an AuthError subclass. headers: any mapping (its "
           "items(), names in any case) or (name, value) pairs. The replay store (default: one "
           "InMemoryNonceStore(retention=60.0) per process) records (hotkey, nonce) only after "
           "the signature verified; a store keeping records less than max_age + allowed_skew "
           "is refused with ValueError. The GIL is released while C++ hashes and verifies.");
  auth.def("build_payload", &build_payload, py::arg("method"), py::arg("path"), py::arg("body"),
           py::arg("nonce_ns"), py::arg("sender_ss58"), py::arg("receiver_ss58") = py::none(),
           py::arg("crypto_type") = "sr25519", "The exact bytes btauth/1 signs.");
}

}  // namespace btpy
