// bt::route_options::option_table(): the one list of a route's value fields, which a front end
// walks to set them by name (the callables are passed as code, not through the table).
#include <bt/axon.hpp>

#include <catch2/catch.hpp>

TEST_CASE("route_options: the option table names auth and sets it through its member") {
  const auto names = bt::detail::member_names(bt::route_options::option_table());
  REQUIRE(names.size() == 1);
  CHECK(names[0] == "auth");

  bt::route_options o;
  const bool found = bt::detail::find_member(
      bt::route_options::option_table(), [](const auto& m) { return m.name == "auth"; },
      [&](const auto& m) { o.*(m.ptr) = bt::auth_mode::either; });
  CHECK(found);
  CHECK(o.auth == bt::auth_mode::either);
}
