// The price catalogue (the built-in one and hostile files), cost arithmetic on a hand-written log
// whose answer is known, and the right-sizing frontier on real logs: monotone, the recommendation
// within its slowdown and never dearer than the current cluster.
#include "analyzer/cost/cost.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <optional>
#include <string>

#include "analyzer/report/render.h"
#include "analyzer/testing/analysis_test_util.h"

namespace sparkprof::cost {
namespace {

using test_util::AnalyzeShared;
using test_util::AnalyzeText;

TEST(Catalogue, BuiltInParsesWithASourceAndDateForEveryPrice) {
  const PriceCatalogue& c = BuiltinCatalogue();
  ASSERT_GE(c.instances.size(), 40u);
  EXPECT_EQ(c.currency, "USD");
  for (const char* cloud : {"aws", "gcp", "azure"}) {
    EXPECT_GE(c.OfCloud(cloud).size(), 8u) << cloud;
    ASSERT_NE(c.SpotOf(cloud), nullptr) << cloud;
  }
  for (const InstanceType& type : c.instances) {
    EXPECT_FALSE(type.source.empty()) << type.name;
    EXPECT_FALSE(type.as_of.empty()) << type.name;
    EXPECT_FALSE(type.region.empty()) << type.name;
    EXPECT_GT(type.on_demand_per_hour, 0) << type.name;
  }
  const InstanceType* r5 = c.Find("r5.2xlarge");
  ASSERT_NE(r5, nullptr);
  EXPECT_EQ(r5->vcpus, 8);
  EXPECT_EQ(r5->memory_gib, 64);
  EXPECT_DOUBLE_EQ(r5->on_demand_per_hour, 0.504);
}

TEST(Catalogue, ErrorsNameTheFileTheEntryAndTheField) {
  PriceCatalogue c;
  std::string error;
  EXPECT_FALSE(ParseCatalogue("{", "mine.json", c, error));
  EXPECT_NE(error.find("mine.json: not valid JSON"), std::string::npos) << error;
  EXPECT_FALSE(ParseCatalogue(R"({"schema":"other","instances":[]})", "mine.json", c, error));
  EXPECT_NE(error.find("sparkprof.prices/v1"), std::string::npos) << error;
  const std::string head = R"({"schema":"sparkprof.prices/v1","instances":[)";
  const std::string good = R"({"cloud":"aws","name":"a","vcpus":4,"memory_gib":16,)"
                           R"("on_demand_per_hour":0.2})";
  EXPECT_TRUE(ParseCatalogue(head + good + "]}", "mine.json", c, error)) << error;
  EXPECT_FALSE(
      ParseCatalogue(head + good + R"(,{"cloud":"aws","name":"b","vcpus":4,"memory_gib":16}]})",
                     "mine.json", c, error));
  EXPECT_EQ(error, "mine.json: instances[1].on_demand_per_hour: missing");
  EXPECT_FALSE(ParseCatalogue(head + R"({"cloud":"aws","name":"b","vcpus":-4,"memory_gib":16,)"
                                     R"("on_demand_per_hour":1}]})",
                              "mine.json", c, error));
  EXPECT_NE(error.find("instances[0].vcpus: out of range"), std::string::npos) << error;
  EXPECT_FALSE(ParseCatalogue(head + R"({"cloud":"aws","name":"b","vcpus":4.5,"memory_gib":16,)"
                                     R"("on_demand_per_hour":1}]})",
                              "mine.json", c, error));
  EXPECT_NE(error.find("not a whole number"), std::string::npos) << error;
  EXPECT_FALSE(ParseCatalogue(head + R"({"cloud":"aws","name":"b","vcpus":4,"memory_gib":16,)"
                                     R"("on_demand_per_hour":1e400}]})",
                              "mine.json", c, error));
  std::string huge(kMaxCatalogueBytes + 1, ' ');
  EXPECT_FALSE(ParseCatalogue(huge, "big.json", c, error));
  EXPECT_NE(error.find("larger than"), std::string::npos);
  EXPECT_FALSE(LoadCatalogue("/nonexistent/prices.json", c, error));
  EXPECT_FALSE(LoadCatalogue("/proc/self", c, error));
  EXPECT_NE(error.find("not a regular file"), std::string::npos) << error;
}

// Issue 33: a price file's strings reach terminals and the text report as they are, so a
// terminal escape sequence (or a C1 CSI, a bidirectional override, invalid UTF-8) in any of them
// is refused, naming the field.
TEST(Catalogue, StringsThatWouldActOnATerminalAreRefused) {
  PriceCatalogue c;
  std::string error;
  const std::string head = R"({"schema":"sparkprof.prices/v1","instances":[)";
  auto instance = [](const std::string& name, const std::string& region) {
    return R"({"cloud":"aws","name":")" + name + R"(","region":")" + region +
           R"(","vcpus":4,"memory_gib":16,"on_demand_per_hour":0.2})";
  };
  EXPECT_TRUE(
      ParseCatalogue(head + instance("r5.2xlarge \u00e9", "eu-west-3") + "]}", "p.json", c, error))
      << error;
  for (const std::string hostile :
       {R"(a\u001b]0;owned\u0007)", R"(a\u001b[2J)", "a\u009b31m", "a\u202eb", R"(a\n)"}) {
    SCOPED_TRACE(hostile);
    EXPECT_FALSE(ParseCatalogue(head + instance(hostile, "r") + "]}", "p.json", c, error));
    EXPECT_EQ(error.find("p.json: instances[0].name: holds a control character"), 0u) << error;
    EXPECT_FALSE(ParseCatalogue(head + instance("n", hostile) + "]}", "p.json", c, error));
    EXPECT_NE(error.find("instances[0].region: holds"), std::string::npos) << error;
  }
  EXPECT_FALSE(ParseCatalogue(head + instance("n", "r\xff") + "]}", "p.json", c, error));
  EXPECT_FALSE(ParseCatalogue(R"({"schema":"sparkprof.prices/v1","currency":"U\u001bD",)"
                              R"("instances":[]})",
                              "p.json", c, error));
  EXPECT_NE(error.find("\"currency\" holds a control character"), std::string::npos) << error;
}

