# sparkprof inside real Spark (included from tests/CMakeLists.txt): the demo application (demo/,
# Spark's Java API only) as a jar, and one end-to-end test per pinned Spark release,
# e2e_real_spark_<version>: a standalone Master and two Workers on loopback, the demo submitted
# with the agent and the plugin as docs/quickstart-spark.md says, a real Prometheus scraping the
# driver and a History Server over Spark's event log (tests/e2e/run_real_spark.py).
#
# Uses, when already set: SPARKPROF_SPARK_ROOT (where scripts/install-spark.sh put the releases,
# <root>/<version>/home; default ${CMAKE_BINARY_DIR}/spark), SPARKPROF_SPARK_VERSIONS (default:
# scripts/spark-versions.sh), SPARKPROF_PLUGIN_JAR and the targets sparkprof_plugin_jar,
# sparkprof_agent, sparkprof_driver and sparkprof (the CLI). Sets SPARKPROF_DEMO_JAR.
# Each test exits 77 (skipped) when its Spark, java or prometheus is missing.
find_package(Java COMPONENTS Development Runtime)
find_package(Python3 COMPONENTS Interpreter)
if(NOT Java_JAVAC_EXECUTABLE OR NOT Java_JAR_EXECUTABLE)
  return()
endif()

if(NOT DEFINED SPARKPROF_SPARK_VERSIONS)
  execute_process(COMMAND ${PROJECT_SOURCE_DIR}/scripts/spark-versions.sh
    OUTPUT_VARIABLE SPARKPROF_SPARK_VERSIONS OUTPUT_STRIP_TRAILING_WHITESPACE)
  string(REPLACE "\n" ";" SPARKPROF_SPARK_VERSIONS "${SPARKPROF_SPARK_VERSIONS}")
endif()
if(NOT DEFINED SPARKPROF_SPARK_ROOT)
  set(SPARKPROF_SPARK_ROOT ${CMAKE_BINARY_DIR}/spark CACHE PATH
    "where scripts/install-spark.sh put the Spark releases (<root>/<version>/home)")
endif()

# The demo compiles against the first (oldest) release's jars at Java 8 bytecode and uses only
# Spark's Java API, so the one jar runs on every pinned release (the tests check it).
list(GET SPARKPROF_SPARK_VERSIONS 0 demo_spark_version)
set(demo_spark_jars ${SPARKPROF_SPARK_ROOT}/${demo_spark_version}/home/jars)
set(SPARKPROF_DEMO_JAR ${CMAKE_BINARY_DIR}/demo/sparkprof-demo.jar
    CACHE INTERNAL "the demo Spark application (demo/)")
