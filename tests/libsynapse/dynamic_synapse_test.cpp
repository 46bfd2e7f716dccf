#include <bt/dynamic_synapse.hpp>

#include <bt/body_hash.hpp>
#include <bt/header_codec.hpp>
#include <bt/json_body.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace {

std::shared_ptr<const bt::synapse_descriptor> make(std::vector<bt::dynamic_field_spec> fields,
                                                   std::vector<std::string> hashes = {}) {
  bt::error err;
  auto d = bt::make_dynamic_descriptor("Dyn", fields, hashes, err);
  REQUIRE_FALSE(err);
  REQUIRE(d != nullptr);
  return d;
}

}  // namespace

TEST_CASE("make_dynamic_descriptor builds the descriptor once", "[dynamic_synapse]") {
  auto d = make({{"a", bt::required}, {"B", bt::field_kind::optional}}, {"B", "a"});
  CHECK(d->name() == "Dyn");
  CHECK(d->route() == "/Dyn");
  REQUIRE(d->fields().size() == 2);
  CHECK(d->fields()[0].header_name == "bt_header_input_obj_a");
  CHECK(d->fields()[1].header_name == "bt_header_input_obj_b");
  CHECK(d->fields()[1].index == 1);
  CHECK(d->hash_fields() == std::vector<std::size_t>{1, 0});
  CHECK(d->constant_body_hash().empty());
  CHECK(d->find("B") == &d->fields()[1]);
  CHECK(d->find("b") == nullptr);
  CHECK(make({})->constant_body_hash() ==
        "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a");
}

TEST_CASE("make_dynamic_descriptor rejects bad declarations", "[dynamic_synapse][errors]") {
  struct bad {
    std::string name;
    std::vector<bt::dynamic_field_spec> fields;
    std::vector<std::string> hashes;
    std::string what;
    std::string detail;
  };
  const std::vector<bad> cases = {
      {"", {}, {}, "synapse.name", "not an ASCII identifier of 1 to 128 characters: ''"},
      {"Bad Name",
       {},
       {},
       "synapse.name",
       "not an ASCII identifier of 1 to 128 characters: 'Bad Name'"},
      {"1st", {}, {}, "synapse.name", "not an ASCII identifier of 1 to 128 characters: '1st'"},
      {"S/x", {}, {}, "synapse.name", "not an ASCII identifier of 1 to 128 characters: 'S/x'"},
      // The quotation keeps UTF-8 as it is (it once printed 'R?sum?').
      {"R\xc3\xa9sum\xc3\xa9",
       {},
       {},
       "synapse.name",
       "not an ASCII identifier of 1 to 128 characters: 'R\xc3\xa9sum\xc3\xa9'"},
      {"S",
       {{"a", bt::required}, {"a", bt::required}},
       {},
       "synapse.fields.a",
       "duplicate field name"},
      {"S",
       {{"timeout", bt::required}},
       {},
       "synapse.fields.timeout",
       "the name of a base Synapse field"},
      {"S",
       {{"computed_body_hash", bt::required}},
       {},
       "synapse.fields.computed_body_hash",
       "the name of a base Synapse field"},
      {"S",
       {{"a-b", bt::required}},
       {},
       "synapse.fields",
       "field name is not an ASCII identifier of 1 to 128 characters: 'a-b'"},
      {"S",
       {{"a", bt::required}},
       {"b"},
       "synapse.required_hash_fields",
       "not a field of the type: 'b'"},
  };
  for (const auto& c : cases) {
    INFO(c.name << " / " << c.what);
    bt::error err;
    auto d = bt::make_dynamic_descriptor(c.name, c.fields, c.hashes, err);
    CHECK(d == nullptr);
    CHECK(err.code == bt::make_error_code(bt::codec_errc::invalid_json));
    CHECK(err.what == c.what);
    CHECK(err.detail == c.detail);
  }
}

