#include <bt/header_codec.hpp>

#include <bt/body_hash.hpp>
#include <bt/dynamic_synapse.hpp>
#include <bt/examples/dummy.hpp>
#include <bt/json_body.hpp>

#include <catch2/catch.hpp>
#include <support/vectors.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace {

using header_items = std::vector<std::pair<std::string, std::string>>;

// ----- The typed classes of headers.json (see each case's class_definition) -----------------

struct kinds5 : bt::synapse {
  std::int64_t a = 0;
  std::string b;
  std::vector<std::int64_t> c;
  bt::json d = bt::json::object();
  double e = 0;
  std::optional<std::int64_t> f;

  static bt::synapse_schema<kinds5> schema() {
    return {.name = "KindsSynapse",
            .fields = {bt::field<&kinds5::a>("a", bt::required),
                       bt::field<&kinds5::b>("b", bt::required),
                       bt::field<&kinds5::c>("c", bt::required),
                       bt::field<&kinds5::d>("d", bt::required),
                       bt::field<&kinds5::e>("e", bt::required),
                       bt::field<&kinds5::f>("f", bt::required)},
            .hash_fields = {"a", "b", "c", "d", "e"}};
  }
};

struct kinds6 : kinds5 {
  static bt::synapse_schema<kinds6> schema() {
    auto base = kinds5::schema();
    return {.name = base.name,
            .fields = std::move(base.fields),
            .hash_fields = {"a", "b", "c", "d", "e", "f"}};
  }
};

struct test_synapse : bt::synapse {
  std::int64_t a = 0;
  std::optional<std::int64_t> b;
  std::optional<std::int64_t> c;
  std::optional<std::vector<std::int64_t>> d;
  std::vector<std::int64_t> e;
  std::optional<std::int64_t> f;
  std::optional<std::vector<std::int64_t>> g;

  static bt::synapse_schema<test_synapse> schema() {
    return {
        .name = "Test",
        .fields = {bt::field<&test_synapse::a>("a", bt::required), bt::field<&test_synapse::b>("b"),
                   bt::field<&test_synapse::c>("c", bt::required),
                   bt::field<&test_synapse::d>("d", bt::required),
                   bt::field<&test_synapse::e>("e", bt::required), bt::field<&test_synapse::f>("f"),
                   bt::field<&test_synapse::g>("g")},
        .hash_fields = {}};
  }
};

struct prompting : bt::synapse {
  std::vector<std::string> roles;
  std::vector<std::string> messages;
  std::string completion;
  double temperature = 0.7;
  bool stream = false;

  static bt::synapse_schema<prompting> schema() {
    return {.name = "Prompting",
            .fields = {bt::field<&prompting::roles>("roles", bt::required),
                       bt::field<&prompting::messages>("messages", bt::required),
                       bt::field<&prompting::completion>("completion"),
                       bt::field<&prompting::temperature>("temperature"),
                       bt::field<&prompting::stream>("stream", bt::required)},
            .hash_fields = {"messages", "roles"}};
  }
};

struct legacy_hashed : bt::synapse {
  std::int64_t a = 0;
  std::int64_t b = 0;
  std::optional<std::int64_t> c;
  std::optional<std::vector<std::string>> d;
  // The deprecated field form: serialised, and hashing follows model_dump order (a, b, d).
  std::optional<std::vector<std::string>> required_hash_fields =
      std::vector<std::string>{"b", "a", "d"};

  static bt::synapse_schema<legacy_hashed> schema() {
    return {.name = "LegacyHashedSynapse",
            .fields = {bt::field<&legacy_hashed::a>("a", bt::required),
                       bt::field<&legacy_hashed::b>("b", bt::required),
                       bt::field<&legacy_hashed::c>("c"), bt::field<&legacy_hashed::d>("d"),
                       bt::field<&legacy_hashed::required_hash_fields>("required_hash_fields")},
            .hash_fields = {"a", "b", "d"}};
  }
};

struct echo : bt::synapse {
  std::string prompt;
  std::string completion;

  static bt::synapse_schema<echo> schema() {
    return {.name = "Echo",
            .fields = {bt::field<&echo::prompt>("prompt", bt::required),
                       bt::field<&echo::completion>("completion")},
            .hash_fields = {"prompt", "completion"}};
  }
};

// ----- helpers ---------------------------------------------------------------------------------

