#include <bt/json_body.hpp>

#include <bt/dynamic_synapse.hpp>
#include <bt/examples/dummy.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace {

struct point {
  std::int64_t x = 0;
  std::string label;
  BT_DEFINE_TYPE_INTRUSIVE(point, x, label)
  friend bool operator==(const point&, const point&) = default;
};

struct rich : bt::synapse {
  std::int64_t count = 0;
  double ratio = 0;
  bool flag = false;
  std::string text;
  std::optional<std::int64_t> maybe;
  std::vector<double> scores;
  std::vector<std::vector<std::int64_t>> grid;
  bt::json extra;
  point where;
  std::optional<std::vector<std::string>> tags;

  static bt::synapse_schema<rich> schema() {
    return {
        .name = "Rich",
        .fields = {bt::field<&rich::count>("count", bt::required), bt::field<&rich::ratio>("ratio"),
                   bt::field<&rich::flag>("flag"), bt::field<&rich::text>("text"),
                   bt::field<&rich::maybe>("maybe"), bt::field<&rich::scores>("scores"),
                   bt::field<&rich::grid>("grid"), bt::field<&rich::extra>("extra"),
                   bt::field<&rich::where>("where"), bt::field<&rich::tags>("tags")},
        .hash_fields = {"count", "where"}};
  }
  friend bool operator==(const rich&, const rich&) = default;
};

const std::string base_tail =
    "\"dendrite\": {\"status_code\": null, \"status_message\": null, \"process_time\": null, "
    "\"ip\": null, "
    "\"port\": null, \"version\": null, \"nonce\": null, \"uuid\": null, \"hotkey\": null, "
    "\"signature\": null}, "
    "\"axon\": {\"status_code\": null, \"status_message\": null, \"process_time\": null, \"ip\": "
    "null, "
    "\"port\": null, \"version\": null, \"nonce\": null, \"uuid\": null, \"hotkey\": null, "
    "\"signature\": null}, "
    "\"computed_body_hash\": \"\"";

std::string dummy_body(const std::string& tail) {
  return "{\"name\": \"Dummy\", \"timeout\": 12.0, \"total_size\": 0, \"header_size\": 0, " +
         base_tail + tail + "}";
}

}  // namespace

TEST_CASE("the base Synapse body is Python's json.dumps(Synapse().model_dump())", "[json_body]") {
  CHECK(bt::to_json_body(bt::synapse{}) ==
        "{\"name\": \"Synapse\", \"timeout\": 12.0, \"total_size\": 0, \"header_size\": 0, " +
            base_tail + "}");
}

TEST_CASE("typed fields are written as the Python class dumps them", "[json_body]") {
  rich r;
  r.count = -3;
  r.ratio = 1;  // a float field holding 1 dumps as 1.0
  r.flag = true;
  r.text = "h\xc3\xa9 \"q\" \\ \n \x01 \x7f \xf0\x9f\x9a\x80";
  r.scores = {1, 0.5, 1e16, 1e-5};
  r.grid = {{1, 2}, {}};
  r.extra = bt::json::parse(R"({"b": 1, "a": [true, null]})");
  r.where = {7, "x"};
  r.tags = std::vector<std::string>{"t"};
  const auto py = bt::to_json_body(r);
  CHECK(
      py.substr(py.find("\"computed_body_hash\"")) ==
      "\"computed_body_hash\": \"\", \"count\": -3, \"ratio\": 1.0, \"flag\": true, "
      "\"text\": \"h\\u00e9 \\\"q\\\" \\\\ \\n \\u0001 \\u007f \\ud83d\\ude80\", \"maybe\": null, "
      "\"scores\": [1.0, 0.5, 1e+16, 1e-05], \"grid\": [[1, 2], []], \"extra\": {\"b\": 1, \"a\": "
      "[true, null]}, "
      "\"where\": {\"x\": 7, \"label\": \"x\"}, \"tags\": [\"t\"]}");
  const auto compact = bt::to_json_body(r, bt::json_style::compact);
  CHECK(
      compact.substr(compact.find("\"computed_body_hash\"")) ==
      "\"computed_body_hash\":\"\",\"count\":-3,\"ratio\":1.0,\"flag\":true,"
      "\"text\":\"h\xc3\xa9 \\\"q\\\" \\\\ \\n \\u0001 \x7f \xf0\x9f\x9a\x80\",\"maybe\":null,"
      "\"scores\":[1.0,0.5,1e+16,1e-05],\"grid\":[[1,2],[]],\"extra\":{\"b\":1,\"a\":[true,null]},"
      "\"where\":{\"x\":7,\"label\":\"x\"},\"tags\":[\"t\"]}");
  CHECK(compact.rfind(
            "{\"name\":\"Rich\",\"timeout\":12.0,\"total_size\":0,\"header_size\":0,\"dendrite\":{",
            0) == 0);
}