if(EXISTS ${demo_spark_jars})
  set(demo_classes ${CMAKE_BINARY_DIR}/demo/classes)
  file(GLOB_RECURSE demo_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/demo/src/main/java/*.java)
  add_custom_command(
    OUTPUT ${SPARKPROF_DEMO_JAR}
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${demo_classes}
    COMMAND ${Java_JAVAC_EXECUTABLE} --release 8 -encoding UTF-8 -Xlint:all,-path,-options -Werror
            -cp ${demo_spark_jars}/* -d ${demo_classes} ${demo_sources}
    COMMAND ${Java_JAR_EXECUTABLE} cf ${SPARKPROF_DEMO_JAR} -C ${demo_classes} io
    DEPENDS ${demo_sources}
    COMMENT "javac + jar sparkprof-demo.jar (against Spark ${demo_spark_version})"
    VERBATIM)
  add_custom_target(sparkprof_demo_jar ALL DEPENDS ${SPARKPROF_DEMO_JAR})
else()
  message(STATUS "sparkprof: no Spark in ${SPARKPROF_SPARK_ROOT} (scripts/install-spark.sh); "
                 "the demo application is not built and the real-Spark e2e tests are skipped")
endif()

if(NOT Python3_Interpreter_FOUND OR NOT TARGET sparkprof_agent OR NOT TARGET sparkprof
   OR NOT TARGET sparkprof_plugin_jar)
  return()
endif()
find_program(SPARKPROF_FLATC flatc)
foreach(version IN LISTS SPARKPROF_SPARK_VERSIONS)
  # -agentpath in every JVM, and the plugin-only install (the plugin starts the agent itself).
  foreach(mode agentpath plugin_only)
    set(name e2e_real_spark_${version})
    set(extra)
    if(mode STREQUAL "plugin_only")
      set(name e2e_real_spark_${version}_plugin_only)
      set(extra --plugin-only)
    endif()
    add_test(NAME ${name}
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/e2e/run_real_spark.py
        --spark-home ${SPARKPROF_SPARK_ROOT}/${version}/home
        --agent $<TARGET_FILE:sparkprof_agent>
        --plugin-jar ${SPARKPROF_PLUGIN_JAR}
        --demo-jar ${SPARKPROF_DEMO_JAR}
        --sparkprof $<TARGET_FILE:sparkprof>
        --flatc ${SPARKPROF_FLATC}
        --work-dir ${CMAKE_CURRENT_BINARY_DIR}/e2e/real-spark/${version}-${mode}
        ${extra})
    # One test at a time per machine: each runs five JVMs and Prometheus.
    set_tests_properties(${name} PROPERTIES
      LABELS "e2e;jvm;spark" TIMEOUT 600 SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
  endforeach()
endforeach()

# Spark on a real YARN (tests/e2e/run_yarn_spark.py): Hadoop's MiniYARNCluster and MiniDFSCluster
# (Maven Central's hadoop-client-minicluster, tests/e2e/miniyarn/pom.xml, resolved into ~/.m2),
# the demo submitted with --master yarn in client and in cluster mode as docs/quickstart-spark.md
# says, the standalone test's checks. Label `yarn` selects them.
foreach(version IN LISTS SPARKPROF_SPARK_VERSIONS)
  foreach(mode client cluster)
    set(name e2e_yarn_spark_${version}_${mode})
    add_test(NAME ${name}
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/e2e/run_yarn_spark.py
        --spark-home ${SPARKPROF_SPARK_ROOT}/${version}/home
        --deploy-mode ${mode}
        --agent $<TARGET_FILE:sparkprof_agent>
        --plugin-jar ${SPARKPROF_PLUGIN_JAR}
        --demo-jar ${SPARKPROF_DEMO_JAR}
        --sparkprof $<TARGET_FILE:sparkprof>
        --flatc ${SPARKPROF_FLATC}
        --work-dir ${CMAKE_CURRENT_BINARY_DIR}/e2e/yarn-spark/${version}-${mode})
    # One at a time: a ResourceManager, NodeManager, DataNode, three containers and Prometheus.
    set_tests_properties(${name} PROPERTIES
      LABELS "e2e;jvm;spark;yarn" TIMEOUT 900 SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
  endforeach()
endforeach()

# S3A metrics, the dashboards' panel queries and the alert expressions against real servers
# (tests/e2e/run_observability.py): one short run per release with moto's S3 server, hadoop-aws of
# the release's Hadoop and a Prometheus (scripts/install-s3a.sh installs the first two into
# SPARKPROF_S3A_ROOT, default ${CMAKE_BINARY_DIR}/s3a).
if(NOT DEFINED SPARKPROF_S3A_ROOT)
  set(SPARKPROF_S3A_ROOT ${CMAKE_BINARY_DIR}/s3a CACHE PATH
    "where scripts/install-s3a.sh put hadoop-aws, the AWS SDK and moto")
endif()
foreach(version IN LISTS SPARKPROF_SPARK_VERSIONS)
  add_test(NAME e2e_observability_${version}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/e2e/run_observability.py
      --spark-home ${SPARKPROF_SPARK_ROOT}/${version}/home
      --python ${SPARKPROF_SPARK_ROOT}/${version}/venv/bin/python
      --agent $<TARGET_FILE:sparkprof_agent>
      --plugin-jar ${SPARKPROF_PLUGIN_JAR}
      --s3a-root ${SPARKPROF_S3A_ROOT}
      --flatc ${SPARKPROF_FLATC}
      --work-dir ${CMAKE_CURRENT_BINARY_DIR}/e2e/observability/${version})
  set_tests_properties(e2e_observability_${version} PROPERTIES
    LABELS "e2e;jvm;spark;s3a" TIMEOUT 600 SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
endforeach()

# The live Structured Streaming metrics (tests/e2e/run_streaming.py, docs/metrics.md): a named
# streaming query on Spark's rate source, the driver's /metrics scraped while it runs (counters
# grow, rates, steps, state, watermark lag, trigger, not falling behind; gauges gone after the
# stop), and the "Spark Structured Streaming" dashboard's panels and the streaming alerts over a
# real Prometheus. About 65 s per release on a busy 2-core machine (50 s of it the application).
foreach(version IN LISTS SPARKPROF_SPARK_VERSIONS)
  add_test(NAME e2e_streaming_metrics_${version}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/e2e/run_streaming.py
      --spark-home ${SPARKPROF_SPARK_ROOT}/${version}/home
      --python ${SPARKPROF_SPARK_ROOT}/${version}/venv/bin/python
      --agent $<TARGET_FILE:sparkprof_agent>
      --plugin-jar ${SPARKPROF_PLUGIN_JAR}
      --work-dir ${CMAKE_CURRENT_BINARY_DIR}/e2e/streaming/${version})
  # One at a time: three JVMs, the Python workers and Prometheus.
  set_tests_properties(e2e_streaming_metrics_${version} PROPERTIES
    LABELS "e2e;jvm;spark" TIMEOUT 300 SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
endforeach()

# The sparkprof tab in Spark's UI (tests/e2e/run_ui_tab.py, docs/spark-ui.md): the live tab behind
# a reverse proxy (spark.ui.proxyBase) and the History Server's tab of the finished application,
# read from the outputs the driver stored beside the event log (and `analyze --profile` of them),
# each looked at in headless Chromium (tests/browser/spark_ui_tab.test.js; skipped without
# Chromium or playwright-core, tests/browser/setup.sh). The 1,000-stage run (label nightly) is the
# measurement docs/spark-ui.md quotes.
if(SPARKPROF_NODE)
  foreach(version IN LISTS SPARKPROF_SPARK_VERSIONS)
    foreach(stages 20 1000)
      set(name e2e_ui_tab_${version})
      set(labels "e2e;jvm;spark;ui")
      if(stages EQUAL 1000)
        set(name e2e_ui_tab_1000_stages_${version})
        set(labels "e2e;jvm;spark;ui;nightly")
      endif()
      add_test(NAME ${name}
        COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/e2e/run_ui_tab.py
          --spark-home ${SPARKPROF_SPARK_ROOT}/${version}/home
          --python ${SPARKPROF_SPARK_ROOT}/${version}/venv/bin/python
          --plugin-jar ${SPARKPROF_PLUGIN_JAR}
          --node ${SPARKPROF_NODE}
          --sparkprof $<TARGET_FILE:sparkprof>
          --tiny-stages ${stages}
          --work-dir ${CMAKE_CURRENT_BINARY_DIR}/e2e/ui-tab/${version}-${stages})
      set_tests_properties(${name} PROPERTIES
        LABELS "${labels}" TIMEOUT 900 SKIP_RETURN_CODE 77 RUN_SERIAL TRUE
        PASS_REGULAR_EXPRESSION "PASS" FAIL_REGULAR_EXPRESSION "(^|\n)FAIL")
    endforeach()
  endforeach()
endif()
