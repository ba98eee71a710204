# OpenTelemetry traces from the plugin, received by a real OpenTelemetry Collector
# (scripts/install-otelcol.sh builds it into build/tools/otelcol) from real Spark runs
# (tests/otel/otel_trace_test.py): an application over gRPC (Spark 3.5) and over HTTP (Spark 4),
# an unreachable collector (the application is unaffected), and a Spark Connect server (Spark 4,
# its jars come with pyspark) whose requests carry their callers' traceparent. Included from
# tests/CMakeLists.txt after the plugin tests. Each test exits 77 (skipped) when its Spark, the
# collector or the Connect client's libraries are missing. Labels spark;otel: CI runs them once.
if(NOT TARGET sparkprof_plugin_jar OR NOT Python3_Interpreter_FOUND)
  return()
endif()
set(SPARKPROF_OTELCOL ${PROJECT_SOURCE_DIR}/build/tools/otelcol CACHE FILEPATH
  "the OpenTelemetry Collector scripts/install-otelcol.sh builds")
set(otel_cases "3.5.9:grpc" "3.5.9:unreachable" "4.2.0:http" "4.2.0:connect")
foreach(case IN LISTS otel_cases)
  string(REPLACE ":" ";" parts "${case}")
  list(GET parts 0 version)
  list(GET parts 1 mode)
  if(NOT version IN_LIST SPARKPROF_SPARK_VERSIONS)
    continue()
  endif()
  add_test(NAME otel_spark_${version}_${mode}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/otel/otel_trace_test.py
            --spark-home ${SPARKPROF_SPARK_ROOT}/${version}/home
            --plugin-jar ${SPARKPROF_PLUGIN_JAR} --collector ${SPARKPROF_OTELCOL}
            --work ${CMAKE_CURRENT_BINARY_DIR}/otel/${version}-${mode}
            ${mode})
  set_tests_properties(otel_spark_${version}_${mode} PROPERTIES
    LABELS "jvm;spark;otel" TIMEOUT 300 SKIP_RETURN_CODE 77
    PASS_REGULAR_EXPRESSION "PASS" FAIL_REGULAR_EXPRESSION "(^|\n)FAIL|hs_err|SIGSEGV")
endforeach()
