# Tests of the Spark plugin inside real Spark distributions (included from tests/CMakeLists.txt):
# tests/plugin/io/sparkprof/SparkPluginTest.java, compiled against Spark 3.5's jars, runs through
# each pinned release's spark-submit (scripts/install-spark.sh puts them in build/spark/<version>)
# with the plugin jar in --jars: config parsing, the reflective SparkCompat members, and a local-
# mode application with -agentpath, with the plugin starting the agent itself, and disabled.
# Each test exits 77 (skipped) when its Spark is not installed.
find_package(Java COMPONENTS Development Runtime)
find_package(Python3 COMPONENTS Interpreter)
if(NOT TARGET sparkprof_plugin_jar OR NOT TARGET sparkprof_agent OR NOT Java_JAVAC_EXECUTABLE
   OR NOT Python3_Interpreter_FOUND)
  return()
endif()

execute_process(COMMAND ${PROJECT_SOURCE_DIR}/scripts/spark-versions.sh
  OUTPUT_VARIABLE SPARKPROF_SPARK_VERSIONS OUTPUT_STRIP_TRAILING_WHITESPACE)
string(REPLACE "\n" ";" SPARKPROF_SPARK_VERSIONS "${SPARKPROF_SPARK_VERSIONS}")
set(SPARKPROF_SPARK_ROOT ${CMAKE_BINARY_DIR}/spark CACHE PATH
  "where scripts/install-spark.sh put the Spark releases (<root>/<version>/home)")
list(GET SPARKPROF_SPARK_VERSIONS 0 SPARKPROF_SPARK_COMPILE_VERSION)
set(SPARKPROF_SPARK_COMPILE_JARS ${SPARKPROF_SPARK_ROOT}/${SPARKPROF_SPARK_COMPILE_VERSION}/home/jars)