// Two executors of 4 cores, 4 GiB heap, alive for one hour (and 30 min), on a standalone cluster:
// a log whose cost can be worked out by hand.
std::string OneHourLog(const std::string& extra_properties = "") {
  std::string log;
  auto add = [&](const std::string& line) { log += line + "\n"; };
  add(R"({"Event":"SparkListenerLogStart","Spark Version":"3.5.9"})");
  add(R"({"Event":"SparkListenerEnvironmentUpdate","JVM Information":{},"Spark Properties":{)"
      R"("spark.master":"spark://h:7077","spark.executor.memory":"4g","spark.driver.memory":"2g")" +
      extra_properties +
      R"(},"Hadoop Properties":{},"System Properties":{},)"
      R"("Classpath Entries":{}})");
  add(R"({"Event":"SparkListenerApplicationStart","App Name":"t","App ID":"app-1",)"
      R"("Timestamp":0,"User":"u"})");
  for (int e = 0; e < 2; ++e) {
    add(R"({"Event":"SparkListenerExecutorAdded","Timestamp":0,"Executor ID":")" +
        std::to_string(e) + R"(","Executor Info":{"Host":"h","Total Cores":4,"Log Urls":{}}})");
  }
  add(R"({"Event":"SparkListenerExecutorRemoved","Timestamp":1800000,"Executor ID":"1",)"
      R"("Removed Reason":"idle"})");
  add(R"({"Event":"SparkListenerApplicationEnd","Timestamp":3600000})");
  return log;
}

