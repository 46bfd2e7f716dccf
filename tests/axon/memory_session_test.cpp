// The axon's real session (session.cpp, the stages of pipeline.cpp, response.cpp) driven in
// memory over an in-memory byte_stream (axon/memory/memory_session.hpp): no socket, no I/O thread.
// The input is followed by EOF, so nothing waits on a deadline. Statuses and texts are checked
// against the one table of refusals (axon/src/errors/axon_errc.hpp).
#include "memory_session.hpp"
#include "errors/axon_errc.hpp"

#include <bt/axon.hpp>
#include <bt/examples/dummy.hpp>
#include <bt/json.hpp>
#include <bt/session_auth.hpp>

#include <catch2/catch.hpp>

#include "support/dev_keys.hpp"
#include "support/memory_answers.hpp"
#include "support/python_client.hpp"

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace http = boost::beast::http;
using bt::detail::axon_errc;
using bt::examples::dummy;
using bt::test::alice;
using bt::test::bob;
using bt::test::only_response;
using bt::test::parse_responses;

std::string message_of(const http::response<http::string_body>& r) {
  const auto j = bt::json::parse(r.body(), nullptr, false);
  REQUIRE(j.is_object());
  REQUIRE(j.contains("message"));
  return j.at("message").get<std::string>();
}

/// The status and message the table gives `e` with `details`, and the connection closed.
template <class... Args>
void check_refusal(const http::response<http::string_body>& r, axon_errc e, Args&&... details) {
  const auto& row = bt::detail::entry_of(e);
  CHECK(r.result_int() == static_cast<unsigned>(row.status));
  const std::string expected = bt::detail::errc_message(e, std::forward<Args>(details)...);
  CHECK(message_of(r) == expected);
  CHECK(r[http::field::connection] == "close");
  CHECK(r["bt_header_axon_status_code"] == std::to_string(row.status));
}

struct memory_fixture {
  bt::axon ax{bob(), bt::axon_options::loopback()};
  std::optional<bt::detail::memory_axon> mem;

  memory_fixture() {
    ax.attach<dummy>([](dummy& s) { s.dummy_output = s.dummy_input * 2; });
    mem.emplace(ax);
  }

  bt::test::request_parts request(std::int64_t input) {
    dummy d;
    d.dummy_input = input;
    return bt::test::python_request(d, alice(), bob().ss58_address());
  }
};

}  // namespace

TEST_CASE("every axon_errc has its row in the table", "[axon][memory]") {
  std::set<std::string_view> seen;
  for (std::size_t i = 0; i < bt::detail::axon_errc_count; ++i) {
    const auto e = static_cast<axon_errc>(i);
    const auto& row = bt::detail::entry_of(e);
    INFO("axon_errc " << i << ": " << row.text);
    CHECK(row.code == e);
    CHECK(row.status >= 400);
    CHECK(row.status <= 599);
    CHECK_FALSE(row.text.empty());
    CHECK(row.retry_after_s >= 0);
    if (row.retry_after_s > 0) CHECK(row.status == 503);
  }
}

TEST_CASE("in memory: a signed request gets 200 and the handler's answer", "[axon][memory]") {
  memory_fixture f;
  const auto r = only_response(f.mem->exchange(f.request(21).wire(8091)));
  REQUIRE(r.result_int() == 200);
  dummy out;
  REQUIRE_FALSE(bt::from_json_body(r.body(), out));
  CHECK(out.dummy_input == 21);
  CHECK(out.dummy_output == 42);
  CHECK(r["bt_header_axon_status_code"] == "200");
  CHECK(r["bt_header_axon_status_message"] == "Success");
}

TEST_CASE("in memory: keep-alive requests are answered in order on one connection",
          "[axon][memory]") {
  memory_fixture f;
  const std::string wire = f.request(1).wire(8091) + f.request(2).wire(8091);
  const auto all = parse_responses(f.mem->exchange(wire));
  REQUIRE(all.size() == 2);
  dummy a, b;
  REQUIRE_FALSE(bt::from_json_body(all[0].body(), a));
  REQUIRE_FALSE(bt::from_json_body(all[1].body(), b));
  CHECK(a.dummy_output == 2);
  CHECK(b.dummy_output == 4);
}

