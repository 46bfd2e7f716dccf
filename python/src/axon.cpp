#include "common.hpp"
namespace btpy {
void init_axon(py::module_&) {}
}  // namespace btpy
