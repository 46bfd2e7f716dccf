// The single translation unit that compiles Asio and Beast: Beast is compiled once.
// Every target linking bt::net gets BOOST_ASIO_SEPARATE_COMPILATION and
// BOOST_BEAST_SEPARATE_COMPILATION, so their headers only declare what is defined here.
#include <boost/asio/impl/src.hpp>
#include <boost/beast/src.hpp>
