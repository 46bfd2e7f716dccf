# install(EXPORT) + package config, proven by building tests/consumer against an install.
# Skipped in sanitizer builds (the consumer would need the sanitizer runtime flags too).
if(NOT BT_SANITIZE AND NOT BT_TSAN)
  add_test(NAME install_consumer
           COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
                   -DWORK_DIR=${PROJECT_BINARY_DIR}/consumer-test -P ${CMAKE_CURRENT_SOURCE_DIR}/consumer/run.cmake)
  set_tests_properties(install_consumer PROPERTIES TIMEOUT 300)
endif()