TEST_CASE("in memory: refusals come with the table's status and text", "[axon][memory]") {
  memory_fixture f;
  SECTION("unknown route: 404") {
    auto req = f.request(1);
    req.path = "/Nope";
    check_refusal(only_response(f.mem->exchange(req.wire(8091))), axon_errc::unknown_route, "Nope",
                  " Available synapses ['Synapse', 'Dummy']");
  }
  SECTION("bad signature: 401") {
    auto req = f.request(1);
    req.set("bt_header_dendrite_signature", "0xabcd");
    check_refusal(only_response(f.mem->exchange(req.wire(8091))), axon_errc::not_verified,
                  "Invalid signature");
  }
  SECTION("oversized header: 431") {
    auto req = f.request(1);
    req.set("x-filler", std::string(bt::axon_options{}.max_header_bytes + 1, 'a'));
    check_refusal(only_response(f.mem->exchange(req.wire(8091))), axon_errc::header_too_large);
  }
  SECTION("PUT: 405") {
    std::string wire = f.request(1).wire(8091);
    wire.replace(0, 4, "PUT");
    check_refusal(only_response(f.mem->exchange(wire)), axon_errc::method_not_allowed);
  }
  SECTION("a body shorter than its Content-Length: no answer, the session ends at EOF") {
    std::string wire = f.request(1).wire(8091);
    wire.resize(wire.size() - 3);
    CHECK(f.mem->exchange(wire).empty());
  }
}

namespace {

namespace sa = bt::session_auth;

/// What an answer must keep between a fresh and a reused connection: the status, the header
/// names in order, whether it accepts a session, and the body less the values that differ per
/// answer or per axon (time, the axon's uuid, signatures): a refusal's message, a Dummy's output.
std::string shape_of(const http::response<http::string_body>& r) {
  std::string s = std::to_string(r.result_int()) + " [";
  for (const auto& field : r) {
    std::string name(field.name_string());
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    s += name + " ";
  }
  s += "] ";
  if (r.result_int() == 200) {
    dummy d;
    if (bt::from_json_body(r.body(), d)) s += "not a Dummy";
    s += "output " + std::to_string(d.dummy_output.value_or(-1));
  } else {
    // A session id (32 hex digits) differs per axon: each runs its own key exchange.
    const std::string m = message_of(r);
    s += "message ";
    for (std::size_t i = 0; i < m.size();) {
      std::size_t j = i;
      while (j < m.size() && std::isxdigit(static_cast<unsigned char>(m[j]))) ++j;
      if (j - i >= 32)
        s += "<hex>";
      else
        s.append(m, i, std::max(j - i, std::size_t{1}));
      i = std::max(j, i + 1);
    }
  }
  return s;
}

std::vector<std::string> shapes_of(std::string_view bytes) {
  std::vector<std::string> out;
  for (const auto& r : parse_responses(bytes)) out.push_back(shape_of(r));
  return out;
}

/// An axon with sessions on, driven in memory with one connection per exchange or one reused.
struct session_memory_axon {
  bt::axon ax{bob(), [] {
                bt::axon_options o = bt::axon_options::loopback();
                o.accept_sessions = true;
                return o;
              }()};
  std::optional<bt::detail::memory_axon> mem;
  explicit session_memory_axon(bt::detail::connection_mode mode) {
    ax.attach<dummy>([](dummy& s) { s.dummy_output = s.dummy_input * 2; });
    mem.emplace(ax, mode);
  }
};

bt::test::request_parts dummy_request(std::int64_t input, bool sign = true) {
  dummy d;
  d.dummy_input = input;
  return bt::test::python_request(d, alice(), bob().ss58_address(),
                                  {.uuid = "6f1e2d3c-4b5a-11ee-9f8e-0242ac120002", .sign = sign});
}

sa::request_identity identity_of(const bt::test::request_parts& r) {
  return {*r.find("bt_header_dendrite_nonce"), *r.find("bt_header_dendrite_hotkey"),
          *r.find("bt_header_axon_hotkey"), *r.find("bt_header_dendrite_uuid")};
}

}  // namespace