TEST(Cost, FlatRatesAreCoresAndMemoryTimesLifetimes) {
  report::Analysis a = AnalyzeText(OneHourLog());
  CostOptions options;
  options.price_per_core_hour = 0.04;
  options.price_per_gib_hour = 0.005;
  const RunCost c = ComputeCost(a.model, options);
  ASSERT_TRUE(c.available) << c.reason;
  // Executor: 4096 MiB heap + max(384, 409) MiB overhead = 4505 MiB; driver 2048 + 384 MiB.
  const double executor_gib = 4505.0 / 1024;
  EXPECT_NEAR(c.executor_shape.memory_gib, executor_gib, 1e-9);
  EXPECT_EQ(c.executor_shape.cores, 4);
  EXPECT_NEAR(c.executor_hours, 1.5, 1e-9);
  EXPECT_NEAR(c.executor_cost, 1.5 * (4 * 0.04 + executor_gib * 0.005), 1e-9);
  EXPECT_NEAR(c.driver_cost, 1 * (1 * 0.04 + 2432.0 / 1024 * 0.005), 1e-9);
  EXPECT_NEAR(c.total, c.executor_cost + c.driver_cost, 1e-12);
  EXPECT_TRUE(c.points.empty());
}

TEST(Cost, InstancesAreInferredFromTheExecutorsShapeOrGiven) {
  report::Analysis a = AnalyzeText(OneHourLog());
  RunCost c = ComputeCost(a.model);
  ASSERT_TRUE(c.available) << c.reason;
  EXPECT_EQ(c.cloud, "aws");
  EXPECT_NE(c.cloud_source.find("not seen in the log"), std::string::npos);
  // 4 cores, 4.4 GiB: the cheapest AWS type with 4 vCPUs and >= 4.4 GiB is m6g.xlarge.
  EXPECT_EQ(c.executor_instance, "m6g.xlarge");
  EXPECT_NEAR(c.executor_cost, 1.5 * 0.154, 1e-9);

  CostOptions given;
  given.instance_type = "r5.2xlarge";  // 8 vCPUs, 64 GiB: two 4-core executors per instance
  c = ComputeCost(a.model, given);
  ASSERT_TRUE(c.available) << c.reason;
  EXPECT_EQ(c.executors_per_instance, 2);
  EXPECT_NEAR(c.executor_cost, 1.5 * 0.504 / 2, 1e-9);
  EXPECT_EQ(c.executor_instance_source, "given");

  given.instance_type = "z9.huge";
  c = ComputeCost(a.model, given);
  EXPECT_FALSE(c.available);
  EXPECT_NE(c.reason.find("z9.huge is not in the price catalogue"), std::string::npos);
}

// Issue 29: what a memory setting costs, priced like the run (same lifetimes).
TEST(SettingsCost, FlatRatesPriceTheNewMemory) {
  report::Analysis a = AnalyzeText(OneHourLog());
  CostOptions options;
  options.price_per_core_hour = 0.04;
  options.price_per_gib_hour = 0.005;
  const SettingsCost c = PriceSettings(a.model, options, {{"spark.executor.memory", "8g"}});
  ASSERT_TRUE(c.available) << c.reason;
  const double before_gib = 4505.0 / 1024;
  const double after_gib = (8192.0 + 819) / 1024;  // overhead max(384, 10% of 8192 = 819)
  EXPECT_NEAR(c.executor_memory_gib_before, before_gib, 1e-9);
  EXPECT_NEAR(c.executor_memory_gib_after, after_gib, 1e-9);
  EXPECT_NEAR(c.after - c.before, 1.5 * (after_gib - before_gib) * 0.005, 1e-9);
  EXPECT_NEAR(c.before, ComputeCost(a.model, options).total, 1e-12);
}

