// `bt-dendrite epistula` and `bt-dendrite btauth` (see plain_request_command.hpp).
#include "plain_request_command.hpp"

#include "axon_flag.hpp"

#include <bt/dendrite.hpp>
#include <bt/json.hpp>
#include <bt/json_body.hpp>

#include <bt_cli.hpp>

#include <cmath>
#include <iostream>
#include <stdexcept>

namespace bt::cli {
namespace {

/// Bad usage: reported on stderr, exit status 2.
struct usage_error {
  std::string message;
};

response_verification parse_verify_mode(const std::string& v) {
  if (v == "off") return response_verification::off;
  if (v == "if_present") return response_verification::if_present;
  if (v == "required") return response_verification::required;
  throw usage_error{"--verify-responses: expected off, if_present or required, got '" + v + "'"};
}

}  // namespace

CLI::App* add_plain_request_command(CLI::App& app, wire_dialect dialect,
                                    plain_request_config& cfg) {
  cfg.dialect = dialect;
  CLI::App* c =
      dialect == wire_dialect::btauth
          ? app.add_subcommand("btauth",
                               "Send one btauth/1 signed JSON request (Bittensor SDK v11); one "
                               "JSON line on stdout")
          : app.add_subcommand("epistula",
                               "Send one Epistula v2 signed JSON request; one JSON line on stdout");
  c->add_option("--axon", cfg.axon, "Target IP:PORT:HOTKEY (IPv6 as [ip]:port:hotkey)")->required();
  c->add_option("--path", cfg.path, "Request path, e.g. /echo (a ?query allowed)")->required();
  c->add_option("--method", cfg.method, "HTTP method (default POST)");
  c->add_option("--data", cfg.data, "JSON body, sent and signed verbatim (default: empty body)");
  c->add_option("--timeout", cfg.timeout, "Total deadline in seconds (default 12)");
  c->add_option("--verify-responses", cfg.verify_responses,
                "Response signatures: off, if_present or required (default if_present)");
  add_key_flags(*c, cfg.keys);
  return c;
}

int run_plain_request(const plain_request_config& cfg) {
  const std::string tool =
      cfg.dialect == wire_dialect::btauth ? "bt-dendrite btauth" : "bt-dendrite epistula";
  const auto fail = [&tool](const std::string& message) {
    report_error(std::cerr, tool, error_style::json, message);
  };
  try {
    // The flag parsers throw std::invalid_argument naming the flag: bad usage here.
    const auto as_usage = [](auto&& f) {
      try {
        return f();
      } catch (const std::invalid_argument& e) {
        throw usage_error{e.what()};
      }
    };
    const axon_info target = as_usage([&] { return parse_axon_flag(cfg.axon); });
    keypair key = as_usage([&] { return signing_hotkey(cfg.keys); });
    if (!cfg.path.starts_with('/')) throw usage_error{"--path must start with '/'"};
    if (!(cfg.timeout > 0) || !std::isfinite(cfg.timeout))
      throw usage_error{"--timeout must be a positive number"};
    if (!cfg.data.empty()) {
      json j;
      if (error e = parse_json(cfg.data, j, {}); e)
        throw usage_error{"--data: not valid JSON (" + e.message() + ")"};
    }
    const response_verification mode = parse_verify_mode(cfg.verify_responses);

    dendrite d(std::move(key), dendrite_options{.verify_responses = mode});
    const http_call_response r =
        cfg.dialect == wire_dialect::btauth
            ? d.btauth_call(target, cfg.method, cfg.path, cfg.data, cfg.timeout)
            : d.epistula_call(target, cfg.method, cfg.path, cfg.data, cfg.timeout);

    json out = json::object();
    out["status"] = r.status;
    if (r.error) {
      out["body"] = nullptr;
    } else {
      json body;
      if (r.body.empty() || parse_json(r.body, body, {}))
        out["body"] = r.body;  // not JSON: the text as received
      else
        out["body"] = std::move(body);
    }
    out["process_time"] = r.process_time ? json(*r.process_time) : json(nullptr);
    out["response_verified"] = r.response_verified;
    std::cout << out.dump(-1, ' ', false, json::error_handler_t::replace) << std::endl;
    if (r.error) fail(r.status_message);
    return r.status / 100 == 2 && !r.error ? 0 : 1;
  } catch (const usage_error& e) {
    fail(e.message);
    return 2;
  }
}

}  // namespace bt::cli
