// bt::axon_info::parse: the one "IP:PORT:HOTKEY" parser of the command-line programs, and
// routable(), the test metagraph::serving_axons applies.
#include <bt/axon_info.hpp>
#include <bt/keypair.hpp>

#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

namespace {

// The message of the std::invalid_argument parse throws for `text` ("" when it does not throw).
std::string axon_parse_error(const std::string& text, const char* name = "") {
  try {
    (void)bt::axon_info::parse(text, name);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("axon_info::parse: IPv4, bracketed and bare IPv6", "[axon_info]") {
  const std::string bob = bt::keypair::from_uri("//Bob").ss58_address();
  const auto v4 = bt::axon_info::parse("127.0.0.1:8091:" + bob);
  CHECK(v4.ip == "127.0.0.1");
  CHECK(v4.port == 8091);
  CHECK(v4.ip_type == 4);
  CHECK(v4.hotkey == bob);
  CHECK(v4.coldkey.empty());
  for (const std::string ip : {"[::1]", "::1"}) {
    const auto v6 = bt::axon_info::parse(ip + ":65535:" + bob);
    CHECK(v6.ip == "::1");
    CHECK(v6.port == 65535);
    CHECK(v6.ip_type == 6);
  }
}

TEST_CASE("axon_info::parse: the message names the flag, the text and the wrong part",
          "[axon_info]") {
  const std::string bob = bt::keypair::from_uri("//Bob").ss58_address();
  CHECK(axon_parse_error("127.0.0.1:8091", "--axon") ==
        "--axon '127.0.0.1:8091': expected IP:PORT:HOTKEY");
  CHECK(axon_parse_error("nocolon") == "'nocolon': expected IP:PORT:HOTKEY");
  CHECK(axon_parse_error(":8091:" + bob) ==
        "':8091:" + bob + "': the IP is empty (expected IP:PORT:HOTKEY)");
  for (const std::string port : {"0", "65536", "80x", "", "-1", "99999999999"}) {
    CAPTURE(port);
    CHECK(axon_parse_error("1.2.3.4:" + port + ":" + bob, "--target") ==
          "--target '1.2.3.4:" + port + ":" + bob + "': the port '" + port +
              "' is not an integer from 1 to 65535");
  }
  // A host name is no address: a dendrite resolves nothing (AxonInfo carries IP literals).
  CHECK(axon_parse_error("localhost:8091:" + bob, "--axon") ==
        "--axon 'localhost:8091:" + bob +
            "': 'localhost' is not an IP address; an axon is addressed by its IP, as AxonInfo "
            "has it (this machine: 127.0.0.1 or [::1])");
  CHECK(axon_parse_error("1.2.3:8091:" + bob).find("'1.2.3' is not an IP address") !=
        std::string::npos);
  CHECK(axon_parse_error("1.2.3.4:1:") ==
        "'1.2.3.4:1:': the hotkey is empty (expected IP:PORT:HOTKEY)");
  CHECK(axon_parse_error("1.2.3.4:1:hello")
            .rfind("'1.2.3.4:1:hello': hotkey 'hello' is not an SS58 address (", 0) == 0);
}

TEST_CASE("axon_info::routable: a served address with a port", "[axon_info]") {
  bt::axon_info a;
  a.ip = "10.0.0.1";
  a.port = 8091;
  CHECK(a.routable());
  a.port = 0;
  CHECK_FALSE(a.routable());
  a.port = 8091;
  for (const char* unspecified : {"0.0.0.0", "::", ""}) {
    a.ip = unspecified;
    CHECK_FALSE(a.routable());
  }
}
