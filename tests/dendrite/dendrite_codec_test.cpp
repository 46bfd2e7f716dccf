// The dendrite's per-call codec without sockets: the request of PROTOCOL 4 (URL, headers of 2.1
// in order, body of 1.4/4.6, a signature that verifies) and the response merge of 6.2-6.5 with
// D6's stricter rules; plus the uuid, Host and content-type helpers and the failure table.
#include <bt/detail/dendrite_ops.hpp>

#include <bt/body_hash.hpp>
#include <bt/dendrite_error.hpp>
#include <bt/dynamic_synapse.hpp>
#include <bt/examples/dummy.hpp>
#include <bt/header_codec.hpp>
#include <bt/hex.hpp>
#include <bt/json_body.hpp>

#include <catch2/catch.hpp>

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <regex>
#include <set>

#include "support/dev_keys.hpp"

using bt::examples::dummy;
namespace http = boost::beast::http;

namespace {

using bt::test::alice;
using bt::test::bob;

constexpr std::string_view uuid_2_6 = "5ecbd69c-1cec-11ee-b0dc-e29ce36fec1a";

bt::axon_info target_2_6() {
  bt::axon_info a;
  a.ip = "198.51.100.7";
  a.port = 8091;
  a.hotkey = bob().ss58_address();
  return a;
}

bt::detail::request_identity identity() {
  return {.key = &alice(),
          .hotkey = alice().ss58_address(),
          .uuid = uuid_2_6,
          .version = bt::version_as_int};
}

/// Encodes `s` as the dendrite would, and parses the bytes back as an HTTP server would.
http::request<http::string_body> encode_and_parse(const bt::synapse_descriptor& d, bt::synapse& s,
                                                  const bt::axon_info& target, double timeout,
                                                  std::int64_t nonce,
                                                  std::string* head_out = nullptr) {
  bt::detail::preset_request(s, target, timeout, identity(), {});
  std::string scratch, head, body;
  bt::detail::encode_request(d, s, "203.0.113.5", nonce, identity(),
                             bt::detail::host_header(target.ip, target.port), scratch, head, body);
  if (head_out) *head_out = head;
  http::request_parser<http::string_body> p;
  p.eager(true);
  boost::beast::error_code ec;
  const std::string wire = head + body;
  std::size_t used = p.put(boost::asio::buffer(wire), ec);
  REQUIRE_FALSE(ec);
  REQUIRE(p.is_done());
  REQUIRE(used == wire.size());
  return p.release();
}

}  // namespace