header_items without_sizes(const header_items& items) {
  header_items out;
  for (const auto& kv : items)
    if (kv.first != "header_size" && kv.first != "total_size") out.push_back(kv);
  return out;
}

header_items expected_items(const bt::json& c) {
  header_items out;
  for (const auto& kv : c.at("header_items"))
    out.emplace_back(kv.at(0).get<std::string>(), kv.at(1).get<std::string>());
  return out;
}

bt::json_style style_of(const bt::json& c) {
  return c.at("direction").get<std::string>() == "response" ? bt::json_style::compact
                                                            : bt::json_style::python_dumps;
}

std::shared_ptr<const bt::synapse_descriptor> dynamic_type_of(const bt::json& c) {
  const auto& body = c.at("json_body");
  std::vector<bt::dynamic_field_spec> specs;
  const auto required = c.at("required_fields");
  std::size_t i = 0;
  for (auto it = body.begin(); it != body.end(); ++it, ++i) {
    if (i < 7) continue;  // the base fields
    bool req = false;
    for (const auto& r : required) req |= r.get<std::string>() == it.key();
    specs.push_back({it.key(), req ? bt::field_kind::required : bt::field_kind::optional});
  }
  std::vector<std::string> hashes;
  for (const auto& h : c.at("hashed_fields_in_order")) hashes.push_back(h.get<std::string>());
  bt::error err;
  auto type = bt::make_dynamic_descriptor(body.at("name").get<std::string>(), specs, hashes, err);
  REQUIRE_FALSE(err);
  return type;
}

/// Checks one synapse object against a case: headers, body text, body hash, and decoding back.
template <class S>
void check_case(const bt::json& c, S& s) {
  const auto& d = bt::descriptor_for(s);
  REQUIRE_FALSE(bt::read_json_body(d, c.at("json_body").dump(), s));

  bt::header_list headers;
  bt::to_headers(s, headers);
  CHECK(without_sizes(headers.items) == expected_items(c));
  // header_size and total_size are present, honest integers.
  const auto* hs = headers.find("header_size");
  const auto* ts = headers.find("total_size");
  REQUIRE(hs != nullptr);
  REQUIRE(ts != nullptr);
  std::int64_t header_size = -1;
  REQUIRE(bt::parse_python_int(*hs, header_size));
  std::size_t before = 0;
  for (const auto& [n, v] : headers.items) {
    if (n == "header_size") break;
    before += n.size() + v.size() + 4;
  }
  CHECK(header_size == static_cast<std::int64_t>(before));

  CHECK(bt::body_hash(s) == c.at("body_hash_hex").get<std::string>());
  CHECK(bt::to_json_body(s, style_of(c)) == c.at("json_body_text").get<std::string>());
  CHECK(bt::to_json_value(d, s) == c.at("json_body"));

  // Decode the headers into a fresh object of the same type.
  S back = s;
  back.dendrite = {};
  back.axon = {};
  back.timeout.reset();
  back.computed_body_hash.clear();
  bt::header_reader r(back);
  for (const auto& [n, v] : headers.items) REQUIRE(r.feed(n, v));
  REQUIRE_FALSE(r.result());
  CHECK(r.saw_body_hash());
  CHECK(back.dendrite == s.dendrite);
  CHECK(back.axon == s.axon);
  CHECK(back.timeout == s.timeout);
  CHECK(back.computed_body_hash == c.at("body_hash_hex").get<std::string>());
}

template <class T>
void check_typed(const bt::json& c) {
  T s;
  check_case(c, s);
}

}  // namespace

TEST_CASE("every case of headers.json, as a dynamic synapse", "[header_codec]") {
  const auto v = bt::test::load_vectors("headers.json");
  REQUIRE(v.at("cases").size() >= 9);
  for (const auto& c : v.at("cases")) {
    INFO(c.at("synapse_description").get<std::string>());
    bt::dynamic_synapse s(dynamic_type_of(c));
    check_case(c, s);
  }
}

