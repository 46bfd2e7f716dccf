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

/// Appends repr(double): shortest round-trip digits with CPython's thresholds
/// ("12.0", "1e+16", "1e-05", "inf", "nan", "-0.0").
void append_python_float(double value, std::string& out);
/// Appends repr(str) of UTF-8 text: quote choice, escapes, non-printable code points.
void append_python_repr(std::string_view utf8, std::string& out);

}  // namespace bt
