// The synapse bt-ping --payload sends: one string field, required (so it travels as a
// bt_header_input_obj_ placeholder and must be in the body) and hashed (so both ends pay the
// SHA3-256 of the payload), which is the expensive shape of a real subnet request.
#pragma once

#include <bt/synapse.hpp>

#include <string>

namespace bt::perf {

struct payload_synapse : bt::synapse {
  std::string data;

  static bt::synapse_schema<payload_synapse> schema() {
    return {.name = "Payload",
            .fields = {bt::field<&payload_synapse::data>("data", bt::required)},
            .hash_fields = {"data"}};
  }
};

}  // namespace bt::perf
