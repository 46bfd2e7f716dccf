// A btauth/1 receiver for the dendrite's tests (a fault_server behaviour): every request is
// verified with libsynapse's verifier (bt/btauth.hpp: check_head, check_signature, and a replay
// set of (hotkey, nonce)) and answered
//   200 {"hotkey", "nonce", "method", "target", "body"}, with a bt-response-signature over
//       (the verified hotkey, the nonce text) as our axon signs it, or
//   401 {"error": "<failure class>"}.
// With `drop_reused` a request that arrives on a connection already answered once is read and
// logged, then the connection is closed without an answer (the keep-alive race the dendrite
// retries on a fresh connection).
#pragma once

#include <bt/btauth.hpp>
#include <bt/json.hpp>
#include <bt/response_signature.hpp>

#include "fault_server.hpp"

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>

namespace bt::test {

inline behaviour btauth_verifier(const bt::keypair& self, bool drop_reused = false) {
  struct replay_set {
    std::mutex mu;
    std::set<std::pair<std::string, std::string>> seen;
  };
  auto seen = std::make_shared<replay_set>();
  return [&self, drop_reused, seen](tcp::socket& s, server_log& log) -> net::awaitable<void> {
    boost::beast::flat_buffer buf;
    for (int answered = 0;; ++answered) {
      http::request<http::string_body> req;
      auto [ec, n] = co_await http::async_read(s, buf, req, net::as_tuple(net::use_awaitable));
      (void)n;
      if (ec) co_return;
      log.add(req);
      if (drop_reused && answered > 0) co_return;  // closes the connection unanswered

      bt::btauth::header_fields h;
      for (const auto& f : req)
        if (bt::btauth::header_fields::is_btauth(f.name_string()))
          h.feed(f.name_string(), f.value());
      bt::btauth::claim c;
      const std::string self_hotkey = self.ss58_address();
      const std::string method(req.method_string());
      const std::string target(req.target());
      std::string scratch;
      bt::btauth::result refused =
          bt::btauth::check_head(h, bt::btauth::now_ns(), {.self_hotkey = self_hotkey}, c);
      if (!refused)
        refused = bt::btauth::check_signature(h, c, method, target, req.body(), scratch);
      const std::string& hotkey = h.value(bt::btauth::header_fields::hotkey_f);
      const std::string& nonce = h.value(bt::btauth::header_fields::nonce_f);
      if (!refused) {
        std::lock_guard lk(seen->mu);
        if (!seen->seen.emplace(hotkey, nonce).second)
          refused = bt::btauth::refusal{bt::btauth::failure::replayed_request, "ReplayedRequest"};
      }
      if (refused) {
        const bt::json out{{"error", bt::btauth::class_name(refused->kind)}};
        co_await write_text(s, http_response(401, out.dump()));
        continue;
      }
      const bt::json out{{"hotkey", hotkey},
                         {"nonce", nonce},
                         {"method", method},
                         {"target", target},
                         {"body", req.body()}};
      const std::string body = out.dump();
      const std::string sig = bt::response_signature::sign(self, "1", hotkey, nonce, 200, body);
      co_await write_text(
          s, http_response(200, body,
                           std::string(bt::response_signature::header) + ": " + sig + "\r\n"));
    }
  };
}

}  // namespace bt::test