set(plugin_test_dir ${CMAKE_CURRENT_SOURCE_DIR}/plugin)
set(plugin_test_classes ${CMAKE_CURRENT_BINARY_DIR}/plugin/classes)
set(SPARKPROF_PLUGIN_TEST_JAR ${CMAKE_CURRENT_BINARY_DIR}/plugin/sparkprof-plugin-tests.jar)
file(GLOB_RECURSE plugin_test_sources CONFIGURE_DEPENDS ${plugin_test_dir}/*.java)
if(EXISTS ${SPARKPROF_SPARK_COMPILE_JARS})
  add_custom_command(
    OUTPUT ${SPARKPROF_PLUGIN_TEST_JAR}
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${plugin_test_classes}
    COMMAND ${Java_JAVAC_EXECUTABLE} --release 8 -encoding UTF-8 -nowarn
            -cp ${SPARKPROF_SPARK_COMPILE_JARS}/*:${SPARKPROF_PLUGIN_JAR}
            -d ${plugin_test_classes} ${plugin_test_sources}
    COMMAND ${Java_JAR_EXECUTABLE} cf ${SPARKPROF_PLUGIN_TEST_JAR} -C ${plugin_test_classes} .
    DEPENDS ${plugin_test_sources} ${SPARKPROF_PLUGIN_JAR} sparkprof_plugin_jar
    COMMENT "javac plugin tests (against Spark ${SPARKPROF_SPARK_COMPILE_VERSION})"
    VERBATIM)
  add_custom_target(sparkprof_plugin_test_jar ALL DEPENDS ${SPARKPROF_PLUGIN_TEST_JAR})
else()
  message(STATUS "sparkprof: no Spark in ${SPARKPROF_SPARK_ROOT} (scripts/install-spark.sh); "
                 "the real-Spark plugin tests will be skipped")
endif()

foreach(version IN LISTS SPARKPROF_SPARK_VERSIONS)
  set(run ${Python3_EXECUTABLE} ${plugin_test_dir}/run_in_spark.py
      --spark-home ${SPARKPROF_SPARK_ROOT}/${version}/home --plugin-jar ${SPARKPROF_PLUGIN_JAR}
      --test-jar ${SPARKPROF_PLUGIN_TEST_JAR})
  set(work ${CMAKE_CURRENT_BINARY_DIR}/plugin/work/${version})
  add_test(NAME plugin_spark_${version}_config COMMAND ${run} config)
  add_test(NAME plugin_spark_${version}_compat COMMAND ${run} compat)
  add_test(NAME plugin_spark_${version}_agent
           COMMAND ${run} --agent $<TARGET_FILE:sparkprof_agent> agent ${work}/agent)
  add_test(NAME plugin_spark_${version}_plugin_only COMMAND ${run} plugin-only ${work}/plugin-only)
  add_test(NAME plugin_spark_${version}_disabled COMMAND ${run} disabled ${work}/disabled)
  # EventLogDirOutputs through this release's Hadoop: atomic files, the size bound, failures.
  add_test(NAME plugin_spark_${version}_beside_event_log
           COMMAND ${run} beside-event-log ${work}/beside-event-log)
  # The History Server's bounds past their limits: the event-log analysis's timeout and queue, a
  # diff's decompressed profile.
  add_test(NAME plugin_spark_${version}_history_limits
           COMMAND ${run} history-limits ${work}/history-limits)
  # Plugin-only on a node without the driver library's dependencies: only the jar's copies serve.
  add_test(NAME plugin_spark_${version}_plugin_only_bare_node
           COMMAND ${run} --hide-bundled-libraries plugin-only ${work}/plugin-only-bare)
  set_tests_properties(
    plugin_spark_${version}_config plugin_spark_${version}_compat plugin_spark_${version}_agent
    plugin_spark_${version}_plugin_only plugin_spark_${version}_disabled
    plugin_spark_${version}_beside_event_log plugin_spark_${version}_history_limits
    plugin_spark_${version}_plugin_only_bare_node
    PROPERTIES TIMEOUT 300 LABELS "jvm;plugin;spark" SKIP_RETURN_CODE 77
    # FAIL only at a line's start: Spark's own log may quote a Hadoop setting holding "FAILED"
    # (e.g. when it reports a slow listener event with the whole environment, under load).
    PASS_REGULAR_EXPRESSION "PASS" FAIL_REGULAR_EXPRESSION "(^|\n)FAIL|hs_err|SIGSEGV")
endforeach()

# The agent case once more on JDK 21 (scripts/install-jdks.sh, issue 16), with spark-submit's
# JAVA_HOME on it; the log must show Spark's "Java version 21". Spark 3.5 only: Spark 4's launcher
# always adds --add-modules=jdk.incubator.vector, which the jlinked JDK 21 runtime does not have.
list(GET SPARKPROF_SPARK_VERSIONS 0 jdk21_spark_version)
if(DEFINED SPARKPROF_TEST_JDKS_DIR AND EXISTS ${SPARKPROF_TEST_JDKS_DIR}/21/bin/java)
  set(jdk21_test plugin_spark_${jdk21_spark_version}_agent_jdk21)
  add_test(NAME ${jdk21_test}
    COMMAND ${CMAKE_COMMAND} -E env JAVA_HOME=${SPARKPROF_TEST_JDKS_DIR}/21
            ${Python3_EXECUTABLE} ${plugin_test_dir}/run_in_spark.py
            --spark-home ${SPARKPROF_SPARK_ROOT}/${jdk21_spark_version}/home
            --plugin-jar ${SPARKPROF_PLUGIN_JAR} --test-jar ${SPARKPROF_PLUGIN_TEST_JAR}
            --agent $<TARGET_FILE:sparkprof_agent>
            agent ${CMAKE_CURRENT_BINARY_DIR}/plugin/work/${jdk21_spark_version}/agent-jdk21)
  set_tests_properties(${jdk21_test} PROPERTIES TIMEOUT 300 LABELS "jvm;plugin;spark"
    SKIP_RETURN_CODE 77 PASS_REGULAR_EXPRESSION "Java version 21\\.[0-9]+.*PASS"
    FAIL_REGULAR_EXPRESSION "(^|\n)FAIL|hs_err|SIGSEGV")
endif()

# The Python driver sampler in each release's interpreter with pyspark (the JVM stood in for).
foreach(version IN LISTS SPARKPROF_SPARK_VERSIONS)
  add_test(NAME python_driver_sampler_${version}
           COMMAND ${Python3_EXECUTABLE} ${plugin_test_dir}/python_driver_sampler_test.py
                   ${SPARKPROF_SPARK_ROOT}/${version}/venv/bin/python)
  set_tests_properties(python_driver_sampler_${version} PROPERTIES TIMEOUT 120
    LABELS "plugin;python" SKIP_RETURN_CODE 77)
endforeach()

add_test(NAME plugin_jar_contents
  COMMAND ${Python3_EXECUTABLE} ${plugin_test_dir}/check_jar.py ${SPARKPROF_PLUGIN_JAR})
set_tests_properties(plugin_jar_contents PROPERTIES LABELS plugin)
