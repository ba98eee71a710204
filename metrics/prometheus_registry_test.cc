#include "metrics/prometheus_registry.h"

#include <gtest/gtest.h>

namespace sparkprof::metrics {
namespace {

// The driver's exposition, exactly: help escaped, the application's labels joined onto every
// series (a series' own label wins), series in label order, histograms as prometheus-cpp writes
// them (count, sum, then the buckets).
TEST(PrometheusRegistryTest, CommonLabelsJoinEverySeriesInLabelOrder) {
  PrometheusRegistry registry;
  auto tasks = registry.AddCounter("tasks_total", "Tasks\nby kind \\ stage.");
  auto info = registry.AddGauge("app_info", "The application.");
  auto durations = registry.AddHistogram("d_seconds", "Durations.", {1});
  ASSERT_TRUE(tasks.ok() && info.ok() && durations.ok());
  for (const char* kind : {"write", "compute", "shuffle"}) (*tasks)->Add({{"kind", kind}});
  prometheus::Counter& compute = (*tasks)->Add({{"kind", "compute"}});
  compute.Increment(2);
  compute.Increment(-5);  // ignored: counters only go up
  (*info)->Add({{"application_id", "own"}}).Set(1);
  (*durations)->Add().Observe(0.5);
  registry.SetCommonLabels({{"application_name", "etl \"nightly\"\n"},
                            {"application_id", "app-1"},
                            {"bad name", "dropped"}});
  const std::string app = "application_id=\"app-1\",application_name=\"etl \\\"nightly\\\"\\n\"";
  EXPECT_EQ(registry.Render(),
            "# HELP tasks_total Tasks\\nby kind \\\\ stage.\n"
            "# TYPE tasks_total counter\n"
            "tasks_total{" +
                app +
                ",kind=\"compute\"} 2\n"
                "tasks_total{" +
                app +
                ",kind=\"shuffle\"} 0\n"
                "tasks_total{" +
                app +
                ",kind=\"write\"} 0\n"
                "# HELP app_info The application.\n"
                "# TYPE app_info gauge\n"
                "app_info{application_id=\"own\",application_name=\"etl \\\"nightly\\\"\\n\"} 1\n"
                "# HELP d_seconds Durations.\n"
                "# TYPE d_seconds histogram\n"
                "d_seconds_count{" +
                app +
                "} 1\n"
                "d_seconds_sum{" +
                app +
                "} 0.5\n"
                "d_seconds_bucket{" +
                app +
                ",le=\"1\"} 1\n"
                "d_seconds_bucket{" +
                app + ",le=\"+Inf\"} 1\n");
  registry.SetCommonLabels({});
  EXPECT_NE(registry.Render().find("tasks_total{kind=\"compute\"} 2\n"), std::string::npos);
}

// Prometheus rejects a whole scrape for one malformed UTF-8 byte in a label (issue 15: an emoji
// in spark.app.name as JNI's modified UTF-8). Well-formed text, emoji included, passes unchanged.
TEST(PrometheusRegistryTest, LabelValuesAreAlwaysValidUtf8) {
  PrometheusRegistry registry;
  auto counter = registry.AddCounter("x_total", "X.");
  ASSERT_TRUE(counter.ok());
  const std::string emoji = "caf\xc3\xa9 \xf0\x9f\x98\x80";
  const std::string modified_utf8_emoji = "\xed\xa0\xbd\xed\xb8\x80";  // two surrogates
  const std::string replacement = "\xef\xbf\xbd";
  (*counter)->Add({{"app", emoji}}).Increment();
  (*counter)->Add({{"app", modified_utf8_emoji}}).Increment();
  (*counter)->Add({{"app", "a\xff\xc0\x80z\xf0\x9f"}}).Increment();
  registry.SetCommonLabels({{"application_name", "\xed\xa0\xbd!"}});
  std::string text = registry.Render();
  EXPECT_NE(text.find("app=\"" + emoji + "\""), std::string::npos) << text;
  std::string six_replacements;
  for (int i = 0; i < 6; ++i) six_replacements += replacement;
  EXPECT_NE(text.find("app=\"" + six_replacements + "\""), std::string::npos) << text;
  EXPECT_NE(text.find("app=\"a" + replacement + replacement + replacement + "z" + replacement +
                      replacement + "\""),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("application_name=\"" + replacement + replacement + replacement + "!\""),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("\xed\xa0"), std::string::npos);
}

TEST(PrometheusRegistryTest, RefusesBadOrRepeatedFamilies) {
  PrometheusRegistry registry;
  EXPECT_TRUE(registry.AddGauge("ok:name_1", "x").ok());
  const std::pair<const char*, int> refused[] = {
      {"1bad", 0}, {"has space", 1}, {"ok:name_1", 0}, {"ok:name_1", 1}};
  for (const auto& [name, kind] : refused) {
    const bool added =
        kind == 0 ? registry.AddCounter(name, "x").ok() : registry.AddGauge(name, "x").ok();
    EXPECT_FALSE(added) << name;
  }
  EXPECT_FALSE(registry.AddHistogram("h", "x", {1, 1}).ok());
}

// The driver learns its application id after the endpoint is up: with the hold, nothing is
// served until then; the collect callbacks run before every exposition (they may set the labels).
TEST(PrometheusRegistryTest, HoldsTheExpositionUntilTheApplicationIsKnown) {
  PrometheusRegistry registry;
  auto jobs = registry.AddCounter("jobs_total", "Jobs.");
  ASSERT_TRUE(jobs.ok());
  int collections = 0;
  registry.AddCollectCallback([&] {
    (*jobs)->Add({}).Increment();
    if (++collections == 2) registry.SetCommonLabels({{"application_id", "app-1"}});
  });
  registry.HoldUntilCommonLabels(true);
  EXPECT_EQ(registry.Render(), "");
  EXPECT_EQ(collections, 0);
  EXPECT_EQ(registry.Render(), "");
  registry.SetCommonLabels({{"application_id", "app-0"}});
  EXPECT_NE(registry.Render().find("jobs_total{application_id=\"app-0\"} 1"), std::string::npos);
  EXPECT_NE(registry.Render().find("jobs_total{application_id=\"app-1\"} 2"), std::string::npos);
  registry.HoldUntilCommonLabels(false);
  registry.SetCommonLabels({});
  EXPECT_NE(registry.Render().find("jobs_total 3"), std::string::npos);
}

}  // namespace
}  // namespace sparkprof::metrics
