// bittensor_cpp.Keypair and bittensor_cpp.Wallet over bt::keypair and bt::wallet.
// Secrets never reach Python except through the explicit seed/mnemonic the caller passed in.
#include "common.hpp"

#include <bt/hex.hpp>
#include <bt/mnemonic.hpp>
#include <bt/wallet.hpp>

#include <pybind11/stl.h>

#include <array>
#include <optional>
#include <string>

namespace btpy {

bt::crypto_type parse_crypto(const std::string& name) {
  if (name == "sr25519") return bt::crypto_type::sr25519;
  if (name == "ed25519") return bt::crypto_type::ed25519;
  throw py::value_error("crypto_type must be 'sr25519' or 'ed25519', not '" + name + "'");
}

std::string message_bytes(py::handle data, const char* what) {
  if (py::isinstance<py::str>(data)) return data.cast<std::string>();
  if (py::isinstance<py::bytes>(data)) return std::string(data.cast<py::bytes>());
  if (py::isinstance<py::bytearray>(data) || py::isinstance<py::memoryview>(data))
    return std::string(py::reinterpret_steal<py::bytes>(PyBytes_FromObject(data.ptr())));
  throw py::type_error(std::string(what) + " must be bytes or str, not " +
                       std::string(py::str(data.get_type().attr("__name__"))));
}

void init_keys(py::module_& m) {
  py::class_<bt::keypair, std::shared_ptr<bt::keypair>>(m, "Keypair",
                                                        "An sr25519 or ed25519 key with its SS58 "
                                                        "address. Secrets are never printed.")
      .def_static(
          "from_uri",
          [](const std::string& uri, const std::string& crypto) {
            return std::make_shared<bt::keypair>(bt::keypair::from_uri(uri, parse_crypto(crypto)));
          },
          py::arg("uri"), py::arg("crypto_type") = "sr25519",
          "From a Substrate secret URI: '//Alice', '<mnemonic>//hard/soft', '0x<seed>'.")
      .def_static(
          "from_mnemonic",
          [](const std::string& phrase, const std::string& password, const std::string& crypto) {
            return std::make_shared<bt::keypair>(
                bt::keypair::from_mnemonic(phrase, password, parse_crypto(crypto)));
          },
          py::arg("mnemonic"), py::arg("password") = "", py::arg("crypto_type") = "sr25519",
          "From a BIP39 English mnemonic (Substrate's seed derivation).")
      .def_static(
          "from_seed",
          [](py::handle seed, const std::string& crypto) {
            std::string raw;
            if (py::isinstance<py::str>(seed)) {
              auto b = bt::from_hex(seed.cast<std::string>());
              if (!b) throw py::value_error("seed: not hex text");
              raw.assign(b->begin(), b->end());
            } else {
              raw = message_bytes(seed, "seed");
            }
            if (raw.size() != 32)
              throw py::value_error("seed: 32 bytes expected, got " + std::to_string(raw.size()));
            std::array<std::uint8_t, 32> s{};
            std::copy(raw.begin(), raw.end(), s.begin());
            return std::make_shared<bt::keypair>(bt::keypair::from_seed(s, parse_crypto(crypto)));
          },
          py::arg("seed"), py::arg("crypto_type") = "sr25519",
          "From a 32-byte seed (bytes, or hex text with or without 0x).")
      .def_static(
          "from_ss58",
          [](const std::string& address, const std::string& crypto) {
            return std::make_shared<bt::keypair>(
                bt::keypair::from_ss58(address, parse_crypto(crypto)));
          },
          py::arg("ss58_address"), py::arg("crypto_type") = "sr25519",
          "A public-only keypair (verification) from an SS58 address.")
      .def_static(
          "generate_mnemonic", [](int words) { return bt::generate_mnemonic(words); },
          py::arg("words") = 12, "A new random BIP39 English mnemonic.")
      .def_property_readonly("ss58_address", [](const bt::keypair& k) { return k.ss58_address(); })
      .def_property_readonly("public_key",
                             [](const bt::keypair& k) {
                               const auto& p = k.public_key();
                               return py::bytes(reinterpret_cast<const char*>(p.data()), p.size());
                             })
      .def_property_readonly("crypto_type",
                             [](const bt::keypair& k) {
                               return k.type() == bt::crypto_type::sr25519 ? "sr25519" : "ed25519";
                             })
      .def_property_readonly("has_secret", &bt::keypair::has_secret)
      .def(
          "sign",
          [](const bt::keypair& k, py::handle data) {
            if (!k.has_secret()) throw bt_py_error("sign: this keypair has no secret key");
            const std::string msg = message_bytes(data, "data");
            bt::signature_bytes sig;
            {
              py::gil_scoped_release r;
              sig = k.sign(std::string_view(msg));
            }
            return py::bytes(reinterpret_cast<const char*>(sig.data()), sig.size());
          },
          py::arg("data"), "64-byte signature of data (bytes, or str as UTF-8).")
      .def(
          "verify",
          [](const bt::keypair& k, py::handle data, py::handle signature) {
            const std::string msg = message_bytes(data, "data");
            std::string sig;
            if (py::isinstance<py::str>(signature)) {
              auto b = bt::from_hex(signature.cast<std::string>());
              if (!b) return false;
              sig.assign(b->begin(), b->end());
            } else {
              sig = message_bytes(signature, "signature");
            }
            py::gil_scoped_release r;
            return k.verify(
                std::string_view(msg),
                std::span(reinterpret_cast<const std::uint8_t*>(sig.data()), sig.size()));
          },
          py::arg("data"), py::arg("signature"),
          "True when signature (bytes, or 0x hex text) is valid for data under this public key.")
      .def("__repr__", [](const bt::keypair& k) {
        return "<Keypair ss58_address='" + k.ss58_address() + "'>";
      });

  py::class_<bt::wallet>(m, "Wallet",
                         "A Bittensor wallet on disk: <path>/<name>/{coldkey,coldkeypub.txt,"
                         "hotkeys/<hotkey>}.")
      .def(py::init([](std::optional<std::string> name, std::optional<std::string> hotkey,
                       std::optional<std::string> path) {
             auto c = bt::wallet_config::from_env();
             if (name) c.name = *name;
             if (hotkey) c.hotkey = *hotkey;
             if (path) c.path = *path;
             return bt::wallet(c);
           }),
           py::kw_only(), py::arg("name") = py::none(), py::arg("hotkey") = py::none(),
           py::arg("path") = py::none(),
           "Defaults: BT_WALLET_NAME/BT_WALLET_HOTKEY/BT_WALLET_PATH, else default, default, "
           "~/.bittensor/wallets.")
      .def_property_readonly("name", [](const bt::wallet& w) { return w.config().name; })
      .def_property_readonly("hotkey_str", [](const bt::wallet& w) { return w.config().hotkey; })
      .def_property_readonly("path", [](const bt::wallet& w) { return w.config().path; })
      .def_property_readonly("directory",
                             [](const bt::wallet& w) { return w.directory().string(); })
      .def(
          "hotkey",
          [](const bt::wallet& w, std::optional<std::string> password) {
            bt::error err;
            std::optional<bt::keypair> kp;
            {
              py::gil_scoped_release r;
              kp = password ? w.load_hotkey(err, std::string_view(*password)) : w.load_hotkey(err);
            }
            if (!kp) raise_bt_error(err.message());
            return std::make_shared<bt::keypair>(std::move(*kp));
          },
          py::arg("password") = py::none(), "The hotkey keypair (hotkeys/<hotkey>).")
      .def(
          "coldkeypub",
          [](const bt::wallet& w) {
            bt::error err;
            auto kp = w.load_coldkeypub(err);
            if (!kp) raise_bt_error(err.message());
            return std::make_shared<bt::keypair>(std::move(*kp));
          },
          "coldkeypub.txt as a public-only keypair.")
      .def(
          "write_hotkey",
          [](const bt::wallet& w, const bt::keypair& kp, bool overwrite) {
            bt::error err;
            if (!w.write_hotkey(kp, overwrite, err)) raise_bt_error(err.message());
          },
          py::arg("keypair"), py::arg("overwrite") = false,
          "Writes hotkeys/<hotkey> (plaintext, as Bittensor does) and its pub.txt.")
      .def(
          "write_coldkeypub",
          [](const bt::wallet& w, const bt::keypair& kp, bool overwrite) {
            bt::error err;
            if (!w.write_coldkeypub(kp, overwrite, err)) raise_bt_error(err.message());
          },
          py::arg("keypair"), py::arg("overwrite") = false, "Writes coldkeypub.txt.")
      .def("__repr__", [](const bt::wallet& w) {
        return "<Wallet name='" + w.config().name + "' hotkey='" + w.config().hotkey + "' path='" +
               w.config().path + "'>";
      });
}

}  // namespace btpy