TEST_CASE("bodies round-trip through read_json_body", "[json_body]") {
  rich r;
  r.count = 9223372036854775807;
  r.ratio = 0.1;
  r.text = "\xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x9a\x80";
  r.maybe = -1;
  r.scores = {0.30000000000000004, -0.0};
  r.grid = {{3}};
  r.extra = bt::json::parse(R"([1, "two", {"three": 3.5}, 18446744073709551615])");
  r.where = {1, "p"};
  r.dendrite.nonce = 1718000000123456789;
  r.dendrite.signature = "0xabc";
  r.axon.process_time = 0.012345678;
  r.timeout = 30;
  r.total_size = 123;
  r.computed_body_hash = "deadbeef";
  for (auto style : {bt::json_style::python_dumps, bt::json_style::compact}) {
    rich back;
    REQUIRE_FALSE(bt::from_json_body(bt::to_json_body(r, style), back));
    CHECK(back == r);
    CHECK(std::signbit(back.scores[1]));
  }
}

TEST_CASE("non-finite floats are written as null", "[json_body]") {
  rich r;
  r.ratio = std::numeric_limits<double>::infinity();
  r.scores = {std::nan("")};
  const auto body = bt::to_json_body(r);
  CHECK(body.find("\"ratio\": null") != std::string::npos);
  CHECK(body.find("\"scores\": [null]") != std::string::npos);
}

TEST_CASE("reading: unknown keys ignored, missing optional keeps its value, name not taken",
          "[json_body]") {
  bt::examples::dummy d;
  d.dummy_output = 4;
  REQUIRE_FALSE(bt::from_json_body(R"({"name": "Other", "dummy_input": 5, "surprise": [1]})", d));
  CHECK(d.dummy_input == 5);
  CHECK(d.dummy_output == 4);
  CHECK(d.timeout == 12.0);
  // null for an Optional field is None; the whole terminal block null resets it.
  d.axon.port = 1;
  REQUIRE_FALSE(bt::from_json_body(R"({"dummy_input": 5, "dummy_output": null, "axon": null})", d));
  CHECK_FALSE(d.dummy_output.has_value());
  CHECK(d.axon == bt::terminal_info{});
}

TEST_CASE("reading applies the TerminalInfo casts of PROTOCOL 1.1", "[json_body]") {
  bt::examples::dummy d;
  REQUIRE_FALSE(bt::from_json_body(dummy_body(", \"dummy_input\": 1"), d));
  REQUIRE_FALSE(bt::from_json_body(
      R"({"dummy_input": 1, "timeout": "30", "total_size": "1_000", "dendrite": {"nonce": "17", "port": 8091.0, "process_time": "1e-05", "extra": 1}})",
      d));
  CHECK(d.timeout == 30.0);
  CHECK(d.total_size == 1000);
  CHECK(d.dendrite.nonce == 17);
  CHECK(d.dendrite.port == 8091);
  CHECK(d.dendrite.process_time == 1e-05);
  // A TerminalInfo block replaces the whole terminal: absent keys become None.
  REQUIRE_FALSE(bt::from_json_body(R"({"dummy_input": 1, "dendrite": {"port": 1}})", d));
  CHECK_FALSE(d.dendrite.nonce.has_value());
  CHECK(d.dendrite.port == 1);
}

