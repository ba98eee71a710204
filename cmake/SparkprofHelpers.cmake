# sparkprof_add_fuzzer(NAME SOURCE LIBS...)
# Every fuzz target builds in the normal build. With SPARKPROF_LIBFUZZER (clang) it links libFuzzer;
# otherwise it links a small driver that replays the files or directories given on the command
# line, so the corpus doubles as a regression test.
function(sparkprof_add_fuzzer name source)
  add_executable(${name} ${source})
  target_link_libraries(${name} PRIVATE ${ARGN})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  if(SPARKPROF_LIBFUZZER)
    target_compile_options(${name} PRIVATE -fsanitize=fuzzer)
    target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  else()
    target_sources(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests/fuzz/replay_driver.cc)
  endif()
  set_property(GLOBAL APPEND PROPERTY SPARKPROF_FUZZERS ${name})
endfunction()

# sparkprof_add_test(NAME SOURCES... LIBS ...)
# With SPARKPROF_TESTS off (the Python package's build) the target still exists, so directories
# may set its properties, but it is never built and needs no GoogleTest.
function(sparkprof_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  if(NOT SPARKPROF_TESTS)
    add_executable(${name} EXCLUDE_FROM_ALL ${ARG_SOURCES})
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_definitions(${name} PRIVATE
    SPARKPROF_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    SPARKPROF_SHARED_EVENTLOGS="${PROJECT_SOURCE_DIR}/../shared/eventlogs")
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 600)
endfunction()
