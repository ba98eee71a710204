# The workload corpus (tests/workloads/README.md; included from tests/CMakeLists.txt):
#   workloads_accuracy       sparkprof's findings on the committed fixtures against manifest.json
#                            (per-rule precision and recall printed; seconds; label workloads);
#   workloads_accuracy_docs  docs/diagnosis-accuracy.md is what accuracy.py --write would write;
#   workloads_rerun_<ver>    every workload re-run on a fresh standalone cluster of that pinned
#                            Spark release, the same checks on the fresh logs (~25 min each;
#                            labels nightly;spark;jvm: `ctest -L nightly`; scripts/test.sh leaves
#                            them out);
#   whatif_validation        the what-if simulator's predictions from each validation workload's
#                            base run against the real runs at other settings (validation/; fails
#                            when the median error exceeds 15%; seconds; label workloads);
#   whatif_validation_rerun_<ver>  the validation suite re-run on fresh clusters, then the same
#                            check on the fresh logs (~30 min; labels nightly;spark;jvm).
# Uses, when already set: SPARKPROF_SPARK_ROOT and SPARKPROF_SPARK_VERSIONS (see
# tests/e2e/real_spark_tests.cmake) and the CLI target sparkprof. Each test exits 77 (skipped)
# without fixtures, or without its Spark release, its venv Python or java.
find_package(Python3 COMPONENTS Interpreter)
if(NOT Python3_Interpreter_FOUND OR NOT TARGET sparkprof)
  return()
endif()
set(workloads_dir ${CMAKE_CURRENT_LIST_DIR})

add_test(NAME workloads_accuracy
  COMMAND ${Python3_EXECUTABLE} ${workloads_dir}/accuracy.py --sparkprof $<TARGET_FILE:sparkprof>)
add_test(NAME workloads_accuracy_docs
  COMMAND ${Python3_EXECUTABLE} ${workloads_dir}/accuracy.py --sparkprof $<TARGET_FILE:sparkprof>
    --check-docs ${PROJECT_SOURCE_DIR}/docs/diagnosis-accuracy.md)
add_test(NAME whatif_validation
  COMMAND ${Python3_EXECUTABLE} ${workloads_dir}/validation/validate.py
    --sparkprof $<TARGET_FILE:sparkprof>)
set_tests_properties(workloads_accuracy workloads_accuracy_docs whatif_validation PROPERTIES
  LABELS workloads TIMEOUT 300 SKIP_RETURN_CODE 77)

if(NOT DEFINED SPARKPROF_SPARK_VERSIONS)
  execute_process(COMMAND ${PROJECT_SOURCE_DIR}/scripts/spark-versions.sh
    OUTPUT_VARIABLE SPARKPROF_SPARK_VERSIONS OUTPUT_STRIP_TRAILING_WHITESPACE)
  string(REPLACE "\n" ";" SPARKPROF_SPARK_VERSIONS "${SPARKPROF_SPARK_VERSIONS}")
endif()
set(workloads_spark_root ${CMAKE_BINARY_DIR}/spark)
if(DEFINED SPARKPROF_SPARK_ROOT)
  set(workloads_spark_root ${SPARKPROF_SPARK_ROOT})
endif()
foreach(version IN LISTS SPARKPROF_SPARK_VERSIONS)
  add_test(NAME workloads_rerun_${version}
    COMMAND ${Python3_EXECUTABLE} ${workloads_dir}/rerun.py
      --spark-home ${workloads_spark_root}/${version}/home
      --python ${workloads_spark_root}/${version}/venv/bin/python
      --sparkprof $<TARGET_FILE:sparkprof>)
  add_test(NAME whatif_validation_rerun_${version}
    COMMAND ${Python3_EXECUTABLE} ${workloads_dir}/validation/run_suite.py
      --spark-home ${workloads_spark_root}/${version}/home
      --python ${workloads_spark_root}/${version}/venv/bin/python
      --validate $<TARGET_FILE:sparkprof>)
  # One Spark application at a time on the machine: each workload runs its own cluster.
  set_tests_properties(workloads_rerun_${version} whatif_validation_rerun_${version} PROPERTIES
    LABELS "nightly;spark;jvm" TIMEOUT 5400 SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
endforeach()