TEST_CASE("malformed bodies: each gives the exact error", "[json_body][errors]") {
  struct bad_case {
    std::string body;
    bt::codec_errc code;
    std::string what;
    std::string detail;  // exact, or a prefix when it ends with '*'
  };
  const std::vector<bad_case> cases = {
      {"", bt::codec_errc::invalid_json, "body", "*"},
      {"{", bt::codec_errc::invalid_json, "body", "*"},
      {"{\"dummy_input\": 1,}", bt::codec_errc::invalid_json, "body", "*"},
      {"{\"dummy_input\": NaN}", bt::codec_errc::invalid_json, "body", "*"},
      {"{\"dummy_input\": Infinity}", bt::codec_errc::invalid_json, "body", "*"},
      {"{\"dummy_input\": 1} trailing", bt::codec_errc::invalid_json, "body", "*"},
      {"{\"dummy_input\": \"\xff\"}", bt::codec_errc::invalid_json, "body", "*"},
      {"{\"dummy_input\": 1, \"dummy_input\": 2}", bt::codec_errc::invalid_json, "body",
       "duplicate key 'dummy_input'"},
      {"{\"dummy_input\": 123456789012345678901234567890}", bt::codec_errc::invalid_json, "body",
       "integer literal beyond 64 bits: '123456789012345678901234567890'"},
      {"{\"dummy_input\": -9223372036854775809}", bt::codec_errc::invalid_json, "body",
       "integer literal beyond 64 bits: '-9223372036854775809'"},
      {std::string(65, '[') + std::string(65, ']'), bt::codec_errc::nesting_too_deep, "body",
       "nesting deeper than 64"},
      {"[]", bt::codec_errc::invalid_body, "body", "expected a JSON object, got array"},
      {"\"text\"", bt::codec_errc::invalid_body, "body", "expected a JSON object, got string"},
      {"null", bt::codec_errc::invalid_body, "body", "expected a JSON object, got null"},
      {"{}", bt::codec_errc::missing_field, "body.dummy_input", "required field absent"},
      {"{\"dummy_output\": 1}", bt::codec_errc::missing_field, "body.dummy_input",
       "required field absent"},
      {"{\"dummy_input\": \"1\"}", bt::codec_errc::wrong_type, "body.dummy_input",
       "expected an integer, got string"},
      {"{\"dummy_input\": 1.5}", bt::codec_errc::wrong_type, "body.dummy_input",
       "expected an integer, got a non-integral number"},
      {"{\"dummy_input\": true}", bt::codec_errc::wrong_type, "body.dummy_input",
       "expected an integer, got boolean"},
      {"{\"dummy_input\": null}", bt::codec_errc::wrong_type, "body.dummy_input",
       "expected an integer, got null"},
      {"{\"dummy_input\": 18446744073709551615}", bt::codec_errc::wrong_type, "body.dummy_input",
       "integer out of range"},
      {"{\"dummy_input\": 1e19}", bt::codec_errc::wrong_type, "body.dummy_input",
       "integer out of range"},
      {"{\"dummy_input\": 1, \"dummy_output\": [1]}", bt::codec_errc::wrong_type,
       "body.dummy_output", "expected an integer, got array"},
      {"{\"dummy_input\": 1, \"timeout\": \"soon\"}", bt::codec_errc::invalid_float, "body.timeout",
       "not a Python float() literal: 'soon'"},
      {"{\"dummy_input\": 1, \"timeout\": [12]}", bt::codec_errc::wrong_type, "body.timeout",
       "expected a number, got array"},
      {"{\"dummy_input\": 1, \"total_size\": 1.5}", bt::codec_errc::invalid_integer,
       "body.total_size", "not an integral number"},
      {"{\"dummy_input\": 1, \"header_size\": false}", bt::codec_errc::wrong_type,
       "body.header_size", "expected an integer, got boolean"},
      {"{\"dummy_input\": 1, \"dendrite\": []}", bt::codec_errc::wrong_type, "body.dendrite",
       "expected an object, got array"},
      {"{\"dummy_input\": 1, \"dendrite\": {\"nonce\": \"x1\"}}", bt::codec_errc::invalid_integer,
       "body.dendrite.nonce", "not a Python int() literal: 'x1'"},
      {"{\"dummy_input\": 1, \"dendrite\": {\"nonce\": 9223372036854775808}}",
       bt::codec_errc::invalid_integer, "body.dendrite.nonce", "integer out of range"},
      {"{\"dummy_input\": 1, \"axon\": {\"hotkey\": 5}}", bt::codec_errc::wrong_type,
       "body.axon.hotkey", "expected a string, got integer"},
      {"{\"dummy_input\": 1, \"axon\": {\"process_time\": \"fast\"}}",
       bt::codec_errc::invalid_float, "body.axon.process_time",
       "not a Python float() literal: 'fast'"},
      {"{\"dummy_input\": 1, \"computed_body_hash\": 0}", bt::codec_errc::wrong_type,
       "body.computed_body_hash", "expected a string, got integer"},
  };
  for (const auto& c : cases) {
    INFO(c.body.substr(0, 80));
    bt::examples::dummy d;
    const auto err = bt::from_json_body(c.body, d);
    CHECK(err.code == bt::make_error_code(c.code));
    CHECK(err.what == c.what);
    if (!c.detail.empty() && c.detail.back() == '*')
      CHECK_FALSE(err.detail.empty());
    else
      CHECK(err.detail == c.detail);
  }
}

