# The sparkprof files image (scripts/build-image.sh; included from tests/CMakeLists.txt after
# e2e/real_spark_tests.cmake, whose Spark variables it reads).
#   image_build           builds the image into build/image (fixture sparkprof_image), a second
#                         time to compare digests, and checks what is in it (label image)
#   image_init_container  podman runs it as the chart's init container into an empty directory
#                         (label image)
#   e2e_image_spark_<version>  the same copy, then the real-Spark e2e test with -agentpath and
#                         --jars pointing at the copied files (labels e2e;jvm;spark;image_spark; not
#                         in scripts/test.sh's run: ctest -L image_spark)
# Each exits 77 (skipped) without its tools: umoci, skopeo, busybox-static and podman come from
# scripts/install-deps.sh --image, helm from scripts/install-helm.sh.
find_package(Python3 COMPONENTS Interpreter)
if(NOT Python3_Interpreter_FOUND OR NOT TARGET sparkprof_plugin_jar)
  return()
endif()
set(image_dir ${CMAKE_BINARY_DIR}/image)
file(STRINGS ${PROJECT_SOURCE_DIR}/spark-plugin/pom.xml image_version
  REGEX "^  <version>[^<]+</version>" LIMIT_COUNT 1)
string(REGEX REPLACE ".*<version>([^<]+)</version>.*" "\\1" image_version "${image_version}")
set(image_archive ${image_dir}/sparkprof-files-${image_version}.oci.tar)

add_test(NAME image_build
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/image/image_build_test.py
    --build-dir ${CMAKE_BINARY_DIR} --out ${image_dir})
set_tests_properties(image_build PROPERTIES
  LABELS image TIMEOUT 300 SKIP_RETURN_CODE 77 FIXTURES_SETUP sparkprof_image)
add_test(NAME image_init_container
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/image/init_container.py
    --archive ${image_archive} --dest ${CMAKE_CURRENT_BINARY_DIR}/image/init-container)
set_tests_properties(image_init_container PROPERTIES
  LABELS image TIMEOUT 120 SKIP_RETURN_CODE 77 FIXTURES_REQUIRED sparkprof_image)

if(NOT DEFINED SPARKPROF_DEMO_JAR OR NOT TARGET sparkprof)
  return()
endif()
find_program(SPARKPROF_FLATC flatc)
foreach(version IN LISTS SPARKPROF_SPARK_VERSIONS)
  set(name e2e_image_spark_${version})
  add_test(NAME ${name}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/image/run_image_spark.py
      --archive ${image_archive} --work-dir ${CMAKE_CURRENT_BINARY_DIR}/image/spark-${version} --
      --spark-home ${SPARKPROF_SPARK_ROOT}/${version}/home
      --demo-jar ${SPARKPROF_DEMO_JAR}
      --sparkprof $<TARGET_FILE:sparkprof>
      --flatc ${SPARKPROF_FLATC})
  # One at a time, like the other real-Spark tests (five JVMs and Prometheus each).
  set_tests_properties(${name} PROPERTIES
    LABELS "e2e;jvm;spark;image_spark" TIMEOUT 600 SKIP_RETURN_CODE 77 RUN_SERIAL TRUE
    FIXTURES_REQUIRED sparkprof_image)
endforeach()
