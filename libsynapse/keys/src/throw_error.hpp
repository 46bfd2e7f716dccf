// How the keys library's throwing calls report the `error` their error-returning forms return.
#pragma once

#include <bt/error.hpp>

#include <system_error>

namespace bt::detail {

/// Throws `err` as std::system_error(err.code, err.message()).
[[noreturn]] inline void throw_error(const error& err) {
  throw std::system_error(err.code, err.message());
}

}  // namespace bt::detail