TEST_CASE("typed containers report the failing element", "[json_body][errors]") {
  rich r;
  auto err = bt::from_json_body(R"({"count": 1, "scores": [1, "x"]})", r);
  CHECK(err.code == bt::make_error_code(bt::codec_errc::wrong_type));
  CHECK(err.what == "body.scores");
  CHECK(err.detail == "[1]: expected a number, got string");
  err = bt::from_json_body(R"({"count": 1, "grid": [[1], [2, 3.5]]})", r);
  CHECK(err.what == "body.grid");
  CHECK(err.detail == "[1]: [1]: expected an integer, got a non-integral number");
  err = bt::from_json_body(R"({"count": 1, "where": {"x": "no"}})", r);
  CHECK(err.code == bt::make_error_code(bt::codec_errc::wrong_type));
  CHECK(err.what == "body.where");
  CHECK_FALSE(err.detail.empty());
  // Integral floats are accepted for int fields, as pydantic's lax mode does.
  REQUIRE_FALSE(bt::from_json_body(R"({"count": 3.0, "ratio": 2})", r));
  CHECK(r.count == 3);
  CHECK(r.ratio == 2.0);
}

TEST_CASE("parse_json: depth bound is configurable, big integers are exact", "[json_body]") {
  bt::json j;
  REQUIRE_FALSE(bt::parse_json("[[[1]]]", j, {.max_depth = 3}));
  const auto err = bt::parse_json("[[[[1]]]]", j, {.max_depth = 3});
  CHECK(err.code == bt::make_error_code(bt::codec_errc::nesting_too_deep));
  CHECK(err.what == "json");
  REQUIRE_FALSE(
      bt::parse_json("[18446744073709551615, -9223372036854775808, 1718000000123456789]", j));
  CHECK(j[0].get<std::uint64_t>() == 18446744073709551615u);
  CHECK(j[1].get<std::int64_t>() == std::numeric_limits<std::int64_t>::min());
  CHECK(j[2].get<std::int64_t>() == 1718000000123456789);
  CHECK(bt::parse_json("18446744073709551616", j).code ==
        bt::make_error_code(bt::codec_errc::invalid_json));
  // Key order is kept; large objects still detect duplicates.
  std::string big = "{";
  for (int i = 0; i < 40; ++i) big += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ", ";
  REQUIRE_FALSE(bt::parse_json(big + "\"z\": 0}", j));
  CHECK(j.begin().key() == "k0");
  CHECK(bt::parse_json(big + "\"k39\": 0}", j).detail == "duplicate key 'k39'");
}

TEST_CASE("to_json_value mirrors the body", "[json_body]") {
  bt::examples::dummy d;
  d.dummy_input = 2;
  const auto j = bt::to_json_value(bt::descriptor_of<bt::examples::dummy>(), d);
  CHECK(j.at("name") == "Dummy");
  CHECK(j.at("dummy_input") == 2);
  CHECK(j.at("dummy_output").is_null());
  CHECK(j.at("dendrite").size() == 10);
  bt::json parsed;
  REQUIRE_FALSE(bt::parse_json(bt::to_json_body(d), parsed));
  CHECK(parsed == j);
}

TEST_CASE("parse_json agrees with nlohmann on valid documents", "[json_body]") {
  const char* docs[] = {
      "{}",
      "[]",
      "0",
      "-0",
      "1",
      "-1",
      "1.5",
      "-0.0",
      "1e5",
      "1E-5",
      "2.5e+3",
      "123456789.123",
      "0.30000000000000004",
      "5e-324",
      "1.7976931348623157e308",
      "9223372036854775807",
      "-9223372036854775808",
      "18446744073709551615",
      "true",
      "false",
      "null",
      "\"\"",
      "\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"",
      "\"\\u00e9\\u200b\\ud83d\\ude80\\u0000\"",
      "\"h\xc3\xa9 \xf0\x9f\x9a\x80\"",
      " \t\r\n{ \"a\" : [ 1 , 2.0 , { \"b\" : null } ] , \"c\" : \"d\" } \n",
      "[[[[[[[[[[1]]]]]]]]]]",
      "{\"z\": 1, \"a\": 2, \"m\": {\"y\": [true, false]}}",
  };
  for (const char* d : docs) {
    INFO(d);
    bt::json ours;
    REQUIRE_FALSE(bt::parse_json(d, ours));
    const auto theirs = bt::json::parse(d);
    CHECK(ours == theirs);
    CHECK(ours.dump() == theirs.dump());  // same types and key order too
  }
  // Underflow is 0.0, as Python's json.loads gives.
  bt::json j;
  REQUIRE_FALSE(bt::parse_json("[1e-400, -1e-400]", j));
  CHECK(j[0].get<double>() == 0.0);
  CHECK(std::signbit(j[1].get<double>()));
}

