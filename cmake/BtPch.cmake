# Precompiled headers for the targets with several translation units that include Boost.Asio /
# Beast, nlohmann_json, spdlog and (tests) Catch2: parsing those headers is a large share of such
# a file's compile time at -O0 with clang, and CI builds the code twice (ASan+UBSan and TSan) on
# two cores. One PCH per target (flags and definitions differ between targets, so none is shared).
# On by default with clang, whose PCHs are small and load lazily; -DBT_PCH=ON/OFF overrides.
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  set(bt_pch_default ON)
else()
  set(bt_pch_default OFF)
endif()
option(BT_PCH "Precompile the heavy third-party headers of multi-file targets" ${bt_pch_default})

# bt_precompile_headers(target [NET] [CATCH]): the third-party headers most of the target's files
# use: the standard library and nlohmann_json; with NET Boost.Asio, Beast and spdlog (targets
# linking bt::net and spdlog), with CATCH Catch2. Only headers that are safe to see everywhere: no project
# headers (they change often), nothing whose meaning depends on a per-file macro.
function(bt_precompile_headers target)
  if(NOT BT_PCH)
    return()
  endif()
  cmake_parse_arguments(arg "NET;CATCH" "" "" ${ARGN})
  target_precompile_headers(${target} PRIVATE
    <algorithm> <chrono> <functional> <map> <memory> <optional> <string> <string_view> <vector>
    <nlohmann/json.hpp>)
  if(arg_NET)
    target_precompile_headers(${target} PRIVATE
      <boost/asio/awaitable.hpp> <boost/asio/co_spawn.hpp> <boost/asio/io_context.hpp>
      <boost/asio/ip/tcp.hpp> <boost/asio/steady_timer.hpp> <boost/asio/strand.hpp>
      <boost/asio/use_awaitable.hpp>
      <boost/beast/core/flat_buffer.hpp> <boost/beast/core/tcp_stream.hpp>
      <boost/beast/http/message.hpp> <boost/beast/http/parser.hpp> <boost/beast/http/read.hpp>
      <boost/beast/http/string_body.hpp> <boost/beast/http/write.hpp>
      <spdlog/spdlog.h>)
  endif()
  if(arg_CATCH)
    target_precompile_headers(${target} PRIVATE <catch2/catch.hpp>)
  endif()
endfunction()