TEST_CASE("the request of PROTOCOL 2.6 / 4.6: route, headers in order, body, signature",
          "[dendrite][codec]") {
  dummy s;
  s.dummy_input = 1;
  std::string head;
  auto req = encode_and_parse(bt::descriptor_of<dummy>(), s, target_2_6(), 12.0,
                              1700000000123456789, &head);

  CHECK(req.method() == http::verb::post);
  CHECK(req.target() == "/Dummy");
  CHECK(req.version() == 11);
  CHECK(req[http::field::host] == "198.51.100.7:8091");
  CHECK(req[http::field::content_type] == "application/json");
  CHECK(req[http::field::content_length] == std::to_string(req.body().size()));

  // The bt headers: exactly these names, lower case, in to_headers() order (PROTOCOL 2.1/2.6).
  std::vector<std::string> names;
  for (const auto& f : req) {
    const std::string n(f.name_string());
    if (n == "Host" || n == "Content-Type" || n == "Content-Length") continue;
    names.push_back(n);
  }
  const std::vector<std::string> expected = {"name",
                                             "timeout",
                                             "bt_header_axon_ip",
                                             "bt_header_axon_port",
                                             "bt_header_axon_hotkey",
                                             "bt_header_dendrite_ip",
                                             "bt_header_dendrite_version",
                                             "bt_header_dendrite_nonce",
                                             "bt_header_dendrite_uuid",
                                             "bt_header_dendrite_hotkey",
                                             "bt_header_dendrite_signature",
                                             "bt_header_input_obj_dummy_input",
                                             "header_size",
                                             "total_size",
                                             "computed_body_hash"};
  CHECK(names == expected);
  CHECK(req["name"] == "Dummy");
  CHECK(req["timeout"] == "12.0");
  CHECK(req["bt_header_axon_ip"] == "198.51.100.7");
  CHECK(req["bt_header_axon_port"] == "8091");
  CHECK(req["bt_header_axon_hotkey"] == "5FHneW46xGXgs5mUiveU4sbTyGBzmstUspZC92UhjJM694ty");
  CHECK(req["bt_header_dendrite_ip"] == "203.0.113.5");
  CHECK(req["bt_header_dendrite_version"] == "10002000");
  CHECK(req["bt_header_dendrite_nonce"] == "1700000000123456789");
  CHECK(req["bt_header_dendrite_uuid"] == uuid_2_6);
  CHECK(req["bt_header_dendrite_hotkey"] == "5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY");
  CHECK(req["bt_header_input_obj_dummy_input"] == "MA==");
  CHECK(req["computed_body_hash"] ==
        "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a");
  std::int64_t hs = -1, ts = -1;
  CHECK(bt::parse_python_int(std::string(req["header_size"]), hs));
  CHECK(bt::parse_python_int(std::string(req["total_size"]), ts));
  CHECK(hs > 0);
  CHECK(ts == hs + static_cast<std::int64_t>(req.body().size()));

  // The signature: 0x + 128 lowercase hex, verifying over the message of PROTOCOL 4.4.
  const std::string sig(req["bt_header_dendrite_signature"]);
  REQUIRE(std::regex_match(sig, std::regex("0x[0-9a-f]{128}")));
  const std::string message =
      "1700000000123456789.5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY."
      "5FHneW46xGXgs5mUiveU4sbTyGBzmstUspZC92UhjJM694ty.5ecbd69c-1cec-11ee-b0dc-e29ce36fec1a."
      "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a";
  const auto sig_bytes = bt::from_hex(sig);
  REQUIRE(sig_bytes.has_value());
  CHECK_FALSE(bt::verify_signature(
      bt::crypto_type::sr25519, alice().public_key(),
      {reinterpret_cast<const std::uint8_t*>(message.data()), message.size()}, *sig_bytes));
  CHECK(s.dendrite.signature == sig);

  // The body of PROTOCOL 4.6 (json.dumps style), with our honest total_size and the signature.
  const std::string expected_body =
      R"({"name": "Dummy", "timeout": 12.0, "total_size": 0, "header_size": 0, "dendrite": )"
      R"({"status_code": null, "status_message": null, "process_time": null, "ip": "203.0.113.5", )"
      R"("port": null, "version": 10002000, "nonce": 1700000000123456789, "uuid": )"
      R"("5ecbd69c-1cec-11ee-b0dc-e29ce36fec1a", "hotkey": )"
      R"("5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY", "signature": ")" +
      sig +
      R"("}, "axon": {"status_code": null, "status_message": null, "process_time": null, )"
      R"("ip": "198.51.100.7", "port": 8091, "version": null, "nonce": null, "uuid": null, )"
      R"("hotkey": "5FHneW46xGXgs5mUiveU4sbTyGBzmstUspZC92UhjJM694ty", "signature": null}, )"
      R"("computed_body_hash": "", "dummy_input": 1, "dummy_output": null})";
  CHECK(req.body() == expected_body);

  // The header block decodes back to the same request view (what an axon builds first).
  bt::synapse view;
  CHECK_FALSE(bt::from_headers(req, view));
  CHECK(view.dendrite.nonce == 1700000000123456789);
  CHECK(view.dendrite.signature == sig);
  CHECK(view.axon.port == 8091);
}

TEST_CASE("hash fields are hashed, signed and placed in computed_body_hash", "[dendrite][codec]") {
  bt::error err;
  auto type = bt::make_dynamic_descriptor(
      "Echo", {{"text", bt::field_kind::required}, {"reply", bt::field_kind::optional}}, {"text"},
      err);
  REQUIRE_FALSE(err);
  bt::dynamic_synapse s(type);
  *s.get("text") = "hello";
  auto req = encode_and_parse(*type, s, target_2_6(), 3.5, 42);
  CHECK(req.target() == "/Echo");
  CHECK(req["timeout"] == "3.5");
  CHECK(req["bt_header_input_obj_text"] == "IiI=");
  const std::string hash = bt::body_hash(*type, s);
  CHECK(req["computed_body_hash"] == hash);
  CHECK(hash != "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a");
  const std::string message = "42." + alice().ss58_address() + "." + bob().ss58_address() + "." +
                              std::string(uuid_2_6) + "." + hash;
  const auto sig = bt::from_hex(std::string(req["bt_header_dendrite_signature"]));
  REQUIRE(sig.has_value());
  CHECK(alice().verify(message, *sig));
}

