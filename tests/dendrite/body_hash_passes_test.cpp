// How many body-hash passes a call with a large hashed field costs on each side: the dendrite
// hashes the fields once (the signature and the computed_body_hash header share it), the axon
// once to check the request (its signature check takes the header's hash) and once more for its
// response's header, which must describe the response's own fields (a handler may change a
// hashed field; Python recomputes it in to_headers() too). Counted with
// bt::detail::body_hash_passes(), which counts every hashing of a type's fields in the process.
#include <bt/dendrite.hpp>

#include <bt/axon.hpp>
#include <bt/body_hash.hpp>
#include <bt/detail/dendrite_ops.hpp>

#include <catch2/catch.hpp>

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

TEST_CASE("body hash: a 1 MiB hashed field costs one pass on the dendrite, two on the axon",
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
  ax.stop();
  REQUIRE(r.dendrite.status_code == 200);
  CHECK(r.length == (std::int64_t{1} << 20));
  // dendrite: 1 (signature and header); axon: 1 (request check) + 1 (response header).
  CHECK(passes == 3);
}