TEST_CASE("every case of headers.json, as a typed synapse", "[header_codec]") {
  const auto v = bt::test::load_vectors("headers.json");
  int checked = 0;
  for (const auto& c : v.at("cases")) {
    const auto name = c.at("json_body").at("name").get<std::string>();
    INFO(c.at("synapse_description").get<std::string>());
    if (name == "Synapse") {
      check_typed<bt::synapse>(c);
    } else if (name == "KindsSynapse") {
      if (c.at("hashed_fields_in_order").size() == 5)
        check_typed<kinds5>(c);
      else
        check_typed<kinds6>(c);
    } else if (name == "Test") {
      check_typed<test_synapse>(c);
    } else if (name == "Prompting") {
      check_typed<prompting>(c);
    } else if (name == "LegacyHashedSynapse") {
      check_typed<legacy_hashed>(c);
    } else if (name == "Echo") {
      check_typed<echo>(c);
    } else {
      FAIL("no typed class for " << name);
    }
    ++checked;
  }
  CHECK(checked == static_cast<int>(v.at("cases").size()));
}

TEST_CASE("Dummy headers: placeholder for the required input, none for the output",
          "[header_codec]") {
  bt::examples::dummy d;
  d.dummy_input = 5;
  d.dummy_output = 10;
  bt::header_list h;
  bt::to_headers(d, h, {.body_bytes = 100});
  REQUIRE(h.items.size() == 6);
  CHECK(h.items[0] == std::pair<std::string, std::string>("name", "Dummy"));
  CHECK(h.items[1] == std::pair<std::string, std::string>("timeout", "12.0"));
  CHECK(h.items[2] ==
        std::pair<std::string, std::string>("bt_header_input_obj_dummy_input", "MA=="));
  CHECK(h.items[3].first == "header_size");
  const auto header_size = std::stoll(h.items[3].second);
  CHECK(header_size == (4 + 5 + 4) + (7 + 4 + 4) + (31 + 4 + 4));
  CHECK(h.items[4] ==
        std::pair<std::string, std::string>("total_size", std::to_string(header_size + 100)));
  CHECK(h.items[5] == std::pair<std::string, std::string>(
                          "computed_body_hash",
                          "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a"));
}

TEST_CASE("header copies of messages are sanitised, names are lower case", "[header_codec]") {
  struct MixedCase : bt::synapse {
    std::int64_t InputValue = 0;
    static bt::synapse_schema<MixedCase> schema() {
      return {.name = "MixedCase",
              .fields = {bt::field<&MixedCase::InputValue>("InputValue", bt::required)},
              .hash_fields = {}};
    }
  };
  MixedCase s;
  s.axon.status_message = "line one\r\nline\ttwo \xc3\xa9\xe2\x9c\x93 \x7f";
  s.axon.status_code = 500;
  bt::header_list h;
  bt::to_headers(s, h);
  const auto* msg = h.find("bt_header_axon_status_message");
  REQUIRE(msg != nullptr);
  CHECK(*msg == "line one  line two ??  ");
  CHECK(h.find("bt_header_input_obj_inputvalue") != nullptr);
  for (const auto& kv : h.items)
    CHECK(std::none_of(kv.first.begin(), kv.first.end(),
                       [](char ch) { return ch >= 'A' && ch <= 'Z'; }));
}

TEST_CASE("a None timeout is omitted instead of sent as 'None'", "[header_codec]") {
  bt::synapse s;
  s.timeout.reset();
  bt::header_list h;
  bt::to_headers(s, h);
  CHECK(h.find("timeout") == nullptr);
  CHECK(h.items.front().first == "name");
}

TEST_CASE("from_headers matches names case-insensitively by exact prefix", "[header_codec]") {
  bt::synapse s;
  const header_items in = {
      {"Name", "Synapse"},
      {"TIMEOUT", " 12.5 "},
      {"Bt_Header_Axon_Status_Code", "200"},
      {"BT_HEADER_DENDRITE_NONCE", "1_718_000_000_123_456_789"},
      {"bt_header_dendrite_hotkey", "5Ccpd5yVAaSNdLKK8y2Axrdo8imbyuhXPc6C1zEZypcH78ww"},
      {"x-bt_header_axon_port", "not parsed: not a bt prefix"},
      {"bt_header_axon_unknown_key", "ignored like pydantic's extra keys"},
      {"bt_header_something_else", "ignored"},
      {"Computed_Body_Hash", "abc"},
      {"Header_Size", "+7"},
      {"host", "127.0.0.1"},
  };
  REQUIRE_FALSE(bt::from_headers(in, s));
  CHECK(s.timeout == 12.5);
  CHECK(s.axon.status_code == 200);
  CHECK_FALSE(s.axon.port.has_value());
  CHECK(s.dendrite.nonce == 1718000000123456789);
  CHECK(s.dendrite.hotkey == "5Ccpd5yVAaSNdLKK8y2Axrdo8imbyuhXPc6C1zEZypcH78ww");
  CHECK(s.computed_body_hash == "abc");
  CHECK(s.header_size == 7);
}

