// bt::json: the JSON type used for synapse bodies and dynamic fields.
// ordered_json keeps insertion order, which CPython dicts (and therefore str() rendering and
// the body hash) depend on. Build with JSON_USE_IMPLICIT_CONVERSIONS=0 (set on bt::synapse).
#pragma once

#include <nlohmann/json.hpp>

namespace bt {
using json = nlohmann::ordered_json;
}  // namespace bt