TEST(SettingsCost, AnInferredTypeIsInferredAgainAndAGivenOneMustHoldTheProcess) {
  report::Analysis a = AnalyzeText(OneHourLog());
  // 20g heap + 2g overhead: no longer an m6g.xlarge (16 GiB); a dearer 4-vCPU type.
  SettingsCost c = PriceSettings(a.model, {}, {{"spark.executor.memory", "20g"}});
  ASSERT_TRUE(c.available) << c.reason;
  EXPECT_EQ(c.executor_instance_before, "m6g.xlarge");
  EXPECT_NE(c.executor_instance_after, "m6g.xlarge");
  EXPECT_GT(c.after, c.before);

  CostOptions given;
  given.instance_type = "r5.2xlarge";  // 8 vCPUs, 64 GiB: two 4.4 GiB executors, one of 44 GiB
  c = PriceSettings(a.model, given, {{"spark.executor.memory", "40g"}});
  ASSERT_TRUE(c.available) << c.reason;
  EXPECT_EQ(c.executors_per_instance_before, 2);
  EXPECT_EQ(c.executors_per_instance_after, 1);
  EXPECT_NEAR(c.after - c.before, 1.5 * 0.504 / 2, 1e-9);

  c = PriceSettings(a.model, given, {{"spark.executor.memory", "80g"}});
  EXPECT_FALSE(c.available);
  EXPECT_NE(c.reason.find("does not fit on r5.2xlarge"), std::string::npos) << c.reason;
}

// The report prices a finding's memory setting with the run's own cost, in every format.
TEST(SettingsCost, AKillsMemoryFixIsPricedInTheReport) {
  std::optional<report::Analysis> a =
      test_util::AnalyzeFile(std::filesystem::path(SPARKPROF_SOURCE_DIR) /
                                 "tests/workloads/fixtures/3.5.9/executor_oom.zstd",
                             "executor_oom");
  ASSERT_TRUE(a.has_value());
  ASSERT_TRUE(a->cost.available) << a->cost.reason;
  int priced = 0;
  for (const diagnosis::Finding& f : a->findings) {
    for (const diagnosis::Recommendation& r : f.recommendations) {
      if (!r.price.priced) continue;
      ++priced;
      EXPECT_EQ(r.config_key, "spark.executor.memory");
      EXPECT_NE(r.price.words.find("each executor asks"), std::string::npos) << r.price.words;
      EXPECT_NEAR(r.price.before, a->cost.total, 1e-9);
    }
  }
  EXPECT_GT(priced, 0);
  const std::string json = report::RenderSection("json", *a);
  EXPECT_NE(json.find("\"priced\": true"), std::string::npos);
  for (const char* format : {"text", "md"}) {
    EXPECT_NE(report::RenderSection(format, *a).find("cost: the run would cost"), std::string::npos)
        << format;
  }
  EXPECT_NE(report::RenderReport("html", {&*a}).find("cost: the run would cost"),
            std::string::npos);
}

TEST(Cost, HostileMemoryPropertiesStayFinite) {
  for (const std::string props :
       {R"(,"spark.executor.memory":"99999999999999999999t")",
        R"(,"spark.executor.memoryOverhead":"-5g","spark.executor.memoryOverheadFactor":"nan")",
        R"(,"spark.memory.offHeap.enabled":"true","spark.memory.offHeap.size":"1e300")"}) {
    report::Analysis a = AnalyzeText(OneHourLog(props));
    const RunCost c = ComputeCost(a.model);
    EXPECT_TRUE(std::isfinite(c.total)) << props;
    EXPECT_GE(c.total, 0) << props;
    EXPECT_GT(c.executor_shape.memory_gib, 0) << props;
  }
}

