// The short form of a synapse declaration (BT_SYNAPSE / BT_FIELD) against the long form, and the
// base-field tables (bt::synapse_members, bt::terminal_info_members) that drive every codec.
#include <bt/body_hash.hpp>
#include <bt/dynamic_synapse.hpp>
#include <bt/header_codec.hpp>
#include <bt/json_body.hpp>
#include <bt/synapse.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

struct short_form : bt::synapse {
  std::string prompt;
  std::vector<std::string> roles;
  std::optional<std::int64_t> seed;
  double temperature = 0.7;
  BT_SYNAPSE(short_form, "Prompting", BT_FIELD(prompt, bt::required, bt::hashed), BT_FIELD(roles),
             BT_FIELD(seed, bt::hashed), BT_FIELD(temperature, bt::hashed, bt::required))
};

struct long_form : bt::synapse {
  std::string prompt;
  std::vector<std::string> roles;
  std::optional<std::int64_t> seed;
  double temperature = 0.7;
  static bt::synapse_schema<long_form> schema() {
    return {.name = "Prompting",
            .fields = {bt::field<&long_form::prompt>("prompt", bt::required),
                       bt::field<&long_form::roles>("roles"), bt::field<&long_form::seed>("seed"),
                       bt::field<&long_form::temperature>("temperature", bt::required)},
            .hash_fields = {"prompt", "seed", "temperature"}};
  }
};

struct no_fields : bt::synapse {
  BT_SYNAPSE(no_fields, "NoFields")
};

template <class S>
S filled() {
  S s;
  s.prompt = "say \"hi\" \xc3\xa9";
  s.roles = {"system", "user"};
  s.seed = 42;
  s.temperature = 1;
  s.dendrite.nonce = 7;
  s.dendrite.hotkey = "5Hot";
  s.axon.port = 8091;
  return s;
}

bt::terminal_info every_field(int seed) {
  bt::terminal_info t;
  t.status_code = 200 + seed;
  t.status_message = "message " + std::to_string(seed);
  t.process_time = 0.25 + seed;
  t.ip = "10.0.0." + std::to_string(seed);
  t.port = 8000 + seed;
  t.version = 10000 + seed;
  t.nonce = 1718000000123456789 + seed;
  t.uuid = "uuid-" + std::to_string(seed);
  t.hotkey = "hotkey-" + std::to_string(seed);
  t.signature = "0x" + std::string(128, static_cast<char>('0' + seed));
  return t;
}

}  // namespace

TEST_CASE("BT_SYNAPSE gives the descriptor of the long form", "[synapse][short_form]") {
  const auto& s = bt::descriptor_of<short_form>();
  const auto& l = bt::descriptor_of<long_form>();
  CHECK(s.name() == "Prompting");
  CHECK(s.route() == "/Prompting");
  REQUIRE(s.fields().size() == l.fields().size());
  for (std::size_t i = 0; i < s.fields().size(); ++i) {
    INFO(i);
    CHECK(s.fields()[i].name == l.fields()[i].name);  // the stringified member name
    CHECK(s.fields()[i].kind == l.fields()[i].kind);
    CHECK(s.fields()[i].header_name == l.fields()[i].header_name);
    CHECK(s.fields()[i].index == i);
  }
  CHECK(s.fields()[0].name == "prompt");
  CHECK(s.fields()[0].required());
  CHECK_FALSE(s.fields()[1].required());
  CHECK(s.fields()[3].required());
  // Hashed fields in declaration order, whatever the order of the markers.
  CHECK(s.hash_fields() == std::vector<std::size_t>{0, 2, 3});
  CHECK(s.hash_fields() == l.hash_fields());
}

TEST_CASE("BT_SYNAPSE and the long form encode and decode the same", "[synapse][short_form]") {
  const auto a = filled<short_form>();
  const auto b = filled<long_form>();
  bt::header_list ha, hb;
  bt::to_headers(a, ha);
  bt::to_headers(b, hb);
  CHECK(ha.items == hb.items);
  CHECK(bt::to_json_body(a) == bt::to_json_body(b));
  CHECK(bt::to_json_body(a, bt::json_style::compact) ==
        bt::to_json_body(b, bt::json_style::compact));
  CHECK(bt::body_hash(a) == bt::body_hash(b));
  CHECK(bt::body_hash(a) != bt::descriptor_of<short_form>().constant_body_hash());

  short_form back;
  REQUIRE_FALSE(bt::from_json_body(bt::to_json_body(b), back));
  CHECK(back.prompt == a.prompt);
  CHECK(back.roles == a.roles);
  CHECK(back.seed == a.seed);
  CHECK(back.temperature == a.temperature);
  short_form missing;
  const auto err = bt::from_json_body(R"({"prompt": "x"})", missing);
  CHECK(err.code == bt::make_error_code(bt::codec_errc::missing_field));
  CHECK(err.what == "body.temperature");
}

