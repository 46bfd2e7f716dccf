#include <bt/python_str.hpp>

#include <bt/sha3.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>

namespace {

std::string float_repr(double v) {
  std::string out;
  bt::append_python_float(v, out);
  return out;
}

std::string repr(std::string_view s) {
  std::string out;
  bt::append_python_repr(s, out);
  return out;
}

bt::json parse(const char* text) {
  return bt::json::parse(text);
}

}  // namespace

TEST_CASE("float repr follows CPython's shortest digits and thresholds", "[python_str]") {
  // PROTOCOL 3.3.2 examples and the thresholds around them.
  CHECK(float_repr(1.0) == "1.0");
  CHECK(float_repr(0.1) == "0.1");
  CHECK(float_repr(12.0) == "12.0");
  CHECK(float_repr(12.5) == "12.5");
  CHECK(float_repr(100.0) == "100.0");
  CHECK(float_repr(1e15) == "1000000000000000.0");
  CHECK(float_repr(9999999999999998.0) == "9999999999999998.0");
  CHECK(float_repr(1e16) == "1e+16");
  CHECK(float_repr(1.5e16) == "1.5e+16");
  CHECK(float_repr(123456789.123) == "123456789.123");
  CHECK(float_repr(0.0001) == "0.0001");
  CHECK(float_repr(0.00015) == "0.00015");
  CHECK(float_repr(1e-5) == "1e-05");
  CHECK(float_repr(2.5e-7) == "2.5e-07");
  CHECK(float_repr(1.0 / 3.0) == "0.3333333333333333");
  CHECK(float_repr(0.1 + 0.2) == "0.30000000000000004");
  CHECK(float_repr(-0.0) == "-0.0");
  CHECK(float_repr(0.0) == "0.0");
  CHECK(float_repr(-2.5) == "-2.5");
  CHECK(float_repr(1e22) == "1e+22");
  CHECK(float_repr(1e100) == "1e+100");
  CHECK(float_repr(5e-324) == "5e-324");
  CHECK(float_repr(1.7976931348623157e308) == "1.7976931348623157e+308");
  CHECK(float_repr(-1.7976931348623157e308) == "-1.7976931348623157e+308");
  CHECK(float_repr(0.012345678) == "0.012345678");
  CHECK(float_repr(0.0012340545654296875) == "0.0012340545654296875");
  CHECK(float_repr(123456789012345678.0) == "1.2345678901234568e+17");
  CHECK(float_repr(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(float_repr(-std::numeric_limits<double>::infinity()) == "-inf");
  CHECK(float_repr(std::nan("")) == "nan");
}

TEST_CASE("string repr chooses quotes and escapes like CPython", "[python_str]") {
  CHECK(repr("abc") == "'abc'");
  CHECK(repr("") == "''");
  CHECK(repr("it's") == "\"it's\"");
  CHECK(repr("say \"hi\"") == "'say \"hi\"'");
  CHECK(repr("both ' and \"") == "'both \\' and \"'");
  CHECK(repr("line\nbreak") == "'line\\nbreak'");
  CHECK(repr("a\\b") == "'a\\\\b'");
  CHECK(repr("t\tz\rr") == "'t\\tz\\rr'");
  CHECK(repr(std::string_view("\0", 1)) == "'\\x00'");
  CHECK(repr("\x1f\x7f") == "'\\x1f\\x7f'");
  CHECK(repr("\xc3\xa9") == "'\xc3\xa9'");                                  // é printable
  CHECK(repr("\xe6\x97\xa5\xe6\x9c\xac") == "'\xe6\x97\xa5\xe6\x9c\xac'");  // 日本
  CHECK(repr("\xf0\x9f\x9a\x80") == "'\xf0\x9f\x9a\x80'");                  // 🚀
  CHECK(repr("\xc2\xa0") == "'\\xa0'");                                     // NO-BREAK SPACE (Zs)
  CHECK(repr("\xc2\xad") == "'\\xad'");                                     // SOFT HYPHEN (Cf)
  CHECK(repr("\xc2\x85") == "'\\x85'");                                     // NEL (Cc)
  CHECK(repr("\xe2\x80\x8b") == "'\\u200b'");                               // ZERO WIDTH SPACE (Cf)
  CHECK(repr("\xe2\x80\xa8") == "'\\u2028'");                               // LINE SEPARATOR (Zl)
  CHECK(repr("\xe2\x80\xa9") == "'\\u2029'");          // PARAGRAPH SEPARATOR (Zp)
  CHECK(repr("\xe3\x80\x80") == "'\\u3000'");          // IDEOGRAPHIC SPACE (Zs)
  CHECK(repr("\xee\x80\x80") == "'\\ue000'");          // private use (Co)
  CHECK(repr("\xf3\xa0\x80\x81") == "'\\U000e0001'");  // LANGUAGE TAG (Cf)
  CHECK(repr("\xf4\x8f\xbf\xbf") == "'\\U0010ffff'");  // noncharacter (Cn)
  CHECK(repr("\xcd\xb8") == "'\\u0378'");              // unassigned in Greek block (Cn)
  CHECK(repr(" ") == "' '");
}

TEST_CASE("malformed UTF-8 renders as U+FFFD in str and repr", "[python_str]") {
  CHECK(repr("a\xff"
             "b") ==
        "'a\xef\xbf\xbd"
        "b'");
  std::string out;
  bt::append_python_text("a\xc3", out);
  CHECK(out == "a\xef\xbf\xbd");
  out.clear();
  bt::append_python_text("ok \xc3\xa9", out);
  CHECK(out == "ok \xc3\xa9");
}

TEST_CASE("isprintable follows the CPython 3.11 Unicode 14.0 table", "[python_str]") {
  CHECK(std::string(bt::python_unicode_version) == "14.0.0");
  CHECK(bt::python_isprintable(U' '));
  CHECK(bt::python_isprintable(U'a'));
  CHECK_FALSE(bt::python_isprintable(U'\t'));
  CHECK_FALSE(bt::python_isprintable(0x7F));
  CHECK_FALSE(bt::python_isprintable(0xA0));
  CHECK(bt::python_isprintable(0xA1));
  CHECK(bt::python_isprintable(0xE9));
  CHECK_FALSE(bt::python_isprintable(0xD800));   // surrogate (Cs)
  CHECK_FALSE(bt::python_isprintable(0xFEFF));   // BOM (Cf)
  CHECK(bt::python_isprintable(0x1F680));        // 🚀
  CHECK(bt::python_isprintable(0x1FAF6));        // HEART HANDS, added in Unicode 14.0
  CHECK_FALSE(bt::python_isprintable(0x1FAF7));  // assigned only in Unicode 15.0: Cn in 14.0
  CHECK_FALSE(bt::python_isprintable(0x10FFFF));
}

TEST_CASE("python_str of JSON values matches PROTOCOL 3.4", "[python_str]") {
  struct example {
    const char* json;
    const char* str;
    const char* sha3;
  };
  const example examples[] = {
      {"1", "1", "67b176705b46206614219f47a05aee7ae6a3edbe850bbbe214c536b989aea4d2"},
      {"-7", "-7", "59f2f9e4430a3c6c96d893ee698fe1f9a217389c1d4764b4f492d5503f12b766"},
      {"true", "True", "62b5b5e01d892e831aa186068a8d83b662e8b2928b10aa5ce2aedb3edc8e7673"},
      {"null", "None", "61ae1749811579a5799852da2541dd16a7ffb1744c6248718a123570fffd0a63"},
      {"1.0", "1.0", "07099e0ea0e7912f273216a9cd97b3bb1d5f21c453c7581799645fd6130bdaad"},
      {"0.1", "0.1", "75bd59c8426679f3ef7b3a37184ee08e2e5ecee840e330acf6782d77cf2a2d1b"},
      {"12.0", "12.0", "6687663a6a82224bbfda0bcf45c53b0b5af080ce9c25c46fb5567372d346021f"},
      {"1e16", "1e+16", "06fd81586da3d0ce789b50f959f4e57e5c3fd89d3f65e8187f73895040ce5909"},
      {"1e-5", "1e-05", "e276dbc73756a2417e9d716484999961a9ea24a1b6dc00509b91e891548b3408"},
      {"\"abc\"", "abc", "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532"},
      {"\"\"", "", "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a"},
      {"[1, 2, 3]", "[1, 2, 3]",
       "059186990f24b4e3cf51bc89e288c8d6e97e8e44cf1de305cbe1f50ee753b50f"},
      {"[]", "[]", "ca4510738395af1429224dd785675309c344b2b549632e20275c69b15ed1d210"},
      {"[1.0, 2.5]", "[1.0, 2.5]",
       "51f9dce80406d09631c245b9069d05d40f8c2fc336f96b3f8780e7012e79a878"},
      {"[\"a\", \"b\"]", "['a', 'b']",
       "7c4ddd265900875dc76972886c942ffdc85a1a3e84716aef29a2941a401dd47b"},
      {"[\"it's\"]", "[\"it's\"]",
       "cb9d2dfcc2d1a0d202a9db3c6399d80725c91c02001265ab75a484311b632032"},
      {"[\"say \\\"hi\\\"\"]", "['say \"hi\"']",
       "f992607b111ba1312d89d594fcc6acdc022ce1b77545a5e362f3621d004ca818"},
      {"[\"both ' and \\\"\"]", "['both \\' and \"']",
       "bcbd560289388ed2cc1ce2bafad1522a6976426ebe9287e9466a8941b68309bc"},
      {"[\"line\\nbreak\"]", "['line\\nbreak']",
       "c65df4e0f3a5b22ed813b14eb3577654124214c592bf58b9cf2a92598c01bc81"},
      {"[\"\\u0000\"]", "['\\x00']",
       "407caf711678b3913acc0ebb256db6dccfaa22bd0fb5d2dc386d851536dbbdd5"},
      {"[\"\\u00e9\"]", "['\xc3\xa9']",
       "0bdf0e2fe860243b8a62b685554ab9fc253a5de2656ed5aff36b72173755ec8c"},
      {"[\"\\u200b\"]", "['\\u200b']",
       "dadee459c3951cd37af770f94ebf1857e7ed0c5b9a5aaa051730414154e0f271"},
      {"[\"\\\\\"]", "['\\\\']",
       "8fa1ba9e5957b481cd51f986f3eb42d708a7f1920fe4990b5fca141bc757c0e3"},
      {"[null, true, 1.5]", "[None, True, 1.5]",
       "e71c80508dd93ae3b561c03320e088aa8fabba21a209cb2f3a8387e6db867fae"},
      {"[[1, 2], [3]]", "[[1, 2], [3]]",
       "26b8c571717436321fb8fc0d0285a1b23ac36c417744e446b4f973f8b739acff"},
      {"{\"a\": 1, \"b\": [1.0]}", "{'a': 1, 'b': [1.0]}",
       "b42658df6029a2d7b455be290bdbbe9228862e77bee396f779f1adef00f59a71"},
      {"{\"k\": null, \"n\": {\"x\": \"y\"}}", "{'k': None, 'n': {'x': 'y'}}",
       "7b39127b4df8c59f77ca877f48456e9299a4fd9b8b813cadaac07945318d6331"},
      {"[0.1, 1e-05, 1e16]", "[0.1, 1e-05, 1e+16]",
       "ec558bd6db3b60d9adc12109b0b71dd46dfd3301ee4d192ed198dcfd1077898c"},
  };
  for (const auto& e : examples) {
    INFO(e.json);
    const auto s = bt::python_str(parse(e.json));
    CHECK(s == e.str);
    CHECK(bt::sha3_256_hex(s) == e.sha3);
  }
  // nan cannot be written in JSON; PROTOCOL 3.4 gives its hash too.
  CHECK(bt::sha3_256_hex(bt::python_str(bt::json(std::nan("")))) ==
        "83dd07c7d0758167424ca23bce0c28c1a350f0c8fd40afa8d93f532b58b7167f");
}

TEST_CASE("repr of values quotes top-level strings, big unsigned ints stay exact", "[python_str]") {
  std::string out;
  bt::append_python_value_repr(bt::json("x'y"), out);
  CHECK(out == "\"x'y\"");
  CHECK(bt::python_str(bt::json(std::uint64_t{18446744073709551615u})) == "18446744073709551615");
  CHECK(bt::python_str(bt::json(std::int64_t{-9223372036854775807 - 1})) == "-9223372036854775808");
  CHECK(bt::python_str(parse("{\"1\": 2, \"10\": \"x\", \"-3\": null}")) ==
        "{'1': 2, '10': 'x', '-3': None}");
  CHECK(bt::python_str(parse("{}")) == "{}");
}
