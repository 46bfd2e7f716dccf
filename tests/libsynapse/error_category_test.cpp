// bt::enum_error_category (bt/error_category.hpp) as the keys and codec categories use it: names,
// every message in enum order, and values outside the table.
#include <bt/codec_error.hpp>
#include <bt/key_error.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <system_error>

TEST_CASE("error categories: names, messages by value, and the unknown text") {
  const std::error_code k = bt::key_errc::ss58_bad_character;
  CHECK(std::string(k.category().name()) == "bt.keys");
  CHECK(k.message() == "invalid SS58: character outside base58");
  CHECK(std::error_code(bt::key_errc::keyfile_wrong_password).message() ==
        "wrong password or corrupted keyfile");
  CHECK(std::error_code(bt::key_errc::unsupported_crypto).message() == "unsupported crypto type");
  CHECK(bt::key_category().message(0) == "unknown bt.keys error");
  CHECK(bt::key_category().message(20) == "unknown bt.keys error");
  CHECK(bt::key_category().message(-1) == "unknown bt.keys error");

  const std::error_code c = bt::codec_errc::invalid_integer;
  CHECK(std::string(c.category().name()) == "bt.codec");
  CHECK(c.message() == "invalid integer");
  CHECK(std::error_code(bt::codec_errc::missing_field).message() == "missing required field");
  CHECK(std::error_code(bt::codec_errc::nesting_too_deep).message() == "JSON nested too deeply");
  CHECK(bt::codec_category().message(12) == "unknown bt.codec error");

  // One category object per enum: codes of two enums never compare equal, codes of one do.
  CHECK(&k.category() == &bt::key_category());
  CHECK(k !=
        std::error_code(static_cast<int>(bt::key_errc::ss58_bad_character), bt::codec_category()));
}
