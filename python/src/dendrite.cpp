#include "common.hpp"
namespace btpy {
void init_dendrite(py::module_&) {}
}  // namespace btpy
