// The axon's real session (session.cpp, the stages of pipeline.cpp, response.cpp) driven in
// memory over an in-memory byte_stream (axon/src/memory_session.hpp): no socket, no I/O thread. The
// input is followed by EOF, so nothing waits on a deadline. Statuses and texts are checked
// against the one table of refusals (axon/src/axon_errc.hpp).
#include "memory_session.hpp"
#include "axon_errc.hpp"

#include <bt/axon.hpp>
#include <bt/examples/dummy.hpp>
#include <bt/json.hpp>

#include <catch2/catch.hpp>

#include "support/dev_keys.hpp"
#include "support/python_client.hpp"

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

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

/// The answers in `bytes`, in order; fails the test if a response is incomplete or malformed.
std::vector<http::response<http::string_body>> parse_responses(std::string_view bytes) {
  std::vector<http::response<http::string_body>> out;
  while (!bytes.empty()) {
    http::response_parser<http::string_body> p;
    p.eager(true);
    boost::beast::error_code ec;
    const std::size_t used = p.put(boost::asio::buffer(bytes.data(), bytes.size()), ec);
    INFO("answer bytes: " << bytes);
    REQUIRE_FALSE(ec);
    REQUIRE(p.is_done());
    out.push_back(p.release());
    bytes.remove_prefix(used);
  }
  return out;
}

http::response<http::string_body> only_response(std::string_view bytes) {
  auto all = parse_responses(bytes);
  REQUIRE(all.size() == 1);
  return std::move(all.front());
}

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
