// Runs `bt-dendrite encode` (BT_DENDRITE_EXE) on every case of headers.json and on invalid
// descriptions; the tool is the conformance entry point, so its output must equal the vectors.
#include <bt/json_body.hpp>

#include <catch2/catch.hpp>
#include <support/vectors.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace {

struct run_result {
  int status = -1;
  std::string out;
};

/// Runs `bt-dendrite <args>` with `input` on stdin (through a temporary file).
run_result run_tool(const std::string& args, const std::string& input) {
  const std::string path =
      bt::test::binary_dir() + "/encode_cli_input." + std::to_string(::getpid()) + ".json";
  {
    std::ofstream f(path, std::ios::binary);
    f << input;
  }
  std::string cmd = "'";  // built with append: GCC 12 warns (-Wrestrict) on a long + chain
  cmd.append(BT_DENDRITE_EXE).append("' ").append(args).append(" < '").append(path).append("'");
  run_result r;
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int st = ::pclose(p);
  std::remove(path.c_str());
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

bt::json description_of(const bt::json& c) {
  const auto& body = c.at("json_body");
  bt::json fields = bt::json::object();
  std::size_t i = 0;
  for (auto it = body.begin(); it != body.end(); ++it, ++i)
    if (i >= 7) fields[it.key()] = it.value();  // after the 7 base fields
  return {{"name", body.at("name")},
          {"timeout", body.at("timeout")},
          {"fields", fields},
          {"required", c.at("required_fields")},
          {"required_hash_fields", c.at("hashed_fields_in_order")},
          {"dendrite", body.at("dendrite")},
          {"axon", body.at("axon")}};
}

}  // namespace

TEST_CASE("bt-dendrite encode reproduces every case of headers.json", "[encode_cli]") {
  const auto v = bt::test::load_vectors("headers.json");
  REQUIRE(v.at("cases").size() >= 9);
  for (const auto& c : v.at("cases")) {
    INFO(c.at("synapse_description").get<std::string>());
    const bool response = c.at("direction").get<std::string>() == "response";
    const auto r = run_tool(response ? "encode --compact" : "encode", description_of(c).dump());
    REQUIRE(r.status == 0);
    bt::json out;
    REQUIRE_FALSE(bt::parse_json(r.out, out));
    bt::json headers = bt::json::array();
    bool sizes = false;
    for (const auto& kv : out.at("headers")) {
      const auto name = kv.at(0).get<std::string>();
      if (name == "header_size" || name == "total_size") {
        sizes = true;
        continue;
      }
      headers.push_back(kv);
    }
    CHECK(sizes);
    CHECK(headers == c.at("header_items"));
    CHECK(out.at("body") == c.at("json_body_text"));
    CHECK(out.at("body_hash") == c.at("body_hash_hex"));
  }
}

TEST_CASE("bt-dendrite encode: invalid descriptions exit 2 with an error object", "[encode_cli]") {
  const std::pair<const char*, const char*> cases[] = {
      {"not json", "invalid JSON in json"},
      {"[]", "expected one JSON object"},
      {R"({"fields": {}})", "name: expected the synapse class name"},
      {R"({"name": "A", "fields": {"a": 1}, "required_hash_fields": ["b"]})",
       "invalid JSON in synapse.required_hash_fields: not a field of the type: 'b'"},
      {R"({"name": "A", "fields": {"a": 1}, "required": ["b"]})", "required: 'b' is not in fields"},
      {R"({"name": "A", "fields": {"timeout": 1}})",
       "invalid JSON in synapse.fields.timeout: the name of a base Synapse field"},
      {R"({"name": "A", "timeout": "soon"})", "timeout: expected a number of seconds or null"},
      {R"({"name": "A", "dendrite": {"nonce": "x"}})",
       "invalid integer in dendrite.nonce: not a Python int() literal: 'x'"},
      {R"({"name": "A", "extra": 1})",
       "unknown key 'extra' (expected name, timeout, fields, required, required_hash_fields, "
       "dendrite, axon)"},
  };
  for (const auto& [input, message] : cases) {
    INFO(input);
    const auto r = run_tool("encode", input);
    CHECK(r.status == 2);
    bt::json out;
    REQUIRE_FALSE(bt::parse_json(r.out, out));
    const auto error = out.at("error").get<std::string>();
    CHECK(error.rfind(message, 0) == 0);
  }
}

TEST_CASE("bt-dendrite encode: Dummy example of the docs", "[encode_cli]") {
  const auto r =
      run_tool("encode", R"({"name": "Dummy", "fields": {"dummy_input": 1, "dummy_output": null},
                                        "required": ["dummy_input"]})");
  REQUIRE(r.status == 0);
  bt::json out;
  REQUIRE_FALSE(bt::parse_json(r.out, out));
  CHECK(out.at("headers").at(2) == bt::json::array({"bt_header_input_obj_dummy_input", "MA=="}));
  CHECK(out.at("body_hash") == "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a");
  const auto body = out.at("body").get<std::string>();
  CHECK(body.ends_with(R"(, "dummy_input": 1, "dummy_output": null})"));
  // total_size = header_size + body bytes
  const auto header_size = std::stoll(out.at("headers").at(3).at(1).get<std::string>());
  CHECK(std::stoll(out.at("headers").at(4).at(1).get<std::string>()) ==
        header_size + static_cast<long long>(body.size()));
}
