// Prints SHA3-256("") from the installed library; the test compares it with the known digest.
#include <bt/sha3.hpp>

#include <iostream>

int main() {
  std::cout << bt::sha3_256_hex("") << "\n";
  return 0;
}