TEST_CASE("parse_json refuses what is not strict JSON", "[json_body][errors]") {
  const char* bad[] = {
      "",
      " ",
      "{",
      "}",
      "[1,]",
      "{\"a\":1,}",
      "{\"a\" 1}",
      "{a: 1}",
      "'a'",
      "01",
      "-",
      "1.",
      ".5",
      "1e",
      "1e+",
      "+1",
      "0x10",
      "NaN",
      "-Infinity",
      "tru",
      "nul",
      "[1 2]",
      "\"abc",
      "\"a\nb\"",
      "\"\\x41\"",
      "\"\\u12\"",
      "\"\\ud800\"",
      "\"\\udc00\"",
      "\"\\ud800\\u0041\"",
      "\"\xc3\"",
      "\"\xed\xa0\x80\"",
      "\"\xf5\x80\x80\x80\"",
      "1e400",
      "-1e400",
      "[] []",
      "{} x",
      "/* c */ {}",
  };
  for (const char* b : bad) {
    INFO(b);
    bt::json j = 42;
    const auto err = bt::parse_json(b, j);
    CHECK(err.code == bt::make_error_code(bt::codec_errc::invalid_json));
    CHECK(err.what == "json");
    CHECK_FALSE(err.detail.empty());
    CHECK(j == 42);  // untouched on failure
  }
}

TEST_CASE("body reading: ignored keys are validated, bounded and never built",
          "[json_body][errors]") {
  bt::examples::dummy d;
  // A huge unknown value is skipped; one with a big integer or bad syntax still fails.
  std::string deep =
      "{\"dummy_input\": 1, \"other\": " + std::string(64, '[') + std::string(64, ']') + "}";
  CHECK(bt::from_json_body(deep, d).code == bt::make_error_code(bt::codec_errc::nesting_too_deep));
  CHECK_FALSE(bt::from_json_body("{\"dummy_input\": 1, \"other\": [[[{\"x\": \"\\u00e9\"}]]]}", d));
  CHECK(bt::from_json_body("{\"dummy_input\": 1, \"other\": [123456789012345678901234567890]}", d)
            .detail == "integer literal beyond 64 bits: '123456789012345678901234567890'");
  CHECK(bt::from_json_body("{\"dummy_input\": 1, \"name\": [}", d).code ==
        bt::make_error_code(bt::codec_errc::invalid_json));
  // A type error before a syntax error: the syntax error is reported (the body is not JSON).
  const auto err = bt::from_json_body("{\"dummy_input\": \"x\", \"other\": [}", d);
  CHECK(err.code == bt::make_error_code(bt::codec_errc::invalid_json));
  // Duplicate keys inside a TerminalInfo block and at the top level.
  CHECK(
      bt::from_json_body("{\"dummy_input\": 1, \"axon\": {\"port\": 1, \"port\": 2}}", d).detail ==
      "duplicate key 'port'");
  CHECK(bt::from_json_body("{\"dummy_input\": 1, \"name\": \"a\", \"name\": \"b\"}", d).detail ==
        "duplicate key 'name'");
  // Escaped keys are decoded before matching.
  REQUIRE_FALSE(bt::from_json_body("{\"dummy_\\u0069nput\": 7}", d));
  CHECK(d.dummy_input == 7);
}

namespace {

/// A synapse with a dict-typed field, as `weights: dict[str, int]` in Python.
struct weighted : bt::synapse {
  std::map<std::string, std::int64_t> weights;
  bt::json extra;
  static bt::synapse_schema<weighted> schema() {
    return {
        .name = "Weighted",
        .fields = {bt::field<&weighted::weights>("weights"), bt::field<&weighted::extra>("extra")},
        .hash_fields = {"weights"}};
  }
};

}  // namespace

