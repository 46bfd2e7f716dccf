#include <bt/body_hash.hpp>

#include <bt/dynamic_synapse.hpp>
#include <bt/json_body.hpp>
#include <bt/python_str.hpp>
#include <bt/sha3.hpp>

#include <catch2/catch.hpp>
#include <support/vectors.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace {

// PROTOCOL 3.2: HashedSynapse of bittensor's tests/unit_tests/test_synapse.py.
struct hashed : bt::synapse {
  std::int64_t a = 0;
  std::int64_t b = 0;
  std::optional<std::int64_t> c;
  std::optional<std::vector<std::string>> d;

  static bt::synapse_schema<hashed> schema() {
    return {.name = "HashedSynapse",
            .fields = {bt::field<&hashed::a>("a", bt::required),
                       bt::field<&hashed::b>("b", bt::required), bt::field<&hashed::c>("c"),
                       bt::field<&hashed::d>("d")},
            .hash_fields = {"a", "b", "d"}};
  }
};

// Typed values as pydantic holds them after validation (PROTOCOL 3.5).
struct typed_values : bt::synapse {
  double x = 0;
  std::vector<double> scores;
  std::vector<std::int64_t> ids;
  std::optional<double> maybe;
  bool flag = false;
  std::string text;

  static bt::synapse_schema<typed_values> schema() {
    return {
        .name = "TypedValues",
        .fields = {bt::field<&typed_values::x>("x"), bt::field<&typed_values::scores>("scores"),
                   bt::field<&typed_values::ids>("ids"), bt::field<&typed_values::maybe>("maybe"),
                   bt::field<&typed_values::flag>("flag"), bt::field<&typed_values::text>("text")},
        .hash_fields = {"x", "scores", "ids", "maybe", "flag", "text"}};
  }
};

std::string field_str(const bt::synapse_descriptor& d, const bt::synapse& s,
                      std::string_view name) {
  std::string out;
  const auto* f = d.find(name);
  REQUIRE(f != nullptr);
  f->ops->python_str(s, *f, out);
  return out;
}

}  // namespace

TEST_CASE("body_hash matches every case of body_hash.json (dynamic synapse)", "[body_hash]") {
  const auto v = bt::test::load_vectors("body_hash.json");
  REQUIRE(v.at("cases").size() >= 30);
  for (const auto& c : v.at("cases")) {
    INFO(c.at("description").get<std::string>());
    // Field names do not enter the hash; "timeout" (a base field) is renamed for the type.
    auto name_of = [](const bt::json& f) {
      auto n = f.at("name").get<std::string>();
      return n == "timeout" ? "the_" + n : n;
    };
    std::vector<bt::dynamic_field_spec> specs;
    std::vector<std::string> hash_fields;
    for (const auto& f : c.at("fields")) {
      specs.push_back({name_of(f), bt::field_kind::optional});
      hash_fields.push_back(name_of(f));
    }
    bt::error err;
    auto type = bt::make_dynamic_descriptor("Hashed", specs, hash_fields, err);
    REQUIRE_FALSE(err);
    bt::dynamic_synapse s(type);
    for (std::size_t i = 0; i < c.at("fields").size(); ++i) {
      const auto& f = c.at("fields")[i];
      bt::json value;
      REQUIRE_FALSE(bt::parse_json(f.at("json_value").get<std::string>(), value));
      s.values[i] = value;
      CHECK(field_str(*type, s, name_of(f)) == c.at("python_str")[i].get<std::string>());
      CHECK(bt::sha3_256_hex(c.at("python_str")[i].get<std::string>()) ==
            c.at("field_hashes_hex")[i].get<std::string>());
    }
    CHECK(bt::body_hash(s) == c.at("body_hash_hex").get<std::string>());
  }
}

TEST_CASE("body_hash of typed scalar cases of body_hash.json", "[body_hash]") {
  // The scalar cases again, through typed members: int, float, bool, str and None.
  const auto v = bt::test::load_vectors("body_hash.json");
  int checked = 0;
  for (const auto& c : v.at("cases")) {
    if (c.at("fields").size() != 1) continue;
    const auto& f = c.at("fields")[0];
    const auto type = f.at("python_type").get<std::string>();
    const auto value = bt::json::parse(f.at("json_value").get<std::string>());
    const auto expected = c.at("python_str")[0].get<std::string>();
    INFO(c.at("description").get<std::string>());
    std::string out;
    if (type == "int") {
      bt::detail::value_traits<std::int64_t>::str(value.get<std::int64_t>(), out);
    } else if (type == "float") {
      bt::detail::value_traits<double>::str(value.get<double>(), out);
    } else if (type == "bool") {
      bt::detail::value_traits<bool>::str(value.get<bool>(), out);
    } else if (type == "str") {
      bt::detail::value_traits<std::string>::str(value.get<std::string>(), out);
    } else if (type == "NoneType") {
      bt::detail::value_traits<std::optional<std::int64_t>>::str(std::nullopt, out);
    } else {
      continue;
    }
    CHECK(out == expected);
    ++checked;
  }
  CHECK(checked >= 18);
}

