// How many body-hash passes a call with a large hashed field costs on each side: the dendrite
// hashes the fields once (the signature and the computed_body_hash header share it), the axon
// once to check the request; its response's header reuses that hash when the handler left the
// hashed fields unchanged (bt::body_hash_memo compares their text) and hashes again when it
// changed one (Python recomputes it in to_headers() too). Counted with
// bt::detail::body_hash_passes(), which counts every hashing of a type's fields in the process.
#include <bt/dendrite.hpp>

#include <bt/axon.hpp>
#include <bt/body_hash.hpp>
#include <bt/detail/dendrite_ops.hpp>
#include <bt/json_body.hpp>

#include <catch2/catch.hpp>

#include "axon/support/python_client.hpp"
#include "support/dev_keys.hpp"

#include <string>

namespace {

/// One hashed 1 MiB text field and an output.
struct big_text : bt::synapse {
  std::string text;
  std::optional<std::int64_t> length;
  BT_SYNAPSE(big_text, "BigText", BT_FIELD(text, bt::required, bt::hashed), BT_FIELD(length))
};

big_text query() {
  big_text q;
  q.text.assign(std::size_t{1} << 20, 'x');
  return q;
}

}  // namespace

TEST_CASE("body hash: one pass per request on the dendrite, for signature and header",
          "[dendrite][body_hash]") {
  using bt::test::alice;
  using bt::test::bob;
  big_text s = query();
  bt::axon_info target;
  target.ip = "127.0.0.1";
  target.port = 8091;
  target.hotkey = bob().ss58_address();
  const bt::detail::request_identity id{.key = &alice(),
                                        .hotkey = alice().ss58_address(),
                                        .uuid = "5ecbd69c-1cec-11ee-b0dc-e29ce36fec1a",
                                        .version = bt::version_as_int};
  bt::detail::preset_request(s, target, 12.0, id, {});
  std::string scratch, head, body;
  const std::uint64_t before = bt::detail::body_hash_passes();
  bt::detail::encode_request(bt::descriptor_of<big_text>(), s, "203.0.113.5", 1, id,
                             "127.0.0.1:8091", scratch, head, body);
  CHECK(bt::detail::body_hash_passes() - before == 1);
  // The header carries the hash that was signed, and it is the fields' hash.
  CHECK(head.find("computed_body_hash: " + bt::body_hash(s)) != std::string::npos);
}

namespace {

/// The answer of `ax` to one signed Python-shaped request for query() on a fresh connection, its
/// computed_body_hash header and the fields its body carries; `passes`: body-hash passes the axon
/// made meanwhile (the request is built, and hashed, before counting).
struct raw_answer {
  int status = 0;
  std::string header_hash;
  big_text fields;
  std::uint64_t passes = 0;
};

raw_answer ask(const bt::axon& ax) {
  bt::test::python_request_options o;
  o.axon_port = ax.port();
  const std::string wire =
      bt::test::python_request(query(), bt::test::alice(), bt::test::bob().ss58_address(), o)
          .wire(ax.port());
  raw_answer a;
  const std::uint64_t before = bt::detail::body_hash_passes();
  const bt::test::reply rep = bt::test::roundtrip(ax.port(), wire);
  a.passes = bt::detail::body_hash_passes() - before;
  a.status = rep.status;
  a.header_hash = rep.header("computed_body_hash").value_or("");
  REQUIRE_FALSE(bt::read_json_body(bt::descriptor_of<big_text>(), rep.body, a.fields));
  return a;
}

}  // namespace

TEST_CASE("body hash: a 1 MiB hashed field costs one pass on the dendrite, one on the axon",
          "[dendrite][axon][body_hash]") {
  bt::axon ax(bt::test::bob(), bt::axon_options::loopback());
  ax.attach<big_text>([](big_text& b) { b.length = static_cast<std::int64_t>(b.text.size()); });
  ax.start();
  auto info = ax.info();
  info.ip = "127.0.0.1";
  bt::dendrite d(bt::test::alice());

  const std::uint64_t before = bt::detail::body_hash_passes();
  const big_text r = d.call(info, query(), 10.0);
  const std::uint64_t passes = bt::detail::body_hash_passes() - before;
  REQUIRE(r.dendrite.status_code == 200);
  CHECK(r.length == (std::int64_t{1} << 20));
  // dendrite: 1 (signature and header); axon: 1 (request check, reused by the response header).
  CHECK(passes == 2);

  // The answer's header, as a raw client sees it, is its own fields' hash.
  const raw_answer a = ask(ax);
  ax.stop();
  REQUIRE(a.status == 200);
  CHECK(a.passes == 1);
  CHECK(a.fields.text == query().text);
  CHECK(a.header_hash == bt::body_hash(a.fields));
}

TEST_CASE("body hash: a handler that changes a hashed field gets a fresh, correct response hash",
          "[dendrite][axon][body_hash]") {
  bt::axon ax(bt::test::bob(), bt::axon_options::loopback());
  ax.attach<big_text>([](big_text& b) {
    b.length = static_cast<std::int64_t>(b.text.size());
    b.text.back() = 'y';  // same length, one byte changed: only a comparison of the text sees it
  });
  ax.start();
  const raw_answer a = ask(ax);
  ax.stop();
  REQUIRE(a.status == 200);
  REQUIRE(a.fields.text.size() == (std::size_t{1} << 20));
  CHECK(a.fields.text.back() == 'y');
  // 1 (request check) + 1 (response header: the field changed).
  CHECK(a.passes == 2);
  CHECK(a.header_hash == bt::body_hash(a.fields));
  CHECK(a.header_hash != bt::body_hash(query()));
}
