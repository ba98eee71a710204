// The dashboards' context series: phase timeline, Airflow info, executor lifecycle and peaks.
#include "driver-aggregator/run_context_metrics.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "driver-aggregator/executor_metrics.h"

namespace sparkprof::driver {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

TEST(RunContextMetricsTest, TraceIdOfReadsW3cTraceparentsOnly) {
  EXPECT_EQ(TraceIdOf("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"),
            "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(TraceIdOf("00-00000000000000000000000000000000-00f067aa0ba902b7-01"), "");
  EXPECT_EQ(TraceIdOf("00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01"), "");
  EXPECT_EQ(TraceIdOf("garbage"), "");
}

TEST(RunContextMetricsTest, AirflowContextPrefersSparkPropertiesAndCleansValues) {
  std::map<std::string, std::string> env = {
      {"AIRFLOW_CTX_DAG_ID", "nightly_etl"},
      {"AIRFLOW_CTX_TASK_ID", "env_task"},
      {"AIRFLOW_CTX_DAG_RUN_ID", "scheduled__2026-11-24"},
      {"AIRFLOW_CTX_TRY_NUMBER", "2"},
      {"TRACEPARENT", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}};
  auto getenv = [&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  AirflowContext context =
      ReadAirflowContext({{"spark.sparkprof.airflow.taskId", "load\n\x1b[31mred"},
                          {"spark.sparkprof.airflow.dagId", std::string(300, 'd')}},
                         getenv);
  EXPECT_EQ(context.dag_id, std::string(200, 'd'));
  EXPECT_EQ(context.task_id, "load[31mred");
  EXPECT_EQ(context.run_id, "scheduled__2026-11-24");
  EXPECT_EQ(context.try_number, "2");
  EXPECT_EQ(context.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_TRUE(ReadAirflowContext({}, [](const char*) -> const char* { return nullptr; }).empty());
}

TEST(RunContextMetricsTest, PhaseTimelineMarksTheGrowingPhaseAndItsInterval) {
  metrics::PrometheusRegistry registry;
  RunContextMetrics metrics;
  ASSERT_TRUE(metrics.Register(registry).ok());
  diagnosis::PhaseBreakdown phases;
  phases.wall_ms = 4000;
  phases.resource_wait_ms = 4000;
  metrics.UpdatePhases(phases, 1'000'004'500);  // started at 1,000,000.5 s
  std::string text = registry.Render();
  EXPECT_TRUE(Has(text, "spark_phase_active{phase=\"resource_wait\"} 1")) << text;
  EXPECT_TRUE(Has(text, "spark_phase_active{phase=\"compute\"} 0")) << text;
  EXPECT_TRUE(Has(text, "spark_phase_start_timestamp_seconds{phase=\"resource_wait\"} 1000000.5"))
      << text;
  EXPECT_EQ(text.find("spark_phase_start_timestamp_seconds{phase=\"compute\"}"), std::string::npos);

  phases.wall_ms = 10000;
  phases.resource_wait_ms = 5000;
  phases.compute_ms = 5000;  // 1 s more wait, 5 s of compute since the last refresh
  metrics.UpdatePhases(phases, 1'000'010'500);
  text = registry.Render();
  EXPECT_TRUE(Has(text, "spark_phase_active{phase=\"compute\"} 1")) << text;
  EXPECT_TRUE(Has(text, "spark_phase_active{phase=\"resource_wait\"} 0")) << text;
  EXPECT_TRUE(Has(text, "spark_phase_start_timestamp_seconds{phase=\"compute\"} 1000004.5"))
      << text;
  EXPECT_TRUE(Has(text, "spark_phase_end_timestamp_seconds{phase=\"resource_wait\"} 1000010.5"))
      << text;
}

TEST(RunContextMetricsTest, AirflowInfoIsOneSeriesSetOnce) {
  metrics::PrometheusRegistry registry;
  RunContextMetrics metrics;
  ASSERT_TRUE(metrics.Register(registry).ok());
  metrics.UpdateAirflow({});
  EXPECT_EQ(registry.Render().find("spark_airflow_info{"), std::string::npos);
  metrics.UpdateAirflow({"dag", "task", "run", "1", ""});
  metrics.UpdateAirflow({"other", "task", "run", "1", ""});
  std::string text = registry.Render();
  EXPECT_TRUE(Has(text,
                  "spark_airflow_info{dag_id=\"dag\",run_id=\"run\",task_id=\"task\","
                  "trace_id=\"\",try_number=\"1\"} 1"))
      << text;
  EXPECT_EQ(text.find("dag_id=\"other\""), std::string::npos);
}

TEST(ExecutorMetricsTest, LifecyclePeaksAndDurationsWithACappedExecutorLabel) {
  metrics::PrometheusRegistry registry;
  ExecutorMetrics metrics(2);
  ASSERT_TRUE(metrics.Register(registry).ok());
  LiveSnapshot snapshot;
  for (const char* id : {"1", "2", "3"}) {
    ExecutorSnapshot& executor = snapshot.executors.emplace_back();
    executor.executor_id = id;
    executor.peaks.present = true;
    executor.peaks.jvm_heap_memory_bytes = 100 * (id[0] - '0');
    executor.peak_task_execution_memory_bytes = 7;
  }
  snapshot.executors[1].removed = true;
  snapshot.executors[1].removed_reason = "Container killed by YARN for exceeding memory limits";
  snapshot.executors[2].removed = true;
  snapshot.executors[2].removed_reason = "Executor killed by driver.";
  CompletedStage stage;
  stage.successful_task_ms = {200, 3000, 40};
  stage.successful_task_executor_ids = {"1", "3", "3"};
  snapshot.newly_completed.push_back(stage);
  metrics.Update(snapshot);
  metrics.Update(snapshot);  // the same executors again: counted once
  std::string text = registry.Render();
  EXPECT_TRUE(Has(text, "spark_executors_added_total 3")) << text;
  EXPECT_TRUE(Has(text, "spark_executors_removed_total{reason=\"memory\"} 1")) << text;
  EXPECT_TRUE(Has(text, "spark_executors_removed_total{reason=\"released\"} 1")) << text;
  EXPECT_TRUE(Has(text, "spark_executors_removed_total{reason=\"node\"} 0")) << text;
  EXPECT_TRUE(
      Has(text, "spark_executor_peak_memory_bytes{area=\"jvm_heap\",executor_id=\"2\"} 200"))
      << text;
  EXPECT_TRUE(
      Has(text, "spark_executor_peak_memory_bytes{area=\"jvm_heap\",executor_id=\"other\"} 300"))
      << text;
  EXPECT_TRUE(Has(text, "spark_executor_task_duration_seconds_count{executor_id=\"other\"} 4"))
      << text;  // executor 3 is past the cap of 2 (the same stage was passed twice)
  EXPECT_TRUE(Has(text, "spark_executor_task_duration_seconds_count{executor_id=\"1\"} 2")) << text;
}

}  // namespace
}  // namespace sparkprof::driver
