// Asio's OpenSSL support, compiled once (bt::net compiles the rest of Asio and Beast with
// BOOST_ASIO_SEPARATE_COMPILATION, which leaves the SSL definitions to one translation unit of
// the program). Only bt::chain (wss://) uses TLS.
#include <boost/asio/ssl/impl/src.hpp>
