// The single translation unit that compiles Asio and Beast: Beast is compiled once.
// Every target linking bt::net gets BOOST_ASIO_SEPARATE_COMPILATION and
// BOOST_BEAST_SEPARATE_COMPILATION, so their headers only declare what is defined here.
// Boost.URL (the chain endpoint and Redis URL parsers) is compiled here too, from its header-only
// source: Debian ships its library as a separate package, and one definition serves every target
// that links bt::net.
#include <boost/asio/impl/src.hpp>
#include <boost/beast/src.hpp>
#include <boost/url/src.hpp>
