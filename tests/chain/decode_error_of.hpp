// error_of(f): runs f and returns the bt::chain_decode_error it throws; fails the test when it
// throws none (the decoders' refusals are exceptions that carry the field and the offset).
#pragma once

#include <bt/chain/chain_error.hpp>

#include <catch2/catch.hpp>

#include <stdexcept>

namespace bt::test {

template <class F>
bt::chain_decode_error error_of(F&& f) {
  try {
    f();
  } catch (const bt::chain_decode_error& e) {
    return e;
  }
  FAIL("no chain_decode_error thrown");
  throw std::logic_error("unreachable");
}

}  // namespace bt::test
