// JSON bodies: the model_dump() form of a synapse (PROTOCOL 1.4) and its parser.
#pragma once

#include <bt/codec_error.hpp>
#include <bt/json.hpp>
#include <bt/synapse.hpp>

#include <string>
#include <string_view>

namespace bt {

enum class json_style {
  /// Python json.dumps defaults, as a Python dendrite sends requests: ", " and ": ",
  /// ensure_ascii (\uXXXX, surrogate pairs). Non-finite floats are written as null (never NaN).
  python_dumps,
  /// Compact UTF-8, as Starlette renders responses: "," and ":".
  compact,
};

/// Appends the body: the 7 base fields in order ("name" is the descriptor's name), then the
/// type's fields in declaration order; None as null; floats as CPython repr.
void write_json_body(const synapse_descriptor& d, const synapse& s, std::string& out,
                     json_style style = json_style::python_dumps);

/// Appends `text` as one JSON string literal, written as write_json_body writes strings: the
/// escapes of json.dumps, \uXXXX escapes of everything non-ASCII under python_dumps, raw UTF-8
/// under compact; a byte that is not valid UTF-8 becomes U+FFFD (never an exception).
void append_json_string(std::string& out, std::string_view text,
                        json_style style = json_style::compact);

template <class T>
std::string to_json_body(const T& s, json_style style = json_style::python_dumps) {
  std::string out;
  write_json_body(descriptor_for(s), s, out, style);
  return out;
}

/// The same content as a bt::json object (for tools and tests).
json to_json_value(const synapse_descriptor& d, const synapse& s);

struct json_read_options {
  /// Deeper nesting is rejected (nesting_too_deep). The reader recurses once per level, so
  /// values above 1024 act as 1024.
  std::size_t max_depth = 64;
  /// What a dendrite keeps of an answer's body (PROTOCOL 6.2): only the base values
  /// axon.status_code, axon.status_message and axon.process_time and the type's own fields are
  /// stored. Every other base value is checked against its type exactly as a stored one (the
  /// same errors, in the same order), but one that is valid whatever it says (null, a string for
  /// text, a number for a float, an integer literal of at most 18 digits for an int) is validated
  /// in place and never built; the target's other base members are unspecified afterwards.
  bool answer_status_only = false;
};

/// Parses untrusted JSON text into `out` without exceptions escaping: invalid JSON (including
/// NaN/Infinity tokens, lone surrogates, invalid UTF-8 and numbers overflowing double) is
/// invalid_json, nesting beyond max_depth is nesting_too_deep, a duplicate object key is
/// invalid_json, and an integer outside [-2^63, 2^64) is invalid_json (big integers are never
/// rounded through double; PROTOCOL 1.4). `out` is untouched on failure; `what` is "json".
error parse_json(std::string_view text, json& out, const json_read_options& opt = {});

/// Parses an untrusted body into `target` (never throws), in one pass without a DOM of the
/// whole body (the same rules as parse_json; values of ignored keys are validated, not built,
/// and duplicate keys are only detected in values that are read). Base fields and the type's
/// fields are assigned from the JSON object; "name" and unknown keys are ignored; a missing
/// required field is missing_field, a missing optional one keeps the target's current value
/// (its default in a fresh object, which gives Python's behaviour); a value of the wrong type is
/// wrong_type naming the field ("body.<field>"). On error, `target` may be partly assigned.
error read_json_body(const synapse_descriptor& d, std::string_view text, synapse& target,
                     const json_read_options& opt = {});

template <class T>
error from_json_body(std::string_view text, T& target, const json_read_options& opt = {}) {
  return read_json_body(descriptor_for(target), text, target, opt);
}

/// Parses terminal_info from a JSON object (unknown keys ignored; cast rules of PROTOCOL 1.1).
error terminal_info_from_json(const json& j, terminal_info& out, std::string_view where);

}  // namespace bt