TEST_CASE("BT_SYNAPSE with no fields", "[synapse][short_form]") {
  const auto& d = bt::descriptor_of<no_fields>();
  CHECK(d.name() == "NoFields");
  CHECK(d.fields().empty());
  CHECK(d.hash_fields().empty());
  CHECK(bt::body_hash(no_fields{}) == d.constant_body_hash());
}

TEST_CASE("base fields: every TerminalInfo field round-trips through headers and bodies",
          "[synapse][base_fields]") {
  no_fields s;
  s.timeout = 3.5;
  s.total_size = 11;
  s.header_size = 7;
  s.computed_body_hash = "abc";
  s.dendrite = every_field(1);
  s.axon = every_field(2);

  bt::header_list h;
  bt::to_headers(s, h);
  std::size_t terminal_headers = 0;
  for (const auto& [name, value] : h.items)
    terminal_headers +=
        name.rfind("bt_header_axon_", 0) == 0 || name.rfind("bt_header_dendrite_", 0) == 0;
  CHECK(terminal_headers == 2 * std::tuple_size_v<decltype(bt::terminal_info_members)>);
  REQUIRE(h.find("bt_header_dendrite_signature") != nullptr);
  REQUIRE(h.find("bt_header_axon_process_time") != nullptr);
  CHECK(*h.find("bt_header_axon_process_time") == "2.25");

  no_fields from_h;
  REQUIRE_FALSE(bt::from_headers(h.items, from_h));
  CHECK(from_h.dendrite == s.dendrite);
  CHECK(from_h.axon == s.axon);
  CHECK(from_h.timeout == s.timeout);

  // Header names match case-insensitively, for the base fields as for TerminalInfo's.
  no_fields upper;
  const std::vector<std::pair<std::string, std::string>> mixed = {{"TimeOut", "2"},
                                                                  {"Total_Size", "5"},
                                                                  {"BT_HEADER_AXON_NONCE", "9"},
                                                                  {"Computed_Body_Hash", "h"}};
  bt::header_reader r(upper);
  for (const auto& [n, v] : mixed) REQUIRE(r.feed(n, v));
  CHECK(upper.timeout == 2.0);
  CHECK(upper.total_size == 5);
  CHECK(upper.axon.nonce == 9);
  CHECK(upper.computed_body_hash == "h");
  CHECK(r.saw_body_hash());

  no_fields from_body;
  REQUIRE_FALSE(bt::from_json_body(bt::to_json_body(s), from_body));
  CHECK(from_body == s);
  CHECK(bt::to_json_value(bt::descriptor_of<no_fields>(), s).at("axon").at("uuid") == "uuid-2");

  bt::terminal_info t;
  REQUIRE_FALSE(bt::terminal_info_from_json(
      bt::to_json_value(bt::descriptor_of<no_fields>(), s).at("dendrite"), t, "dendrite"));
  CHECK(t == s.dendrite);
}

TEST_CASE("base fields: a declared field may not reuse a base field name",
          "[synapse][base_fields]") {
  std::vector<std::string_view> names;
  names.push_back(bt::synapse_name_key);
  for (auto n : bt::detail::member_names(bt::synapse_members)) names.push_back(n);
  CHECK(names.size() == 7);
  for (auto n : names) {
    INFO(n);
    bt::error err;
    auto d =
        bt::make_dynamic_descriptor("T", {{std::string(n), bt::field_kind::optional}}, {}, err);
    CHECK(err);
    CHECK(d == nullptr);
  }
}

TEST_CASE("BT_SYNAPSE's name rule holds at compile time, and is the descriptor's",
          "[synapse_macro]") {
  using bt::detail::is_identifier;
  STATIC_REQUIRE(is_identifier("Summarize_v2"));
  STATIC_REQUIRE(is_identifier("_private"));
  STATIC_REQUIRE_FALSE(is_identifier("Sum-marize v2"));
  STATIC_REQUIRE_FALSE(is_identifier("2fast"));
  STATIC_REQUIRE_FALSE(is_identifier(""));
  STATIC_REQUIRE_FALSE(is_identifier("R\xc3\xa9sum\xc3\xa9"));
  constexpr auto letters = [] {
    std::array<char, 129> a{};
    a.fill('a');
    return a;
  }();
  STATIC_REQUIRE(is_identifier(std::string_view(letters.data(), 128)));
  STATIC_REQUIRE_FALSE(is_identifier(std::string_view(letters.data(), 129)));
  // A name the macro accepts builds a descriptor; one it refuses is refused at run time too (a
  // dynamic type's name is checked there). tests/synapse_compile_checks.cmake compiles a
  // BT_SYNAPSE with a bad name and expects the static_assert's message.
  CHECK(bt::descriptor_of<no_fields>().route() == "/NoFields");
  bt::error err;
  CHECK(bt::make_dynamic_descriptor("Sum-marize v2", {}, {}, err) == nullptr);
  CHECK(err.what == "synapse.name");
}
