# install(EXPORT) + package config, proven by building tests/consumer against an install of this
# build tree and running it (an axon on port 0 answering a signed dendrite query with 200).
# The consumer is built with this build's compiler, and with its sanitizer flags in sanitizer
# builds, so that it links the instrumented libraries.
set(bt_consumer_flags "")
if(BT_SANITIZE)
  set(bt_consumer_flags "-fsanitize=address,undefined -fno-sanitize-recover=undefined")
elseif(BT_TSAN)
  set(bt_consumer_flags "-fsanitize=thread")
endif()
add_test(NAME install_consumer
         COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
                 -DWORK_DIR=${PROJECT_BINARY_DIR}/consumer-test -DCXX=${CMAKE_CXX_COMPILER}
                 -DFLAGS=${bt_consumer_flags} -DBUILD_TYPE=${CMAKE_BUILD_TYPE}
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/consumer/run.cmake)
set_tests_properties(install_consumer PROPERTIES TIMEOUT 300)