TEST_CASE("HashedSynapse body hash (bittensor test_synapse_body_hash)", "[body_hash]") {
  hashed s;
  s.a = 1;
  s.b = 2;
  s.d = std::vector<std::string>{"foobar"};
  CHECK(bt::body_hash(s) == "ae06397d08f30f75c91395c59f05c62ac3b62b88250eb78b109213258e6ced0c");
  // c is not hashed: changing it keeps the hash.
  s.c = 5;
  CHECK(bt::body_hash(s) == "ae06397d08f30f75c91395c59f05c62ac3b62b88250eb78b109213258e6ced0c");
  s.a = 2;
  CHECK(bt::body_hash(s) != "ae06397d08f30f75c91395c59f05c62ac3b62b88250eb78b109213258e6ced0c");
}

TEST_CASE(
    "body_hash_memo: the remembered hash while the hashed fields are unchanged, a fresh "
    "pass when one changed",
    "[body_hash]") {
  hashed s;
  s.a = 1;
  s.b = 2;
  s.d = std::vector<std::string>{"foobar"};
  const std::string expected = "ae06397d08f30f75c91395c59f05c62ac3b62b88250eb78b109213258e6ced0c";
  bt::body_hash_memo memo;
  std::uint64_t before = bt::detail::body_hash_passes();
  CHECK(memo.compute(bt::descriptor_of<hashed>(), s) == expected);
  CHECK(bt::detail::body_hash_passes() - before == 1);
  // Unchanged, and a change to the unhashed c: no pass, the same hash.
  before = bt::detail::body_hash_passes();
  CHECK(memo.current(bt::descriptor_of<hashed>(), s) == expected);
  s.c = 5;
  CHECK(memo.current(bt::descriptor_of<hashed>(), s) == expected);
  CHECK(bt::detail::body_hash_passes() - before == 0);
  // A hashed field changed (in the last hashed field, and to a value of another length): a fresh
  // pass whose hash is body_hash() of the object as it is now, remembered in turn.
  s.d->push_back("x");
  before = bt::detail::body_hash_passes();
  const std::string changed = memo.current(bt::descriptor_of<hashed>(), s);
  CHECK(bt::detail::body_hash_passes() - before == 1);
  CHECK(changed != expected);
  CHECK(changed == bt::body_hash(s));
  before = bt::detail::body_hash_passes();
  CHECK(memo.current(bt::descriptor_of<hashed>(), s) == changed);
  CHECK(bt::detail::body_hash_passes() - before == 0);
  // Back to the first values: a fresh pass again, which gives the first hash.
  s.d->pop_back();
  CHECK(memo.current(bt::descriptor_of<hashed>(), s) == expected);
  // A memo that never computed hashes (a request that was not checked by hash).
  bt::body_hash_memo fresh;
  before = bt::detail::body_hash_passes();
  CHECK(fresh.current(bt::descriptor_of<hashed>(), s) == expected);
  CHECK(bt::detail::body_hash_passes() - before == 1);
}

TEST_CASE("typed members render as the Python class holds them", "[body_hash]") {
  typed_values s;
  s.x = 1;
  s.scores = {1, 2, 0.5};
  s.ids = {1, -2};
  s.text = "it's";
  const auto& d = bt::descriptor_of<typed_values>();
  CHECK(field_str(d, s, "x") == "1.0");
  CHECK(field_str(d, s, "scores") == "[1.0, 2.0, 0.5]");
  CHECK(field_str(d, s, "ids") == "[1, -2]");
  CHECK(field_str(d, s, "maybe") == "None");
  CHECK(field_str(d, s, "flag") == "False");
  CHECK(field_str(d, s, "text") == "it's");  // top-level str is the text itself
  const std::string expected = [] {
    std::string cat;
    for (const char* part : {"1.0", "[1.0, 2.0, 0.5]", "[1, -2]", "None", "False", "it's"})
      cat += bt::sha3_256_hex(part);
    return bt::sha3_256_hex(cat);
  }();
  CHECK(bt::body_hash(s) == expected);
}

TEST_CASE("types without hash fields hash to SHA3-256 of the empty string", "[body_hash]") {
  const std::string empty = "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a";
  CHECK(bt::body_hash(bt::synapse{}) == empty);
  CHECK(bt::descriptor_of<bt::synapse>().constant_body_hash() == empty);
  CHECK(bt::descriptor_of<hashed>().constant_body_hash().empty());
}

TEST_CASE("Dummy(input=1) with input hashed, and its placeholder form (PROTOCOL 3.6)",
          "[body_hash]") {
  bt::error err;
  auto type = bt::make_dynamic_descriptor(
      "Dummy", {{"input", bt::required}, {"output", bt::field_kind::optional}}, {"input"}, err);
  REQUIRE_FALSE(err);
  bt::dynamic_synapse s(type);
  *s.get("input") = 1;
  CHECK(bt::body_hash(s) == "ed4bc853dce1a3f7afd74fd20a81219cd36d60f8b241fc33dcbe5ebc9381e2f9");
  *s.get("input") = 0;
  CHECK(bt::body_hash(s) == "a68efd02bf8190c171a54f9de439df1e213eecc103415619956235432088c17a");
}
