# JVM tests of the Spark plugin (included from tests/CMakeLists.txt): the plugin jar with the
# compile-only Spark declarations, small working fakes of the Spark classes it touches
# (fake-spark/, ahead on the classpath) and PluginHarness playing Spark's part in one JVM.
find_package(Java COMPONENTS Development Runtime)
find_package(Python3 COMPONENTS Interpreter)
if(NOT TARGET sparkprof_plugin_jar OR NOT TARGET sparkprof_agent OR NOT Java_JAVA_EXECUTABLE)
  return()
endif()

set(plugin_test_dir ${CMAKE_CURRENT_SOURCE_DIR}/plugin)
set(plugin_test_classes ${CMAKE_CURRENT_BINARY_DIR}/plugin/classes)
file(GLOB_RECURSE plugin_test_sources CONFIGURE_DEPENDS
  ${plugin_test_dir}/fake-spark/*.java ${plugin_test_dir}/*.java)
add_custom_command(
  OUTPUT ${plugin_test_classes}/PluginHarness.class
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${plugin_test_classes}
  COMMAND ${Java_JAVAC_EXECUTABLE} --release 17 -encoding UTF-8
          -cp ${SPARKPROF_SPARK_API_CLASSES}:${SPARKPROF_PLUGIN_JAR}
          -d ${plugin_test_classes} ${plugin_test_sources}
  DEPENDS ${plugin_test_sources} ${SPARKPROF_PLUGIN_JAR} sparkprof_plugin_jar
  COMMENT "javac plugin test harness"
  VERBATIM)
add_custom_target(sparkprof_plugin_test_classes ALL
  DEPENDS ${plugin_test_classes}/PluginHarness.class)

# Fakes first: they replace the compile-only declarations at run time.
set(plugin_test_classpath
  ${plugin_test_classes}:${SPARKPROF_SPARK_API_CLASSES}:${SPARKPROF_PLUGIN_JAR})
add_test(NAME plugin_jvm_in_process
  COMMAND ${Java_JAVA_EXECUTABLE} -agentpath:$<TARGET_FILE:sparkprof_agent>=interval=5ms
          -cp ${plugin_test_classpath} PluginHarness agent
          ${CMAKE_CURRENT_BINARY_DIR}/plugin/work/in_process)
add_test(NAME plugin_jvm_no_agent
  COMMAND ${Java_JAVA_EXECUTABLE} -cp ${plugin_test_classpath} PluginHarness no-agent
          ${CMAKE_CURRENT_BINARY_DIR}/plugin/work/no_agent)
add_test(NAME plugin_listener_bridge
  COMMAND ${Java_JAVA_EXECUTABLE} -agentpath:$<TARGET_FILE:sparkprof_agent>=interval=5ms
          -cp ${plugin_test_classpath} ListenerHarness
          ${CMAKE_CURRENT_BINARY_DIR}/plugin/work/listener)
add_test(NAME plugin_config
  COMMAND ${Java_JAVA_EXECUTABLE} -cp ${plugin_test_classpath} PluginHarness config -)
set_tests_properties(plugin_jvm_in_process plugin_jvm_no_agent plugin_listener_bridge plugin_config
  PROPERTIES
  TIMEOUT 120 LABELS "jvm;plugin" PASS_REGULAR_EXPRESSION "PASS"
  FAIL_REGULAR_EXPRESSION "FAIL|hs_err|SIGSEGV")

if(Python3_Interpreter_FOUND)
  add_test(NAME plugin_jar_contents
    COMMAND ${Python3_EXECUTABLE} ${plugin_test_dir}/check_jar.py ${SPARKPROF_PLUGIN_JAR})
  set_tests_properties(plugin_jar_contents PROPERTIES LABELS plugin)
endif()