// The frontier on real logs: monotone (slower points on it are cheaper), the current cluster
// among the points, the recommendation no dearer than it and within the allowed slowdown.
void CheckFrontier(const RunCost& c) {
  ASSERT_TRUE(c.available) << c.reason;
  if (c.points.empty()) {
    EXPECT_FALSE(c.frontier_note.empty());
    return;
  }
  ASSERT_GE(c.current, 0);
  ASSERT_GE(c.recommended, 0);
  double last_cost = INFINITY;
  int64_t last_ms = -1;
  for (const FrontierPoint& p : c.points) {
    EXPECT_GE(p.predicted_wall_ms, last_ms);
    last_ms = p.predicted_wall_ms;
    if (!p.on_frontier) continue;
    EXPECT_LT(p.cost, last_cost);
    last_cost = p.cost;
  }
  const FrontierPoint& now = c.points[c.current];
  const FrontierPoint& rec = c.points[c.recommended];
  EXPECT_LE(rec.cost, now.cost);
  EXPECT_LE(static_cast<double>(rec.predicted_wall_ms),
            static_cast<double>(now.predicted_wall_ms) * (1 + c.max_slowdown) + 1);
  EXPECT_NEAR(c.saving_fraction, 1 - rec.cost / now.cost, 1e-9);
  for (const FrontierPoint& p : c.points) {
    if (static_cast<double>(p.predicted_wall_ms) <=
        static_cast<double>(now.predicted_wall_ms) * (1 + c.max_slowdown)) {
      EXPECT_GE(p.cost, rec.cost - 1e-12) << "a cheaper point within the slowdown";
    }
  }
}

TEST(Frontier, MonotoneOnRealLogs) {
  int checked = 0;
  for (const char* label :
       {"NVIDIA+spark-rapids-tools/core/src/test/resources/spark-events-qualification/"
        "nds_q72_dataproc_2_2.zstd",
        "NVIDIA+spark-rapids-tools/core/src/test/resources/spark-events-qualification/"
        "nds_q88_photon_db_13_3.zstd"}) {
    auto a = AnalyzeShared(label);
    if (!a) continue;
    ++checked;
    SCOPED_TRACE(label);
    for (const auto& file : a->read.files) EXPECT_EQ(file.error, "") << file.file;
    CheckFrontier(a->cost);
    EXPECT_FALSE(a->cost.points.empty()) << a->cost.frontier_note;
  }
  if (checked == 0) GTEST_SKIP() << "shared event logs absent";
}

TEST(Frontier, DataprocIsPricedOnGcpAndDatabricksFromItsNodeTypes) {
  auto dataproc = AnalyzeShared(
      "NVIDIA+spark-rapids-tools/core/src/test/resources/spark-events-qualification/"
      "nds_q72_dataproc_2_2.zstd");
  auto databricks = AnalyzeShared(
      "NVIDIA+spark-rapids-tools/core/src/test/resources/spark-events-qualification/"
      "nds_q88_photon_db_13_3.zstd");
  if (!dataproc || !databricks) GTEST_SKIP() << "shared event logs absent";
  EXPECT_EQ(dataproc->cost.cloud, "gcp");
  EXPECT_EQ(databricks->cost.cloud, "aws");
  EXPECT_EQ(databricks->cost.cloud_source, "Databricks cluster tags");
  EXPECT_EQ(databricks->cost.executor_instance, "m6gd.2xlarge");
  EXPECT_EQ(databricks->cost.driver_instance, "m6gd.xlarge");
  EXPECT_EQ(databricks->cost.executors_per_instance, 1);

  CostOptions dbu;
  dbu.dbu_price = 0.15;
  dbu.dbus_per_instance_hour = 1.0;
  dbu.frontier = false;
  const RunCost with_dbus = ComputeCost(databricks->model, dbu);
  EXPECT_GT(with_dbus.dbus, 0);
  EXPECT_NEAR(with_dbus.dbu_cost, with_dbus.dbus * 0.15, 1e-9);
  EXPECT_NEAR(with_dbus.total, with_dbus.executor_cost + with_dbus.driver_cost + with_dbus.dbu_cost,
              1e-9);
}

TEST(Report, CostSectionInEveryFormat) {
  report::Analysis a = AnalyzeText(OneHourLog());
  for (const char* format : {"text", "md", "html", "json"}) {
    const std::string out = report::RenderReport(format, {&a});
    EXPECT_NE(out.find(std::string(format) == "json" ? "\"available\": true" : "Cost"),
              std::string::npos)
        << format;
    EXPECT_NE(out.find("m6g.xlarge"), std::string::npos) << format;
  }
}

}  // namespace
}  // namespace sparkprof::cost
