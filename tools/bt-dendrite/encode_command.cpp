// `bt-dendrite encode` (see encode_command.hpp): a dynamic synapse built from the description,
// then the library's own to_headers / write_json_body / body_hash.
#include "encode_command.hpp"

#include <bt/body_hash.hpp>
#include <bt/dynamic_synapse.hpp>
#include <bt/header_codec.hpp>
#include <bt/json_body.hpp>

#include <iostream>
#include <iterator>
#include <string>
#include <vector>

namespace bt::cli {
namespace {

/// Input larger than this is refused (a description is a few kilobytes).
constexpr std::size_t max_input_bytes = 64u << 20;

struct input_error {
  std::string message;
};

std::vector<std::string> string_list(const json& j, const char* key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return out;
  if (!it->is_array()) throw input_error{std::string(key) + ": expected a list of field names"};
  for (const auto& e : *it) {
    if (!e.is_string()) throw input_error{std::string(key) + ": expected a list of field names"};
    out.push_back(e.get<std::string>());
  }
  return out;
}

dynamic_synapse build(const json& in) {
  if (!in.is_object()) throw input_error{"expected one JSON object"};
  for (auto it = in.begin(); it != in.end(); ++it) {
    static constexpr const char* known[] = {
        "name", "timeout", "fields", "required", "required_hash_fields", "dendrite", "axon"};
    bool ok = false;
    for (const char* k : known) ok |= it.key() == k;
    if (!ok)
      throw input_error{
          "unknown key '" + it.key() +
          "' (expected name, timeout, fields, required, required_hash_fields, dendrite, axon)"};
  }
  auto name_it = in.find("name");
  if (name_it == in.end() || !name_it->is_string())
    throw input_error{"name: expected the synapse class name"};

  const json empty = json::object();
  auto fields_it = in.find("fields");
  const json& fields = (fields_it == in.end() || fields_it->is_null()) ? empty : *fields_it;
  if (!fields.is_object()) throw input_error{"fields: expected an object of field values"};

  const auto required = string_list(in, "required");
  for (const auto& r : required)
    if (!fields.contains(r)) throw input_error{"required: '" + r + "' is not in fields"};

  std::vector<dynamic_field_spec> specs;
  for (auto it = fields.begin(); it != fields.end(); ++it) {
    bool req = false;
    for (const auto& r : required) req |= r == it.key();
    specs.push_back({it.key(), req ? field_kind::required : field_kind::optional});
  }
  error err;
  auto type = make_dynamic_descriptor(name_it->get<std::string>(), specs,
                                      string_list(in, "required_hash_fields"), err);
  if (err) throw input_error{err.message()};

  dynamic_synapse s(type);
  std::size_t i = 0;
  for (auto it = fields.begin(); it != fields.end(); ++it) s.values[i++] = it.value();

  if (auto it = in.find("timeout"); it != in.end()) {
    if (it->is_null())
      s.timeout.reset();
    else if (it->is_number())
      s.timeout = it->get<double>();
    else
      throw input_error{"timeout: expected a number of seconds or null"};
  }
  for (const char* side : {"dendrite", "axon"}) {
    auto it = in.find(side);
    if (it == in.end() || it->is_null()) continue;
    if (auto e = terminal_info_from_json(*it, side[0] == 'd' ? s.dendrite : s.axon, side))
      throw input_error{e.message()};
  }
  return s;
}

int fail(std::ostream& out, const std::string& message) {
  out << json{{"error", message}}.dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
  return 2;
}

}  // namespace

CLI::App* add_encode_command(CLI::App& app, encode_config& cfg) {
  auto* sub = app.add_subcommand("encode",
                                 "Read one synapse description (JSON) on stdin; print the headers, "
                                 "request body and body hash a "
                                 "dendrite would send, without signing or sending");
  sub->add_flag(
      "--compact", cfg.compact,
      "Write the body as an axon response (compact UTF-8, as Starlette) instead of a request "
      "(Python json.dumps defaults)");
  return sub;
}

int run_encode(const encode_config& cfg, std::istream& in, std::ostream& out) {
  std::string text;
  {
    char buf[65536];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
      text.append(buf, static_cast<std::size_t>(in.gcount()));
      if (text.size() > max_input_bytes) return fail(out, "input larger than 64 MiB");
    }
  }
  json description;
  if (auto err = parse_json(text, description)) return fail(out, err.message());
  try {
    const dynamic_synapse s = build(description);
    std::string body;
    write_json_body(*s.type, s, body, cfg.compact ? json_style::compact : json_style::python_dumps);
    header_list headers;
    to_headers(s, headers, {.body_bytes = body.size()});

    json result = json::object();
    json items = json::array();
    for (const auto& [n, v] : headers.items) items.push_back(json::array({n, v}));
    result["headers"] = std::move(items);
    result["body"] = body;
    result["body_hash"] = body_hash(s);
    out << result.dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
    return 0;
  } catch (const input_error& e) {
    return fail(out, e.message);
  }
}

}  // namespace bt::cli
