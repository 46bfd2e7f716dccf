// Uses the installed library: SHA3-256("") must be the FIPS 202 digest. Prints it (run.cmake
// compares the output too) and exits 1 on a mismatch.
#include <bt/sha3.hpp>

#include <iostream>
#include <string_view>

int main() {
  constexpr std::string_view fips202_empty =
      "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a";
  const std::string got = bt::sha3_256_hex("");
  std::cout << got << "\n";
  if (got != fips202_empty) {
    std::cerr << "consumer: SHA3-256(\"\") is " << got << ", expected " << fips202_empty << "\n";
    return 1;
  }
  return 0;
}