TEST_CASE("body reading: duplicate keys are refused at every depth (D22)", "[json_body][errors]") {
  // Two readers of one body (the two sides of a hash check, or a proxy and a handler) may keep
  // either value of a repeated key: whatever the depth, such a body has no single meaning.
  struct dup_case {
    std::string body;
    std::string key;
  };
  std::vector<dup_case> cases = {
      // A declared dict-typed field and a declared bt::json field.
      {R"({"weights": {"a": 1, "b": 2, "a": 3}})", "a"},
      {R"({"extra": {"x": [1, {"y": 1, "y": 2}]}})", "y"},
      // Inside the TerminalInfo blocks: an ignored key's nested object.
      {R"({"dendrite": {"hotkey": null, "meta": {"k": 1, "k": 2}}})", "k"},
      {R"({"axon": {"extra": [{"p": 0, "q": 1, "p": 2}]}})", "p"},
      // Inside undeclared (skipped) fields, and in "name", which is skipped too.
      {R"({"other": {"a": 1, "a": 2}})", "a"},
      {R"({"name": {"n": 1, "n": 1}})", "n"},
      // Deep nesting, in a skipped value.
      {R"({"other": [[[{"l1": {"l2": [{"l3": {"z": 1, "z": 2}}]}}]]]})", "z"},
      // A key spelled with an escape is the same key.
      {R"({"other": {"a": 1, "\u0061": 2}})", "a"},
      // A big object (past the small linear set) repeating its first key last.
      {[] {
         std::string b = R"({"other": {)";
         for (int i = 0; i < 40; ++i)
           b += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ", ";
         return b + R"("k0": 0}})";
       }(),
       "k0"},
  };
  // Many ignored keys at the top level and in a TerminalInfo block, repeating the first last.
  std::string many_top = "{", many_terminal = R"({"axon": {)";
  for (int i = 0; i < 40; ++i) {
    many_top += "\"u" + std::to_string(i) + "\": 0, ";
    many_terminal += "\"u" + std::to_string(i) + "\": 0, ";
  }
  cases.push_back({many_top + R"("u0": 1})", "u0"});
  cases.push_back({many_terminal + R"("u0": 1}})", "u0"});
  for (const auto& c : cases) {
    INFO(c.body.substr(0, 120));
    weighted w;
    const auto err = bt::from_json_body(c.body, w);
    CHECK(err.code == bt::make_error_code(bt::codec_errc::invalid_json));
    CHECK(err.what == "body");
    CHECK(err.detail == "duplicate key '" + c.key + "'");
    // The DOM reader (parse_json) refuses the same bodies.
    bt::json j;
    CHECK(bt::parse_json(c.body, j).detail == "duplicate key '" + c.key + "'");
  }
  // A duplicate found after a type error is still reported: the body is not one JSON document.
  weighted w;
  CHECK(bt::from_json_body(R"({"weights": 5, "other": {"a": 1, "a": 2}})", w).detail ==
        "duplicate key 'a'");

  // Not duplicates: the same key in sibling objects, or at different depths.
  const char* fine[] = {
      R"({"other": [{"a": 1}, {"a": 2}], "weights": {"a": 1}})",
      R"({"other": {"a": {"a": {"a": 1}}}, "dendrite": {"m": {"hotkey": 1}, "hotkey": null}})",
  };
  for (const char* b : fine) {
    INFO(b);
    weighted ok;
    CHECK_FALSE(bt::from_json_body(b, ok));
  }
}

TEST_CASE("read_json_body names the base field of each error", "[json_body][errors]") {
  struct expectation {
    const char* body;
    bt::codec_errc code;
    const char* what;
  };
  using bt::codec_errc;
  const expectation cases[] = {
      {"{}", codec_errc::missing_field, "body.dummy_input"},
      {"{\"dummy_input\": \"1\"}", codec_errc::wrong_type, "body.dummy_input"},
      {"{\"dummy_input\": 1.5}", codec_errc::wrong_type, "body.dummy_input"},
      {"{\"dummy_input\": 1, \"timeout\": \"soon\"}", codec_errc::invalid_float, "body.timeout"},
      {"{\"dummy_input\": 1, \"total_size\": 1.5}", codec_errc::invalid_integer, "body.total_size"},
      {"{\"dummy_input\": 1, \"header_size\": []}", codec_errc::wrong_type, "body.header_size"},
      {"{\"dummy_input\": 1, \"dendrite\": []}", codec_errc::wrong_type, "body.dendrite"},
      {"{\"dummy_input\": 1, \"dendrite\": {\"nonce\": \"x1\"}}", codec_errc::invalid_integer,
       "body.dendrite.nonce"},
      {"{\"dummy_input\": 1, \"axon\": {\"hotkey\": 5}}", codec_errc::wrong_type,
       "body.axon.hotkey"},
      {"{\"dummy_input\": 1, \"axon\": {\"process_time\": true}}", codec_errc::wrong_type,
       "body.axon.process_time"},
      {"{\"dummy_input\": 1, \"computed_body_hash\": 0}", codec_errc::wrong_type,
       "body.computed_body_hash"},
      {"[1]", codec_errc::invalid_body, "body"},
  };
  for (const auto& c : cases) {
    INFO(c.body);
    bt::examples::dummy a;
    const auto err = bt::from_json_body(c.body, a);
    CHECK(err.code == bt::make_error_code(c.code));
    CHECK(err.what == c.what);
    CHECK_FALSE(err.detail.empty());
  }
  // Every TerminalInfo cast of PROTOCOL 1.1 applies, and null resets a block.
  bt::examples::dummy ok;
  ok.axon.ip = "1.2.3.4";
  REQUIRE_FALSE(bt::from_json_body(
      R"({"dummy_input": 1, "axon": null, "dendrite": {"port": "8091", "process_time": "0.5"}})",
      ok));
  CHECK(ok.axon == bt::terminal_info{});
  CHECK(ok.dendrite.port == 8091);
  CHECK(ok.dendrite.process_time == 0.5);
}

