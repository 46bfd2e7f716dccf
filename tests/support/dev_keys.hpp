// The development keys the tests sign and serve with (//Alice, //Bob, //Charlie), each derived
// once per process: sr25519 derivation is not free, and every suite needs the same three.
#pragma once

#include <bt/keypair.hpp>

namespace bt::test {

inline const bt::keypair& alice() {
  static const bt::keypair k = bt::keypair::from_uri("//Alice");
  return k;
}
inline const bt::keypair& bob() {
  static const bt::keypair k = bt::keypair::from_uri("//Bob");
  return k;
}
inline const bt::keypair& charlie() {
  static const bt::keypair k = bt::keypair::from_uri("//Charlie");
  return k;
}

}  // namespace bt::test
