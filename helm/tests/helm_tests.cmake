# The Helm chart, its alert rules and dashboards (helm/). Included at the end of tests/CMakeLists.txt.
# Each test skips (exit 77) when its tool is missing: helm comes from scripts/install-helm.sh,
# promtool from Debian's prometheus package.
set(SPARKPROF_HELM_DIR ${PROJECT_SOURCE_DIR}/helm)
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  # Generated rules and dashboards are up to date and use only metric names docs/metrics.md defines.
  add_test(NAME helm_generated_test
           COMMAND ${Python3_EXECUTABLE} ${SPARKPROF_HELM_DIR}/generator/generate.py --check)
  set_tests_properties(helm_generated_test PROPERTIES LABELS helm TIMEOUT 60)
endif()
add_test(NAME helm_promtool_rules_test COMMAND bash ${SPARKPROF_HELM_DIR}/tests/promtool_rules_test.sh)
set_tests_properties(helm_promtool_rules_test PROPERTIES LABELS helm SKIP_RETURN_CODE 77 TIMEOUT 60)
add_test(NAME helm_chart_test COMMAND bash ${SPARKPROF_HELM_DIR}/tests/helm_chart_test.sh)
set_tests_properties(helm_chart_test PROPERTIES LABELS helm SKIP_RETURN_CODE 77 TIMEOUT 120)
if(Python3_Interpreter_FOUND)
  # Every value in values.yaml has its comment (STYLE.md, point 17).
  add_test(NAME helm_values_comments_test
           COMMAND ${Python3_EXECUTABLE} ${SPARKPROF_HELM_DIR}/tests/values_comments_test.py)
  set_tests_properties(helm_values_comments_test PROPERTIES LABELS helm TIMEOUT 30)
endif()
if(Python3_Interpreter_FOUND)
  # The dashboards against grafana-foundation-sdk's dashboard and panel models (no Grafana server
  # can run here); the SDK's environment comes from scripts/install-helm.sh.
  add_test(NAME helm_dashboards_model_test
           COMMAND ${Python3_EXECUTABLE} ${SPARKPROF_HELM_DIR}/tests/dashboards_model_test.py)
  set_tests_properties(helm_dashboards_model_test PROPERTIES
    LABELS helm SKIP_RETURN_CODE 77 TIMEOUT 60)
endif()
if(Python3_Interpreter_FOUND)
  # Every rendered manifest, the spark-submit pod templates and a SparkApplication for the Spark
  # Operator against the Kubernetes, Prometheus Operator and Spark Operator schemas (kubeconform
  # -strict; scripts/install-kubeconform.sh installs the validator and the pinned schemas).
  add_test(NAME helm_k8s_schema_test
           COMMAND ${Python3_EXECUTABLE} ${SPARKPROF_HELM_DIR}/tests/validate_manifests.py)
  set_tests_properties(helm_k8s_schema_test PROPERTIES LABELS helm SKIP_RETURN_CODE 77 TIMEOUT 120)
endif()
if(Python3_Interpreter_FOUND AND DEFINED SPARKPROF_SPARK_ROOT)
  # The pod templates as Spark itself loads them (KubernetesUtils.loadPodFromTemplate, what
  # spark-submit --master k8s:// does with podTemplateFile), once per pinned Spark release.
  add_test(NAME helm_spark_pod_templates_test
           COMMAND ${Python3_EXECUTABLE} ${SPARKPROF_HELM_DIR}/tests/spark_pod_templates_test.py
                   --spark-root ${SPARKPROF_SPARK_ROOT})
  set_tests_properties(helm_spark_pod_templates_test PROPERTIES
    LABELS "helm;jvm" SKIP_RETURN_CODE 77 TIMEOUT 120)
endif()