TEST_CASE("from_headers: later duplicates of terminal headers win", "[header_codec]") {
  bt::synapse s;
  const header_items in = {{"bt_header_axon_port", "1"}, {"bt_header_axon_port", "2"}};
  REQUIRE_FALSE(bt::from_headers(in, s));
  CHECK(s.axon.port == 2);
}

TEST_CASE("from_headers: text that is not UTF-8 is taken with U+FFFD for each bad byte",
          "[header_codec][utf8]") {
  // PROTOCOL 2.7: a text field always holds valid UTF-8 afterwards; valid text is unchanged.
  bt::synapse s;
  const header_items in = {
      {"bt_header_axon_status_message", "ok\xFF\xFE!"},
      {"bt_header_axon_uuid", "\xC3(\xE2\x82"},
      {"bt_header_dendrite_hotkey", "\xED\xA0\x80"},  // an encoded surrogate
      {"bt_header_dendrite_version", "7"},
      {"bt_header_axon_ip", "caf\xC3\xA9 \xF0\x9F\x98\x80"},
      {"computed_body_hash", "h\x80"},
  };
  REQUIRE_FALSE(bt::from_headers(in, s));
  const std::string r = "\xEF\xBF\xBD";  // U+FFFD
  CHECK(s.axon.status_message == "ok" + r + r + "!");
  CHECK(s.axon.uuid == r + "(" + r + r);
  CHECK(s.dendrite.hotkey == r + r + r);
  CHECK(s.dendrite.version == 7);
  CHECK(s.axon.ip == "caf\xC3\xA9 \xF0\x9F\x98\x80");
  CHECK(s.computed_body_hash == "h" + r);
}

