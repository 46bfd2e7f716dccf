// CPython str()/repr() of JSON-native values, as the body hash needs them (PROTOCOL 3.3).
#pragma once

#include <bt/json.hpp>

#include <string>
#include <string_view>

namespace bt {

/// Appends str(value): strings bare at top level, repr inside containers; floats as repr;
/// True/False/None; lists [..]; dicts {'k': v} in insertion order.
void append_python_str(const json& value, std::string& out);
std::string python_str(const json& value);
/// Appends str(s) of a string: the text itself; malformed UTF-8 bytes become U+FFFD.
void append_python_text(std::string_view utf8, std::string& out);

/// Appends repr(double): shortest round-trip digits with CPython's thresholds
/// ("12.0", "1e+16", "1e-05", "inf", "nan", "-0.0").
void append_python_float(double value, std::string& out);
/// Appends repr(str) of UTF-8 text: quote choice, escapes, non-printable code points.
/// Malformed UTF-8 bytes are rendered as U+FFFD (as the JSON writer sends them).
void append_python_repr(std::string_view utf8, std::string& out);
/// Appends repr(value): as append_python_str except that a top-level string is quoted.
/// (A separate name: an overload of append_python_repr would be ambiguous for string literals.)
void append_python_value_repr(const json& value, std::string& out);

/// Whether CPython's str.isprintable() holds for this code point (Unicode 14.0.0, CPython 3.11).
bool python_isprintable(char32_t code_point) noexcept;
/// The Unicode database version of python_isprintable's table.
extern const char* const python_unicode_version;

}  // namespace bt
