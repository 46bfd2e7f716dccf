// Must not compile (tests/synapse_compile_checks.cmake): a synapse name that is no Python class
// name and no route. BT_SYNAPSE's static_assert says so, naming the rule.
#include <bt/synapse.hpp>

#include <string>

struct bad_name : bt::synapse {
  std::string text;
  BT_SYNAPSE(bad_name, "Sum-marize v2", BT_FIELD(text, bt::required))
};