TEST_CASE("malformed headers: each gives a typed error naming the header",
          "[header_codec][errors]") {
  struct bad_case {
    std::string name;
    std::string value;
    bt::codec_errc code;
    std::string what;
    std::string detail;
  };
  const std::vector<bad_case> cases = {
      {"bt_header_dendrite_nonce", "abc", bt::codec_errc::invalid_integer,
       "bt_header_dendrite_nonce", "not a Python int() literal: 'abc'"},
      {"bt_header_dendrite_nonce", "", bt::codec_errc::invalid_integer, "bt_header_dendrite_nonce",
       "not a Python int() literal: ''"},
      {"bt_header_dendrite_nonce", "12.0", bt::codec_errc::invalid_integer,
       "bt_header_dendrite_nonce", "not a Python int() literal: '12.0'"},
      {"bt_header_dendrite_nonce", "1e3", bt::codec_errc::invalid_integer,
       "bt_header_dendrite_nonce", "not a Python int() literal: '1e3'"},
      {"bt_header_dendrite_nonce", "1__0", bt::codec_errc::invalid_integer,
       "bt_header_dendrite_nonce", "not a Python int() literal: '1__0'"},
      {"bt_header_dendrite_nonce", "99999999999999999999", bt::codec_errc::invalid_integer,
       "bt_header_dendrite_nonce", "integer out of range: '99999999999999999999'"},
      {"BT_HEADER_AXON_PORT", "80x", bt::codec_errc::invalid_integer, "bt_header_axon_port",
       "not a Python int() literal: '80x'"},
      {"bt_header_axon_status_code", "0x10", bt::codec_errc::invalid_integer,
       "bt_header_axon_status_code", "not a Python int() literal: '0x10'"},
      {"bt_header_dendrite_version", "- 1", bt::codec_errc::invalid_integer,
       "bt_header_dendrite_version", "not a Python int() literal: '- 1'"},
      {"total_size", "lots", bt::codec_errc::invalid_integer, "total_size",
       "not a Python int() literal: 'lots'"},
      {"Header_Size", "1.5", bt::codec_errc::invalid_integer, "header_size",
       "not a Python int() literal: '1.5'"},
      {"timeout", "twelve", bt::codec_errc::invalid_float, "timeout",
       "not a Python float() literal: 'twelve'"},
      {"timeout", "None", bt::codec_errc::invalid_float, "timeout",
       "not a Python float() literal: 'None'"},
      {"timeout", "1._5", bt::codec_errc::invalid_float, "timeout",
       "not a Python float() literal: '1._5'"},
      {"bt_header_axon_process_time", "0x1p3", bt::codec_errc::invalid_float,
       "bt_header_axon_process_time", "not a Python float() literal: '0x1p3'"},
      {"bt_header_input_obj_a", "MA=", bt::codec_errc::invalid_base64, "bt_header_input_obj_a",
       "not canonical base64: 'MA='"},
      {"bt_header_input_obj_a", "M A==", bt::codec_errc::invalid_base64, "bt_header_input_obj_a",
       "not canonical base64: 'M A=='"},
      {"bt_header_input_obj_a", "e30", bt::codec_errc::invalid_base64, "bt_header_input_obj_a",
       "not canonical base64: 'e30'"},
      {"bt_header_input_obj_a", "e3==", bt::codec_errc::invalid_base64, "bt_header_input_obj_a",
       "not canonical base64: 'e3=='"},
      {"bt_header_input_obj_a", "e30=e30=", bt::codec_errc::invalid_base64, "bt_header_input_obj_a",
       "not canonical base64: 'e30=e30='"},
      {"bt_header_input_obj_a", "YWJj", bt::codec_errc::invalid_json, "bt_header_input_obj_a",
       ""},  // "abc": checked below by prefix
      {"bt_header_dendrite_hotkey", std::string(8193, 'x'), bt::codec_errc::value_too_long,
       "bt_header_dendrite_hotkey", "value of 8193 bytes exceeds 8192"},
      {"computed_body_hash", std::string(10000, 'a'), bt::codec_errc::value_too_long,
       "computed_body_hash", "value of 10000 bytes exceeds 8192"},
      {"bt_header_" + std::string(300, 'z'), "v", bt::codec_errc::value_too_long,
       "bt_header_" + std::string(54, 'z') + "...", "header name of 310 bytes exceeds 256"},
  };
  // The same errors whether every value is kept or only the axon block (a dendrite's answer).
  for (const auto scope : {bt::header_scope::everything, bt::header_scope::axon_block})
    for (const auto& c : cases) {
      INFO(c.name.substr(0, 40) << ": " << c.value.substr(0, 40));
      bt::synapse s;
      bt::header_reader r(s, scope);
      CHECK_FALSE(r.feed(c.name, c.value));
      const auto& err = r.result();
      CHECK(err.code == bt::make_error_code(c.code));
      CHECK(err.what == c.what);
      if (!c.detail.empty())
        CHECK(err.detail == c.detail);
      else
        CHECK(err.detail.rfind("placeholder is not JSON: ", 0) == 0);
      // The reader stops at the first error.
      CHECK_FALSE(r.feed("timeout", "1.0"));
      CHECK(s.timeout == 12.0);
    }
}

TEST_CASE("header_scope::axon_block keeps the axon block as a full read does", "[header_codec]") {
  const header_items items = {
      {"name", "Dummy"},
      {"timeout", "12.0"},
      {"bt_header_axon_status_code", "200"},
      {"bt_header_axon_status_message", "Success"},
      {"bt_header_axon_process_time", "0.5"},
      {"bt_header_axon_hotkey", "5Fhk"},
      {"bt_header_axon_uuid", "u\xff\x31"},
      {"bt_header_axon_signature", "0xab"},
      {"bt_header_dendrite_hotkey", "5Grw"},
      {"bt_header_dendrite_uuid", "\xc3"},
      {"bt_header_dendrite_nonce", "7"},
      {"computed_body_hash", "a3f"},
      {"header_size", "100"},
  };
  bt::synapse full;
  bt::synapse axon;
  REQUIRE_FALSE(bt::from_headers(items, full));
  bt::header_reader r(axon, bt::header_scope::axon_block);
  for (const auto& [n, v] : items) REQUIRE(r.feed(n, v));
  CHECK(r.saw_body_hash());
  CHECK(axon.axon == full.axon);
  CHECK(axon.axon.uuid ==
        "u\xef\xbf\xbd"
        "1");
  // text outside the axon block is checked (its length) but not kept
  CHECK_FALSE(axon.dendrite.hotkey.has_value());
  CHECK(axon.computed_body_hash.empty());
}