TEST_CASE("append_json_string writes one JSON string as the body writer does", "[json_body]") {
  const auto compact = [](std::string_view s) {
    std::string out = "x";  // appends: what was there stays
    bt::append_json_string(out, s);
    return out.substr(1);
  };
  // Valid text: exactly what nlohmann's compact dump writes (json.dumps with ensure_ascii=False).
  for (const std::string& text :
       {std::string(), std::string("plain"), std::string("q\"b\\s/"), std::string("\n\r\t\b\f"),
        std::string("\x01\x1f\x7f", 3), std::string("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80")}) {
    INFO(text);
    CHECK(compact(text) == bt::json(text).dump());
  }
  // Under python_dumps, everything non-ASCII is escaped (surrogate pairs above U+FFFF).
  std::string ascii;
  bt::append_json_string(ascii, "\xc3\xa9\xf0\x9f\x98\x80", bt::json_style::python_dumps);
  CHECK(ascii == "\"\\u00e9\\ud83d\\ude00\"");
  // Bytes that are not UTF-8 become U+FFFD instead of failing.
  CHECK(compact("a\xff"
                "b") ==
        "\"a\xef\xbf\xbd"
        "b\"");
  CHECK(compact("\xc3(") == "\"\xef\xbf\xbd(\"");
}

