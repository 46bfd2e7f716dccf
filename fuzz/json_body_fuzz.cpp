// Fuzz target: JSON bodies (bt::parse_json on the strict scanner, bt::read_json_body for a
// typed synapse and a dynamic one, write_json_body).
//
// Invariants:
//  - differential: parse_json accepts exactly what nlohmann accepts minus what PROTOCOL 1.4 makes
//    us refuse on purpose (a duplicate object key, nesting deeper than 64 containers, an integer
//    outside [-2^63, 2^64)), and when both accept the values are equal (nlohmann's one leniency,
//    a NUL byte ending the input, is excluded);
//  - read_json_body never throws, and an accepted body re-encodes (write_json_body, both styles)
//    to a body that is accepted again and re-encodes to the same bytes.
#include <bt/body_hash.hpp>
#include <bt/dynamic_synapse.hpp>
#include <bt/examples/dummy.hpp>
#include <bt/json_body.hpp>

#include "fuzz_support.hpp"

#include <set>
#include <string>
#include <vector>

namespace {

// nlohmann SAX events that tell why we would refuse a document nlohmann accepts.
struct refusal_finder {
  using json = bt::json;
  std::size_t depth = 0;
  bool too_deep = false;
  bool duplicate = false;
  bool big_integer = false;
  std::vector<std::set<std::string>> keys;  // per open object; empty set for arrays

  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(json::number_integer_t) { return true; }
  bool number_unsigned(json::number_unsigned_t) { return true; }
  bool number_float(json::number_float_t, const json::string_t& raw) {
    // nlohmann falls back to double for integers it cannot hold; we refuse them.
    if (raw.find_first_of(".eE") == std::string::npos) big_integer = true;
    return true;
  }
  bool string(json::string_t&) { return true; }
  bool binary(json::binary_t&) { return true; }
  bool open() {
    if (++depth > 64) too_deep = true;
    keys.emplace_back();
    return true;
  }
  bool start_object(std::size_t) { return open(); }
  bool start_array(std::size_t) { return open(); }
  bool key(json::string_t& k) {
    if (!keys.back().insert(k).second) duplicate = true;
    return true;
  }
  bool end_object() {
    --depth;
    keys.pop_back();
    return true;
  }
  bool end_array() {
    --depth;
    keys.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    return false;
  }
};

const std::shared_ptr<const bt::synapse_descriptor>& dynamic_type() {
  static const auto type = [] {
    bt::error err;
    auto d = bt::make_dynamic_descriptor(
        "Dyn",
        {{"a", bt::required}, {"b", bt::field_kind::optional}, {"c", bt::field_kind::optional}},
        {"a", "c"}, err);
    if (!d) bt::fuzz::invariant_failed("dynamic descriptor", __FILE__, __LINE__);
    return d;
  }();
  return type;
}

// read -> write -> read -> write must give the same bytes twice.
void check_body_round_trip(const bt::synapse_descriptor& d, bt::synapse& first,
                           const std::function<bt::synapse&()>& fresh) {
  for (auto style : {bt::json_style::python_dumps, bt::json_style::compact}) {
    std::string out1;
    bt::write_json_body(d, first, out1, style);
    bt::synapse& second = fresh();
    const bt::error e = bt::read_json_body(d, out1, second);
    if (e) {
      std::fprintf(stderr, "re-read failed: %s\n", e.message().c_str());
      BT_FUZZ_CHECK(!"write_json_body output is rejected by read_json_body");
    }
    std::string out2;
    bt::write_json_body(d, second, out2, style);
    BT_FUZZ_CHECK(out1 == out2);
    (void)bt::body_hash(d, second);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  bt::fuzz::init_once();
  const std::string_view text = bt::fuzz::as_text(data, size);

  // ---- differential parse ----
  bt::json ours;
  const bt::error err = bt::parse_json(text, ours);
  refusal_finder finder;
  // nlohmann's lexer takes a NUL byte for the end of the input ("1\0junk" is accepted as 1); a
  // NUL is never valid JSON (not even inside a string), so such texts must be refused.
  const bool has_nul = text.find('\0') != std::string_view::npos;
  const bool nlohmann_ok =
      !has_nul && bt::json::sax_parse(text, &finder, bt::json::input_format_t::json, true);
  const bool expect_ours =
      nlohmann_ok && !finder.too_deep && !finder.duplicate && !finder.big_integer;
  if (static_cast<bool>(!err) != expect_ours) {
    std::fprintf(stderr, "ours: %s; nlohmann: %d deep=%d dup=%d big=%d\n",
                 err ? err.message().c_str() : "accepted", nlohmann_ok, finder.too_deep,
                 finder.duplicate, finder.big_integer);
    BT_FUZZ_CHECK(!"parse_json disagrees with nlohmann");
  }
  if (!err) {
    const bt::json theirs = bt::json::parse(text, nullptr, false);
    BT_FUZZ_CHECK(!theirs.is_discarded());
    BT_FUZZ_CHECK(ours == theirs);
  } else {
    BT_FUZZ_CHECK(ours.is_null());  // untouched on failure
  }

  // ---- typed body (Dummy) ----
  {
    bt::examples::dummy a, b;
    if (!bt::from_json_body(text, a)) {
      check_body_round_trip(bt::descriptor_of<bt::examples::dummy>(), a, [&]() -> bt::synapse& {
        b = {};
        return b;
      });
    }
  }
  // ---- base Synapse ----
  {
    bt::synapse a, b;
    if (!bt::read_json_body(bt::descriptor_of<bt::synapse>(), text, a)) {
      check_body_round_trip(bt::descriptor_of<bt::synapse>(), a, [&]() -> bt::synapse& {
        b = {};
        return b;
      });
    }
  }
  // ---- dynamic type with hash fields ----
  {
    bt::dynamic_synapse a(dynamic_type()), b(dynamic_type());
    if (!bt::read_json_body(*dynamic_type(), text, a)) {
      check_body_round_trip(*dynamic_type(), a, [&]() -> bt::synapse& {
        b = bt::dynamic_synapse(dynamic_type());
        return b;
      });
    }
  }
  return 0;
}
