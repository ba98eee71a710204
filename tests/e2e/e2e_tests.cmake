# End-to-end test of the Spark plugin with a real Prometheus (included from tests/CMakeLists.txt,
# after plugin/plugin_tests.cmake whose compiled fakes it reuses): a driver JVM and two executor
# JVMs with -agentpath play Spark over a loopback link, Prometheus scrapes the driver, and
# run_e2e.py checks Prometheus's answers and the stage flame graphs against what the harness did.
# Exits 77 (skipped) without java, the agent, the plugin jar or prometheus
# (scripts/install-deps.sh --browser installs it). Needs the release build: scripts/test.sh runs
# it there and leaves JVM tests out of the sanitizer stage.
find_package(Python3 COMPONENTS Interpreter)
if(NOT Python3_Interpreter_FOUND)
  return()
endif()

set(e2e_dir ${CMAKE_CURRENT_SOURCE_DIR}/e2e)
set(e2e_args --work-dir ${CMAKE_CURRENT_BINARY_DIR}/e2e/work)
if(TARGET sparkprof_plugin_test_classes AND TARGET sparkprof_agent AND Java_JAVA_EXECUTABLE)
  set(e2e_classes ${CMAKE_CURRENT_BINARY_DIR}/e2e/classes)
  file(GLOB e2e_sources CONFIGURE_DEPENDS ${e2e_dir}/*.java)
  add_custom_command(
    OUTPUT ${e2e_classes}/E2eDriver.class
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${e2e_classes}
    COMMAND ${Java_JAVAC_EXECUTABLE} --release 17 -encoding UTF-8 -Xlint:all -Werror
            -cp ${plugin_test_classes}:${SPARKPROF_SPARK_API_CLASSES}:${SPARKPROF_PLUGIN_JAR}
            -d ${e2e_classes} ${e2e_sources}
    DEPENDS ${e2e_sources} ${plugin_test_classes}/PluginHarness.class
            sparkprof_plugin_test_classes
    COMMENT "javac e2e harness (driver and executor JVMs)"
    VERBATIM)
  add_custom_target(sparkprof_e2e_classes ALL DEPENDS ${e2e_classes}/E2eDriver.class)
  # The fakes come before the compile-only declarations, as in the plugin tests.
  list(APPEND e2e_args
    --java ${Java_JAVA_EXECUTABLE}
    --agent $<TARGET_FILE:sparkprof_agent>
    --classpath
    ${e2e_classes}:${plugin_test_classes}:${SPARKPROF_SPARK_API_CLASSES}:${SPARKPROF_PLUGIN_JAR})
  if(TARGET sparkprof)
    list(APPEND e2e_args --sparkprof $<TARGET_FILE:sparkprof>)
  endif()
endif()

add_test(NAME e2e_prometheus COMMAND ${Python3_EXECUTABLE} ${e2e_dir}/run_e2e.py ${e2e_args})
set_tests_properties(e2e_prometheus PROPERTIES
  LABELS "e2e;jvm" SKIP_RETURN_CODE 77 TIMEOUT 180)