TEST_CASE("answer_status_only: every value checked as a full read, only the status kept",
          "[json_body][errors]") {
  // Each body is read twice into fresh objects, in full and answer_status_only: the two must
  // agree on the error (code, field, detail), and on success on what the mode keeps.
  const std::string ok_blocks =
      R"("dendrite": {"ip": "10.0.0.1", "port": 8091, "version": 7, "nonce": 5, "uuid": "u-1",)"
      R"( "hotkey": "5Grw", "signature": "0xab", "status_code": 200, "status_message": "ok",)"
      R"( "process_time": 0.5}, "axon": {"ip": "127.0.0.1", "port": "9", "hotkey": "5Fhk",)"
      R"( "uuid": "\u00e9\ud83d\ude00", "status_code": "201", "status_message": "Caf\u00e9",)"
      R"( "process_time": "0.25", "signature": null})";
  const std::vector<std::string> bodies = {
      R"({"dummy_input": 1, "dummy_output": 2, )" + ok_blocks +
          R"(, "computed_body_hash": "a3f", "timeout": 12.0, "name": "x"})",
      R"({"dummy_input": 1, "computed_body_hash": null, "dendrite": null, "axon": {}})",
      R"({"dummy_input": 1, "axon": {"status_code": 200}})",
      // discarded text members with a value of another type, and in the kept block
      R"({"dummy_input": 1, "dendrite": {"hotkey": 5}})",
      R"({"dummy_input": 1, "dendrite": {"uuid": [1, "a"]}})",
      R"({"dummy_input": 1, "dendrite": {"signature": {"a": 1}}})",
      R"({"dummy_input": 1, "dendrite": {"ip": true}})",
      R"({"dummy_input": 1, "axon": {"hotkey": 5}})",
      R"({"dummy_input": 1, "axon": {"status_message": 5}})",
      R"({"dummy_input": 1, "axon": {"ip": 1.5, "status_code": 200}})",
      R"({"dummy_input": 1, "computed_body_hash": 0})",
      R"({"dummy_input": 1, "computed_body_hash": []})",
      // discarded numeric members and nulls: numbers beyond double, bad literals
      R"({"dummy_input": 1, "timeout": -0.5e-3, "dendrite": {"process_time": 12}})",
      R"({"dummy_input": 1, "timeout": 1e999})",
      R"({"dummy_input": 1, "dendrite": {"process_time": -1e400}})",
      R"({"dummy_input": 1, "dendrite": {"process_time": 01}})",
      R"({"dummy_input": 1, "dendrite": {"process_time": -}})",
      R"({"dummy_input": 1, "timeout": nan})",
      R"({"dummy_input": 1, "dendrite": {"nonce": nul}})",
      R"({"dummy_input": 1, "total_size": null, "dendrite": {"nonce": null, "ip": null}})",
      R"({"dummy_input": 1, "dendrite": {"process_time": "0.5", "port": 1.0}})",
      R"({"dummy_input": 1, "dendrite": {"process_time": "soon"}})",
      R"({"dummy_input": 1, "dendrite": {"process_time": true}})",
      // discarded integers: the widest that always fit, the edges of int64, fractions, exponents
      R"({"dummy_input": 1, "total_size": 999999999999999999, "header_size": -999999999999999999})",
      R"({"dummy_input": 1, "dendrite": {"nonce": 9223372036854775807, "port": -0}})",
      R"({"dummy_input": 1, "dendrite": {"nonce": -9223372036854775808}})",
      R"({"dummy_input": 1, "dendrite": {"nonce": 9223372036854775808}})",
      R"({"dummy_input": 1, "dendrite": {"nonce": -9223372036854775809}})",
      R"({"dummy_input": 1, "dendrite": {"nonce": 18446744073709551616}})",
      R"({"dummy_input": 1, "axon": {"port": 80.0, "version": 1e3}})",
      R"({"dummy_input": 1, "axon": {"port": 80.5}})",
      R"({"dummy_input": 1, "axon": {"port": 1E-1}})",
      R"({"dummy_input": 1, "axon": {"port": 00}})",
      R"({"dummy_input": 1, "axon": {"port": -}})",
      R"({"dummy_input": 1, "axon": {"port": 12)",
      R"({"dummy_input": 1, "header_size": 5,})",
      R"({"dummy_input": 1, "dendrite": {"nonce": "x1"}})",
      R"({"dummy_input": 1, "dendrite": {"port": "8091", "version": 1.5}})",
      R"({"dummy_input": 1, "axon": {"nonce": 9223372036854775808}})",
      R"({"dummy_input": 1, "timeout": "soon", "dendrite": {"hotkey": 5}})",
      // invalid text in a discarded string: bad UTF-8, a lone surrogate, a raw control character
      "{\"dummy_input\": 1, \"dendrite\": {\"hotkey\": \"\xff\"}}",
      "{\"dummy_input\": 1, \"axon\": {\"uuid\": \"\xc3\"}}",
      R"({"dummy_input": 1, "computed_body_hash": "\udc00"})",
      R"({"dummy_input": 1, "dendrite": {"signature": "\ud800x"}})",
      "{\"dummy_input\": 1, \"axon\": {\"ip\": \"a\x01\"}}",
      R"({"dummy_input": 1, "dendrite": {"uuid": "\q"}})",
      R"({"dummy_input": 1, "dendrite": {"uuid": "open})",
      // the first error wins, a later syntax error overrides it, duplicates are refused
      R"({"dummy_input": 1, "dendrite": {"hotkey": 5}, "axon": {"hotkey": 6}})",
      R"({"dummy_input": 1, "dendrite": {"hotkey": 5}, "axon": {"hotkey": "a",}})",
      R"({"dummy_input": 1, "dendrite": {"hotkey": "a", "hotkey": "b"}})",
      R"({"dummy_input": 1, "computed_body_hash": "a", "computed_body_hash": "b"})",
      R"({"dummy_input": 1, "dendrite": {"hotkey": "a"}} trailing)",
      R"({"dummy_output": 3, "dendrite": {"hotkey": "a"}})",
      R"({"dummy_input": "1", "dendrite": {"hotkey": 5}})",
  };
  for (const auto& body : bodies) {
    INFO(body);
    bt::examples::dummy full;
    bt::examples::dummy status;
    const auto full_err = bt::from_json_body(body, full);
    const auto status_err = bt::from_json_body(body, status, {.answer_status_only = true});
    CHECK(status_err.code == full_err.code);
    CHECK(status_err.what == full_err.what);
    CHECK(status_err.detail == full_err.detail);
    if (full_err) continue;
    CHECK(status.dummy_input == full.dummy_input);
    CHECK(status.dummy_output == full.dummy_output);
    CHECK(status.axon.status_code == full.axon.status_code);
    CHECK(status.axon.status_message == full.axon.status_message);
    CHECK(status.axon.process_time == full.axon.process_time);
  }
  // The first body is valid: the mode kept the axon's status, read as Python casts it.
  bt::examples::dummy kept;
  REQUIRE_FALSE(bt::from_json_body(bodies[0], kept, {.answer_status_only = true}));
  CHECK(kept.axon.status_code == 201);
  CHECK(kept.axon.status_message == "Caf\xc3\xa9");
  CHECK(kept.axon.process_time == 0.25);
  CHECK(kept.dummy_output == 2);
}
