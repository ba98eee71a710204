# JVM tests of libsparkprof.so: real JVMs with -agentpath (or, plugin_start*, the library loaded
# from a jar at run time) running tests/agent/AgentWorkloads.java.
# Included from native-agent/CMakeLists.txt (the agent's owner registers its own end-to-end tests).
find_package(Java COMPONENTS Development)
find_package(Python3 COMPONENTS Interpreter)
# The monitor cases read drained batches as JSON through flatc (the schema compiler).
find_program(SPARKPROF_FLATC flatc REQUIRED)
if(NOT Java_JAVAC_EXECUTABLE OR NOT Python3_Interpreter_FOUND)
  message(STATUS "sparkprof: javac or python3 missing, agent JVM tests disabled")
  return()
endif()

set(SPARKPROF_AGENT_TEST_DIR ${PROJECT_SOURCE_DIR}/tests/agent)
set(SPARKPROF_AGENT_TEST_CLASSES ${CMAKE_BINARY_DIR}/tests/agent/classes)
set(SPARKPROF_AGENT_TEST_SOURCES
  ${SPARKPROF_AGENT_TEST_DIR}/AgentWorkloads.java
  ${SPARKPROF_AGENT_TEST_DIR}/ChurnTarget.java
  ${PROJECT_SOURCE_DIR}/spark-plugin/src/main/java/io/sparkprof/NativeAgent.java
  ${PROJECT_SOURCE_DIR}/spark-plugin/src/main/java/io/sparkprof/NativeLibraries.java)
add_custom_command(
  OUTPUT ${SPARKPROF_AGENT_TEST_CLASSES}/AgentWorkloads.class
  COMMAND ${CMAKE_COMMAND} -E make_directory ${SPARKPROF_AGENT_TEST_CLASSES}
  COMMAND ${Java_JAVAC_EXECUTABLE} --release 17 -d ${SPARKPROF_AGENT_TEST_CLASSES}
          ${SPARKPROF_AGENT_TEST_SOURCES}
  DEPENDS ${SPARKPROF_AGENT_TEST_SOURCES}
  COMMENT "javac agent test workloads"
  VERBATIM)
add_custom_target(sparkprof_agent_test_classes ALL
  DEPENDS ${SPARKPROF_AGENT_TEST_CLASSES}/AgentWorkloads.class)

foreach(test_case serialization interval_1ms cpu_accounting_1ms cpu_accounting_10ms
                  walk_failures switches_off jvmti_walker threads_500 class_churn gc_churn
                  exit_while_sampling tagged bad_options loaded_twice wall_mode prometheus
                  prometheus_hostile_clients out_unwritable
                  ring_memory_budget executor_id_utf8 thread_name_utf8 no_agent
                  plugin_start plugin_start_with_agentpath cpu_wall_waits cpu_wall_starved
                  monitor_waits monitors_off jvm_memory debug_non_safepoints)
  add_test(NAME agent_jvm_${test_case}
    COMMAND ${Python3_EXECUTABLE} ${SPARKPROF_AGENT_TEST_DIR}/run_agent_case.py
            --java ${Java_JAVA_EXECUTABLE} --lib $<TARGET_FILE:sparkprof_agent>
            --classes ${SPARKPROF_AGENT_TEST_CLASSES} --work ${CMAKE_BINARY_DIR}/tests/agent/work
            --flatc ${SPARKPROF_FLATC} ${test_case})
  set_tests_properties(agent_jvm_${test_case} PROPERTIES TIMEOUT 180 LABELS "jvm;agent")
endforeach()

# The cases that matter for fidelity again on the other JDKs Spark 3.5 and 4 run on (issue 16):
# JDK 21 (scripts/install-jdks.sh installs it) and Temurin 25 (linked when the machine has it).
# Each JDK found as <dir>/<N>/bin/java at configure time registers agent_jvm_<N>_<case>; the
# classes are the JDK 17 ones (--release 17). About 1.5 minutes of CPU per JDK.
set(SPARKPROF_TEST_JDKS_DIR ${CMAKE_BINARY_DIR}/jdks CACHE PATH
    "Where scripts/install-jdks.sh put the extra JDKs for the agent JVM tests (<dir>/<N>/bin/java)")
foreach(jdk 21 25)
  set(jdk_java ${SPARKPROF_TEST_JDKS_DIR}/${jdk}/bin/java)
  if(NOT EXISTS ${jdk_java})
    message(STATUS "sparkprof: no JDK ${jdk} in ${SPARKPROF_TEST_JDKS_DIR} "
                   "(scripts/install-jdks.sh), agent_jvm_${jdk}_* tests not registered")
    continue()
  endif()
  foreach(test_case serialization walk_failures jvmti_walker cpu_accounting_10ms gc_churn
                    class_churn exit_while_sampling threads_500 prometheus plugin_start
                    cpu_wall_waits monitor_waits jvm_memory debug_non_safepoints)
    add_test(NAME agent_jvm_${jdk}_${test_case}
      COMMAND ${Python3_EXECUTABLE} ${SPARKPROF_AGENT_TEST_DIR}/run_agent_case.py
              --java ${jdk_java} --lib $<TARGET_FILE:sparkprof_agent>
              --classes ${SPARKPROF_AGENT_TEST_CLASSES}
              --work ${CMAKE_BINARY_DIR}/tests/agent/work-jdk${jdk} --flatc ${SPARKPROF_FLATC}
              ${test_case})
    set_tests_properties(agent_jvm_${jdk}_${test_case} PROPERTIES TIMEOUT 180 LABELS "jvm;agent")
  endforeach()
endforeach()