TEST_CASE("placeholders follow the runtime JSON type of the value", "[dynamic_synapse]") {
  auto d = make({{"i", bt::required},
                 {"f", bt::required},
                 {"s", bt::required},
                 {"l", bt::required},
                 {"o", bt::required},
                 {"b", bt::required},
                 {"n", bt::required},
                 {"u", bt::required},
                 {"opt", bt::field_kind::optional}});
  bt::dynamic_synapse s(d);
  REQUIRE(s.values.size() == 9);
  *s.get("i") = 5;
  *s.get("f") = 2.5;
  *s.get("s") = "x";
  *s.get("l") = bt::json::array({1});
  *s.get("o") = bt::json::object({{"k", 1}});
  *s.get("b") = true;
  // n stays null: a required None gets no placeholder (PROTOCOL 2.3, D8)
  *s.get("u") = std::uint64_t{18446744073709551615u};
  *s.get("opt") = 1;  // not required: never a header
  bt::header_list h;
  bt::to_headers(s, h);
  CHECK(*h.find("bt_header_input_obj_i") == "MA==");
  CHECK(*h.find("bt_header_input_obj_f") == "MC4w");
  CHECK(*h.find("bt_header_input_obj_s") == "IiI=");
  CHECK(*h.find("bt_header_input_obj_l") == "W10=");
  CHECK(*h.find("bt_header_input_obj_o") == "e30=");
  CHECK(*h.find("bt_header_input_obj_b") == "ZmFsc2U=");
  CHECK(*h.find("bt_header_input_obj_u") == "MA==");
  CHECK(h.find("bt_header_input_obj_n") == nullptr);
  CHECK(h.find("bt_header_input_obj_opt") == nullptr);
}

TEST_CASE("get() finds fields by exact name, copies share the type", "[dynamic_synapse]") {
  auto d = make({{"a", bt::required}});
  bt::dynamic_synapse s(d);
  REQUIRE(s.get("a") != nullptr);
  CHECK(s.get("A") == nullptr);
  CHECK(s.get("timeout") == nullptr);
  CHECK(s.get("a")->is_null());
  const bt::dynamic_synapse& cs = s;
  CHECK(cs.get("a") == s.get("a"));
  bt::dynamic_synapse copy = s;
  *copy.get("a") = 1;
  CHECK(s.get("a")->is_null());
  CHECK(copy.type == s.type);
  CHECK(&bt::descriptor_for(copy) == d.get());
}

TEST_CASE("dynamic values round-trip through the body untouched", "[dynamic_synapse]") {
  auto d = make({{"a", bt::required}, {"b", bt::field_kind::optional}}, {"a", "b"});
  bt::dynamic_synapse s(d);
  *s.get("a") = bt::json::parse(R"({"z": [1, 2.0, "three", null, true], "y": {"x": -1}})");
  *s.get("b") = 1.0;
  const auto body = bt::to_json_body(s);
  CHECK(body.substr(body.find("\"a\"")) ==
        R"("a": {"z": [1, 2.0, "three", null, true], "y": {"x": -1}}, "b": 1.0})");
  bt::dynamic_synapse back(d);
  REQUIRE_FALSE(bt::from_json_body(body, back));
  CHECK(back.values == s.values);
  CHECK(bt::body_hash(back) == bt::body_hash(s));
  // Untyped: an int stays an int (str 1), a float stays a float (str 1.0).
  *back.get("b") = 1;
  CHECK(bt::body_hash(back) != bt::body_hash(s));
}

TEST_CASE("field ops tolerate a values vector shorter than the type", "[dynamic_synapse]") {
  auto d = make({{"a", bt::required}, {"b", bt::field_kind::optional}});
  bt::dynamic_synapse s(d);
  s.values.clear();
  bt::header_list h;
  bt::to_headers(s, h);  // both read as None
  CHECK(h.find("bt_header_input_obj_a") == nullptr);
  REQUIRE_FALSE(bt::from_json_body(R"({"a": 1, "b": 2})", s));
  REQUIRE(s.values.size() == 2);
  CHECK(s.values[1] == 2);
}