TEST_CASE("placeholders: known values, other canonical base64 JSON, deep JSON", "[header_codec]") {
  bt::synapse s;
  bt::header_reader r(s);
  for (const char* v : {"MA==", "IiI=", "W10=", "e30=", "MC4w", "ZmFsc2U="})
    CHECK(r.feed("bt_header_input_obj_x", v));
  CHECK(r.feed("bt_header_input_obj_x", "WzEsIDJd"));      // [1, 2]
  CHECK(r.feed("bt_header_input_obj_x", "eyJhIjogMX0="));  // {"a": 1}
  REQUIRE_FALSE(r.result());
  // 100 nested arrays: beyond the placeholder depth bound.
  std::string deep(100, '[');
  deep += std::string(100, ']');
  static constexpr char alphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string b64;
  for (std::size_t i = 0; i < deep.size(); i += 3) {
    const unsigned n = (static_cast<unsigned char>(deep[i]) << 16) |
                       (i + 1 < deep.size() ? static_cast<unsigned char>(deep[i + 1]) << 8 : 0) |
                       (i + 2 < deep.size() ? static_cast<unsigned char>(deep[i + 2]) : 0);
    b64 += alphabet[(n >> 18) & 63];
    b64 += alphabet[(n >> 12) & 63];
    b64 += i + 1 < deep.size() ? alphabet[(n >> 6) & 63] : '=';
    b64 += i + 2 < deep.size() ? alphabet[n & 63] : '=';
  }
  CHECK_FALSE(r.feed("bt_header_input_obj_x", b64));
  CHECK(r.result().code == bt::make_error_code(bt::codec_errc::nesting_too_deep));
  CHECK(r.result().what == "bt_header_input_obj_x");
}

TEST_CASE("parse_python_int follows int()", "[header_codec]") {
  std::int64_t v = 0;
  CHECK((bt::parse_python_int("42", v) && v == 42));
  CHECK((bt::parse_python_int("  -7\t", v) && v == -7));
  CHECK((bt::parse_python_int("+3", v) && v == 3));
  CHECK((bt::parse_python_int("007", v) && v == 7));
  CHECK((bt::parse_python_int("1_000", v) && v == 1000));
  CHECK((bt::parse_python_int("9223372036854775807", v) &&
         v == std::numeric_limits<std::int64_t>::max()));
  CHECK((bt::parse_python_int("-9223372036854775808", v) &&
         v == std::numeric_limits<std::int64_t>::min()));
  CHECK_FALSE(bt::parse_python_int("9223372036854775808", v));
  CHECK_FALSE(bt::parse_python_int("", v));
  CHECK_FALSE(bt::parse_python_int("   ", v));
  CHECK_FALSE(bt::parse_python_int("-", v));
  CHECK_FALSE(bt::parse_python_int("_1", v));
  CHECK_FALSE(bt::parse_python_int("1_", v));
  CHECK_FALSE(bt::parse_python_int("1__0", v));
  CHECK_FALSE(bt::parse_python_int("12.0", v));
  CHECK_FALSE(bt::parse_python_int("1e3", v));
  CHECK_FALSE(bt::parse_python_int("0x10", v));
  CHECK_FALSE(bt::parse_python_int("+-1", v));
}