TEST_CASE("in memory: a reused connection answers every input exactly as a fresh one",
          "[axon][memory][reuse]") {
  session_memory_axon fresh(bt::detail::connection_mode::fresh);
  session_memory_axon reused(bt::detail::connection_mode::reused);
  std::vector<std::vector<std::string>> fresh_shapes, reused_shapes;
  // Each input goes to both axons (each has its own replay store, so each sees it once).
  const auto both = [&](const std::string& input) {
    fresh_shapes.push_back(shapes_of(fresh.mem->exchange(input)));
    reused_shapes.push_back(shapes_of(reused.mem->exchange(input)));
  };

  // 1. A session offer: accepted. 2. A request MAC'd with that session's keys, on the next
  // connection: no session there, so it is refused as unsigned on both (the reused connection
  // kept nothing of the session).
  // (Each axon gets its own offer: an offer completes once.)
  bt::test::request_parts opening = dummy_request(1);
  bt::test::request_parts opening_reused = opening;
  sa::client_offer offer_fresh(alice(), identity_of(opening));
  sa::client_offer offer_reused(alice(), identity_of(opening));
  opening.set(std::string(sa::offer_header), offer_fresh.header_value());
  opening_reused.set(std::string(sa::offer_header), offer_reused.header_value());
  const std::string open_a = fresh.mem->exchange(opening.wire(8091));
  const std::string open_b = reused.mem->exchange(opening_reused.wire(8091));
  fresh_shapes.push_back(shapes_of(open_a));
  reused_shapes.push_back(shapes_of(open_b));
  const auto accept_of = [](const std::string& bytes) {
    const auto r = only_response(bytes);
    REQUIRE(r.result_int() == 200);
    const auto it = r.find(std::string(sa::accept_header));
    REQUIRE(it != r.end());
    return std::string(it->value());
  };
  std::string why;
  const auto keys_fresh = std::move(offer_fresh).complete(accept_of(open_a), &why);
  const auto keys_reused = std::move(offer_reused).complete(accept_of(open_b), &why);
  INFO(why);
  REQUIRE(keys_fresh);
  REQUIRE(keys_reused);
  bt::test::request_parts mac = dummy_request(2, false);
  bt::test::request_parts mac_reused = mac;
  mac.set(std::string(sa::request_header), sa::request_mac(*keys_fresh, mac.signed_message));
  mac_reused.set(std::string(sa::request_header),
                 sa::request_mac(*keys_reused, mac_reused.signed_message));
  fresh_shapes.push_back(shapes_of(fresh.mem->exchange(mac.wire(8091))));
  reused_shapes.push_back(shapes_of(reused.mem->exchange(mac_reused.wire(8091))));
  REQUIRE(fresh_shapes.back().size() == 1);
  CHECK(fresh_shapes.back()[0].starts_with("401"));

  // 3. Two keep-alive requests pipelined in one input (the read buffer grows past 512 bytes).
  both(dummy_request(3).wire(8091) + dummy_request(4).wire(8091));
  // 4. A head that never ends, with a bad field name past its first 512 bytes: a new connection
  // reads 512 bytes first, and Beast then waits for the end of the head (EOF: no answer); read
  // in one piece, the bad field would be seen at once (a 400).
  both("POST /Dummy HTTP/1.1\r\nx-filler: " + std::string(600, 'a') + "\r\nbad\x01name: v\r\n");
  // 5. A head cut short (no answer; its bytes must not reach the next input), then a request.
  const std::string cut = dummy_request(5).wire(8091);
  both(cut.substr(0, cut.size() / 3));
  both(dummy_request(6).wire(8091));
  // 6. A refusal that closes and lingers (bad signature), then a request.
  auto bad = dummy_request(7);
  bad.set("bt_header_dendrite_signature", "0xabcd");
  both(bad.wire(8091));
  both(dummy_request(8).wire(8091));
  // 7. Another caller's address on the reused connection, and an unknown route.
  auto nope = dummy_request(9);
  nope.path = "/Nope";
  fresh_shapes.push_back(shapes_of(fresh.mem->exchange(nope.wire(8091), "10.0.0.7", 5555)));
  reused_shapes.push_back(shapes_of(reused.mem->exchange(nope.wire(8091), "10.0.0.7", 5555)));

  REQUIRE(fresh_shapes.size() == 9);
  REQUIRE(reused_shapes.size() == 9);
  for (std::size_t i = 0; i < fresh_shapes.size(); ++i) {
    INFO("input " << i + 1);
    CHECK(reused_shapes[i] == fresh_shapes[i]);
  }
  // The expected answers themselves (so that equality is not of two wrong answers).
  CHECK(fresh_shapes[0].size() == 1);
  CHECK(fresh_shapes[2].size() == 2);
  CHECK(fresh_shapes[3].empty());
  CHECK(fresh_shapes[4].empty());
  REQUIRE(fresh_shapes[5].size() == 1);
  CHECK(fresh_shapes[5][0].ends_with("output 12"));
  REQUIRE(fresh_shapes[6].size() == 1);
  CHECK(fresh_shapes[6][0].starts_with("401"));
  REQUIRE(fresh_shapes[7].size() == 1);
  CHECK(fresh_shapes[7][0].ends_with("output 16"));
  REQUIRE(fresh_shapes[8].size() == 1);
  CHECK(fresh_shapes[8][0].starts_with("404"));
}