TEST_CASE("IPv6 targets are bracketed in Host", "[dendrite][codec]") {
  CHECK(bt::detail::host_header("2001:db8::1", 8091) == "[2001:db8::1]:8091");
  CHECK(bt::detail::host_header("::1", 1) == "[::1]:1");
  CHECK(bt::detail::host_header("10.0.0.1", 65535) == "10.0.0.1:65535");
}

TEST_CASE("uuid1 text", "[dendrite][codec]") {
  const std::regex re("[0-9a-f]{8}-[0-9a-f]{4}-1[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
  std::set<std::string> seen;
  for (int i = 0; i < 50; ++i) {
    auto u = bt::detail::make_uuid1();
    CHECK(std::regex_match(u, re));
    seen.insert(u);
  }
  CHECK(seen.size() == 50);
}

TEST_CASE("JSON content types as aiohttp accepts them", "[dendrite][codec]") {
  using bt::detail::is_json_content_type;
  CHECK(is_json_content_type("application/json"));
  CHECK(is_json_content_type("Application/JSON; charset=utf-8"));
  CHECK(is_json_content_type(" application/problem+json "));
  CHECK(is_json_content_type("application/vnd.api+json"));
  CHECK_FALSE(is_json_content_type(""));
  CHECK_FALSE(is_json_content_type("text/plain"));
  CHECK_FALSE(is_json_content_type("text/json"));
  CHECK_FALSE(is_json_content_type("application/jsonx"));
  CHECK_FALSE(is_json_content_type("application/x json+json"));
  CHECK_FALSE(is_json_content_type("application/+json"));
}

namespace {

struct merge_case {
  dummy local;
  bt::detail::synapse_ref ref;
  merge_case() {
    local.dummy_input = 5;
    bt::detail::preset_request(local, target_2_6(), 12.0, identity(), "203.0.113.5");
    local.dendrite.nonce = 77;
    local.dendrite.signature = "0xsig";
    ref = bt::detail::make_synapse_ref(local);
  }
  std::error_code apply(unsigned status, http::fields f, std::string_view body,
                        std::string& detail) {
    return bt::detail::apply_response(ref, status, f, body, detail);
  }
};

http::fields json_fields(std::initializer_list<std::pair<const char*, const char*>> extra = {}) {
  http::fields f;
  f.set(http::field::content_type, "application/json");
  for (auto& [n, v] : extra) f.insert(n, v);
  return f;
}

}  // namespace

TEST_CASE("response merge: 200 takes outputs and status, keeps inputs and identities (D6)",
          "[dendrite][codec]") {
  merge_case m;
  const dummy before = m.local;
  std::string detail;
  auto f = json_fields({{"bt_header_axon_status_code", "200"},
                        {"bt_header_axon_status_message", "Success"},
                        {"bt_header_axon_process_time", "0.5"},
                        {"bt_header_axon_hotkey", "5Evil"},
                        {"bt_header_axon_port", "1"},
                        {"bt_header_dendrite_hotkey", "5Evil"}});
  const auto ec = m.apply(200, f,
                          R"({"dummy_input":99,"dummy_output":10,"timeout":1.0,)"
                          R"("axon":{"status_code":201,"status_message":"Body","process_time":0.1,)"
                          R"("hotkey":"5Other","ip":"1.1.1.1"},"dendrite":{"nonce":1}})",
                          detail);
  REQUIRE_FALSE(ec);
  CHECK(m.local.dummy_output == 10);
  CHECK(m.local.dummy_input == 5);
  CHECK(m.local.timeout == 12.0);
  CHECK(m.local.axon.status_code == 200);  // header wins over body
  CHECK(m.local.axon.status_message == "Success");
  CHECK(m.local.axon.process_time == 0.5);
  CHECK(m.local.axon.hotkey == before.axon.hotkey);
  CHECK(m.local.axon.ip == before.axon.ip);
  CHECK(m.local.axon.port == before.axon.port);
  CHECK(m.local.dendrite.hotkey == before.dendrite.hotkey);
  CHECK(m.local.dendrite.nonce == 77);
  CHECK(m.local.dendrite.status_code == 200);
  CHECK(m.local.dendrite.status_message == "Success");
}

TEST_CASE("response merge: body status survives where headers are absent", "[dendrite][codec]") {
  merge_case m;
  std::string detail;
  REQUIRE_FALSE(m.apply(200, json_fields(),
                        R"({"dummy_input":5,"dummy_output":1,"axon":{"status_code":200,)"
                        R"("status_message":"Success","process_time":0.25}})",
                        detail));
  CHECK(m.local.dendrite.status_code == 200);
  CHECK(m.local.axon.process_time == 0.25);
  CHECK(m.local.dummy_output == 1);
}

TEST_CASE("response merge: non-200 takes the status and message only", "[dendrite][codec]") {
  merge_case m;
  std::string detail;
  REQUIRE_FALSE(m.apply(
      401, json_fields({{"bt_header_axon_signature", "0xabc"}}),
      R"({"message":"Not Verified with error: Signature mismatch","dummy_output":3})", detail));
  CHECK(m.local.dendrite.status_code == 401);
  CHECK(m.local.dendrite.status_message == "Not Verified with error: Signature mismatch");
  CHECK(m.local.failed_verification());
  CHECK(m.local.axon.signature == "0xabc");
  CHECK_FALSE(m.local.dummy_output.has_value());
}

TEST_CASE("response merge: failures change nothing", "[dendrite][codec]") {
  const std::vector<std::tuple<unsigned, http::fields, std::string>> bad = {
      {200, json_fields(), "{"},
      {200, json_fields(), "[]"},
      {200, json_fields(), ""},
      {200, json_fields(), R"({"dummy_output":1})"},   // missing required input
      {200, json_fields(), R"({"dummy_input":"x"})"},  // wrong type
      {200, json_fields(), R"({"dummy_input":1,"axon":{"port":"eighty"}})"},
      // values the merge discards are still checked against their types
      {200, json_fields(), R"({"dummy_input":1,"dendrite":{"hotkey":5}})"},
      {200, json_fields(), R"({"dummy_input":1,"axon":{"uuid":[]}})"},
      {200, json_fields(), R"({"dummy_input":1,"computed_body_hash":0})"},
      {200, json_fields(), "{\"dummy_input\":1,\"dendrite\":{\"uuid\":\"\xff\"}}"},
      {200, json_fields(), R"({"dummy_input":1,"axon":{"signature":"\udc00"}})"},
      {200, json_fields({{"bt_header_axon_nonce", "1.5"}}), R"({"dummy_input":1})"},
      {200, json_fields({{"timeout", "soon"}}), R"({"dummy_input":1})"},
      {200, http::fields{}, R"({"dummy_input":1})"},  // no content type
      {500, json_fields(), "Internal Server Error"},
      {403, json_fields(), R"("message")"},
      {403, json_fields(), R"({"message":["a"]})"},
  };
  for (const auto& [status, fields, body] : bad) {
    merge_case m;
    const dummy before = m.local;
    std::string detail;
    INFO(body);
    const auto ec = m.apply(status, fields, body, detail);
    CHECK(ec == bt::dendrite_errc::malformed_response);
    CHECK_FALSE(detail.empty());
    CHECK(m.local == before);
  }
}

TEST_CASE("the failure table", "[dendrite][errors]") {
  using E = bt::dendrite_errc;
  CHECK(bt::dendrite_status(E::connect_failed) == 503);
  CHECK(bt::dendrite_status(E::timeout) == 408);
  CHECK(bt::dendrite_status(E::disconnected) == 503);
  CHECK(bt::dendrite_status(E::payload_incomplete) == 400);
  CHECK(bt::dendrite_status(E::response_too_large) == 422);
  CHECK(bt::dendrite_status(E::malformed_response) == 422);
  CHECK(bt::dendrite_status(E::invalid_address) == 422);
  CHECK(bt::dendrite_status(E::cancelled) == 503);

  CHECK(bt::dendrite_status_message(E::connect_failed, "1.2.3.4", 8091, "Dummy", 12.0, "x") ==
        "Service unavailable at 1.2.3.4:8091/Dummy");
  CHECK(bt::dendrite_status_message(E::timeout, "", 0, "Dummy", 12.0, {}) ==
        "Request timeout after 12.0 seconds");
  CHECK(bt::dendrite_status_message(E::timeout, "", 0, "Dummy", 0.001, {}) ==
        "Request timeout after 0.001 seconds");
  CHECK(bt::dendrite_status_message(E::disconnected, "", 0, "Dummy", 1, {}) ==
        "Service disconnected: Server disconnected");
  CHECK(bt::dendrite_status_message(E::payload_incomplete, "", 0, "Dummy", 1, {}) ==
        "Payload error: Response payload is not completed");
  CHECK(bt::dendrite_status_message(E::malformed_response, "", 0, "Dummy", 1, "bad") ==
        "Failed to parse response: bad");
  CHECK(bt::dendrite_status_message(E::cancelled, "", 0, "Dummy", 1, {}) == "Request cancelled");

  std::error_code ec = E::timeout;
  CHECK(ec.category().name() == std::string("bt.dendrite"));
  CHECK_FALSE(ec.message().empty());

  dummy s;
  s.axon.ip = "5.6.7.8";
  s.axon.port = 9;
  s.timeout = 2.5;
  bt::set_dendrite_failure(s, "Dummy", E::connect_failed);
  CHECK(s.dendrite.status_code == 503);
  CHECK(s.dendrite.status_message == "Service unavailable at 5.6.7.8:9/Dummy");
  bt::set_dendrite_failure(s, "Dummy", E::timeout);
  CHECK(s.dendrite.status_message == "Request timeout after 2.5 seconds");
  CHECK_FALSE(s.axon.status_code.has_value());
}

TEST_CASE("response merge of a base synapse: discarded values checked, the status taken",
          "[dendrite][codec]") {
  // The base type's answer is read into a local object, not one made by make_blank.
  auto base_case = [] {
    bt::synapse s;
    bt::detail::preset_request(s, target_2_6(), 12.0, identity(), "203.0.113.5");
    s.dendrite.nonce = 77;
    return s;
  };
  const std::vector<std::string> bad = {
      R"({"dendrite":{"hotkey":5}})",
      R"({"dendrite":{"signature":{"a":1}}})",
      R"({"axon":{"hotkey":1.5}})",
      R"({"axon":{"status_message":5}})",
      R"({"computed_body_hash":[]})",
      R"({"timeout":"soon"})",
      R"({"dendrite":{"uuid":"\ud800"}})",
      "{\"axon\":{\"ip\":\"\xc3\"}}",
      R"({"dendrite":{"hotkey":"a","hotkey":"b"}})",
      R"({"dendrite":{"hotkey":"a"})",
      "[]",
  };
  for (const auto& body : bad) {
    INFO(body);
    bt::synapse s = base_case();
    const bt::synapse before = s;
    std::string detail;
    const auto ec = bt::detail::apply_response(bt::detail::make_synapse_ref(s), 200, json_fields(),
                                               body, detail);
    CHECK(ec == bt::dendrite_errc::malformed_response);
    CHECK_FALSE(detail.empty());
    CHECK(s == before);
  }
  bt::synapse s = base_case();
  const bt::synapse before = s;
  std::string detail;
  REQUIRE_FALSE(bt::detail::apply_response(
      bt::detail::make_synapse_ref(s), 200, json_fields({{"bt_header_axon_process_time", "0.5"}}),
      R"({"timeout":1.0,"computed_body_hash":"x","dendrite":{"hotkey":"5Evil","nonce":1},)"
      R"("axon":{"status_code":"200","status_message":"Success","process_time":0.25,)"
      R"("hotkey":"5Other","ip":"1.1.1.1"}})",
      detail));
  CHECK(s.axon.status_code == 200);
  CHECK(s.axon.status_message == "Success");
  CHECK(s.axon.process_time == 0.5);  // the header wins over the body
  CHECK(s.dendrite.status_code == 200);
  CHECK(s.dendrite.status_message == "Success");
  CHECK(s.timeout == before.timeout);
  CHECK(s.computed_body_hash == before.computed_body_hash);
  CHECK(s.dendrite.hotkey == before.dendrite.hotkey);
  CHECK(s.dendrite.nonce == 77);
  CHECK(s.axon.hotkey == before.axon.hotkey);
  CHECK(s.axon.ip == before.axon.ip);
}