TEST_CASE("parse_python_float follows float()", "[header_codec]") {
  double v = 0;
  CHECK((bt::parse_python_float("12", v) && v == 12.0));
  CHECK((bt::parse_python_float("12.0", v) && v == 12.0));
  CHECK((bt::parse_python_float(" 12.5\n", v) && v == 12.5));
  CHECK((bt::parse_python_float("1e-05", v) && v == 1e-05));
  CHECK((bt::parse_python_float("1E5", v) && v == 1e5));
  CHECK((bt::parse_python_float("12.", v) && v == 12.0));
  CHECK((bt::parse_python_float(".5", v) && v == 0.5));
  CHECK((bt::parse_python_float("-.5e1", v) && v == -5.0));
  CHECK((bt::parse_python_float("1_000.000_1", v) && v == 1000.0001));
  CHECK((bt::parse_python_float("1e1_0", v) && v == 1e10));
  CHECK((bt::parse_python_float("0.012345678", v) && v == 0.012345678));
  CHECK((bt::parse_python_float("inf", v) && std::isinf(v) && v > 0));
  CHECK((bt::parse_python_float("-Infinity", v) && std::isinf(v) && v < 0));
  CHECK((bt::parse_python_float("nan", v) && std::isnan(v)));
  CHECK((bt::parse_python_float("+NaN", v) && std::isnan(v)));
  CHECK((bt::parse_python_float("1e400", v) && std::isinf(v)));
  CHECK((bt::parse_python_float("-1e400", v) && std::isinf(v) && v < 0));
  CHECK((bt::parse_python_float("1e-400", v) && v == 0.0));
  CHECK((bt::parse_python_float("-1e-400", v) && v == 0.0 && std::signbit(v)));
  CHECK((bt::parse_python_float("0.000001e-400", v) && v == 0.0));
  CHECK((bt::parse_python_float("123456e400", v) && std::isinf(v)));
  CHECK_FALSE(bt::parse_python_float("", v));
  CHECK_FALSE(bt::parse_python_float(".", v));
  CHECK_FALSE(bt::parse_python_float("e5", v));
  CHECK_FALSE(bt::parse_python_float("1e", v));
  CHECK_FALSE(bt::parse_python_float("1_", v));
  CHECK_FALSE(bt::parse_python_float("1_.5", v));
  CHECK_FALSE(bt::parse_python_float("1._5", v));
  CHECK_FALSE(bt::parse_python_float("in", v));
  CHECK_FALSE(bt::parse_python_float("infinit", v));
  CHECK_FALSE(bt::parse_python_float("0x10", v));
  CHECK_FALSE(bt::parse_python_float("None", v));
  CHECK_FALSE(bt::parse_python_float("1.0.0", v));
  CHECK_FALSE(bt::parse_python_float("- 1", v));
}

TEST_CASE("to_headers output survives from_headers for a typed Dummy", "[header_codec]") {
  bt::examples::dummy d;
  d.dummy_input = 1;
  d.timeout = 30.25;
  d.dendrite.nonce = 1718000000123456789;
  d.dendrite.ip = "203.0.113.7";
  d.dendrite.version = 10002000;
  d.axon.process_time = 0.0012340545654296875;
  d.axon.status_code = 200;
  bt::header_list h;
  bt::to_headers(d, h);
  bt::examples::dummy back;
  REQUIRE_FALSE(bt::from_headers(h.items, back));
  CHECK(back.timeout == d.timeout);
  CHECK(back.dendrite == d.dendrite);
  CHECK(back.axon == d.axon);
  CHECK(back.dummy_input == 0);  // placeholders are never data
  CHECK(back.total_size.has_value());
}

TEST_CASE("to_headers emits a precomputed body hash as given", "[header_codec]") {
  echo e;
  e.prompt = "ping";
  const std::string hash = bt::body_hash(e);
  bt::header_list a, b;
  bt::to_headers(e, a);
  bt::to_headers(e, b, {.body_bytes = 0, .computed_body_hash = hash});
  CHECK(a.items == b.items);
  bt::header_list c;
  bt::to_headers(e, c, {.body_bytes = 0, .computed_body_hash = "given"});
  CHECK(*c.find("computed_body_hash") == "given");
}

TEST_CASE("header sanitising checks every byte position", "[header_codec]") {
  // The printable-ASCII check works 8 bytes at a time: put each bad byte at each position.
  for (unsigned char bad : {0x00, 0x09, 0x1f, 0x7f, 0x80, 0xc3, 0xff}) {
    for (std::size_t pos = 0; pos < 19; ++pos) {
      std::string msg(19, 'a');
      msg[pos] = static_cast<char>(bad);
      bt::synapse s;
      s.axon.status_message = msg;
      bt::header_list h;
      bt::to_headers(s, h);
      const std::string& out = *h.find("bt_header_axon_status_message");
      INFO("byte " << int(bad) << " at " << pos);
      REQUIRE(out.size() == 19);
      CHECK(out[pos] == (bad < 0x20 || bad == 0x7f ? ' ' : '?'));
      CHECK(std::count(out.begin(), out.end(), 'a') == 18);
    }
  }
  // Edge values that are printable stay as they are.
  bt::synapse s;
  s.axon.status_message = std::string(" ~ !}") + std::string(16, '~') + " ";
  bt::header_list h;
  bt::to_headers(s, h);
  CHECK(*h.find("bt_header_axon_status_message") == *s.axon.status_message);
}
