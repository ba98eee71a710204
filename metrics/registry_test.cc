#include "metrics/registry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace sparkprof::metrics {
namespace {

TEST(RegistryTest, CommonLabelsJoinEverySeriesAndOwnLabelsWin) {
  Registry registry;
  auto counter = registry.AddCounter("tasks_total", "Tasks.");
  ASSERT_TRUE(counter.ok());
  (*counter)->WithLabels({{"kind", "compute"}}).Increment(2);
  auto info = registry.AddGauge("app_info", "The application.");
  ASSERT_TRUE(info.ok());
  (*info)->WithLabels({{"application_id", "own"}}).Set(1);
  auto histogram = registry.AddHistogram("d_seconds", "Durations.", {1});
  ASSERT_TRUE(histogram.ok());
  (*histogram)->WithLabels().Observe(0.5);
  registry.SetCommonLabels({{"application_name", "etl \"nightly\"\n"},
                            {"application_id", "app-1"},
                            {"bad name", "dropped"}});
  EXPECT_EQ(
      registry.Render(),
      "# HELP tasks_total Tasks.\n"
      "# TYPE tasks_total counter\n"
      "tasks_total{application_id=\"app-1\",application_name=\"etl \\\"nightly\\\"\\n\","
      "kind=\"compute\"} 2\n"
      "# HELP app_info The application.\n"
      "# TYPE app_info gauge\n"
      "app_info{application_id=\"own\",application_name=\"etl \\\"nightly\\\"\\n\"} 1\n"
      "# HELP d_seconds Durations.\n"
      "# TYPE d_seconds histogram\n"
      "d_seconds_bucket{application_id=\"app-1\",application_name=\"etl \\\"nightly\\\"\\n\","
      "le=\"1\"} 1\n"
      "d_seconds_bucket{application_id=\"app-1\",application_name=\"etl \\\"nightly\\\"\\n\","
      "le=\"+Inf\"} 1\n"
      "d_seconds_sum{application_id=\"app-1\",application_name=\"etl \\\"nightly\\\"\\n\"} 0.5\n"
      "d_seconds_count{application_id=\"app-1\",application_name=\"etl \\\"nightly\\\"\\n\"} 1\n");
  registry.SetCommonLabels({});
  EXPECT_NE(registry.Render().find("tasks_total{kind=\"compute\"} 2\n"), std::string::npos);
}

TEST(RegistryTest, RendersCounterGaugeAndHistogramInTextFormat) {
  Registry registry;
  auto counter = registry.AddCounter("samples_total", "Samples taken.");
  ASSERT_TRUE(counter.ok());
  (*counter)->WithLabels({{"mode", "cpu"}}).Increment(3);
  auto gauge = registry.AddGauge("memory_bytes", "Native memory.");
  ASSERT_TRUE(gauge.ok());
  (*gauge)->WithLabels().Set(1024);
  auto histogram = registry.AddHistogram("pause_seconds", "GC pauses.", {0.01, 0.1});
  ASSERT_TRUE(histogram.ok());
  Histogram& pauses = (*histogram)->WithLabels();
  pauses.Observe(0.005);
  pauses.Observe(0.05);
  pauses.Observe(5);

  EXPECT_EQ(registry.Render(),
            "# HELP samples_total Samples taken.\n"
            "# TYPE samples_total counter\n"
            "samples_total{mode=\"cpu\"} 3\n"
            "# HELP memory_bytes Native memory.\n"
            "# TYPE memory_bytes gauge\n"
            "memory_bytes 1024\n"
            "# HELP pause_seconds GC pauses.\n"
            "# TYPE pause_seconds histogram\n"
            "pause_seconds_bucket{le=\"0.01\"} 1\n"
            "pause_seconds_bucket{le=\"0.1\"} 2\n"
            "pause_seconds_bucket{le=\"+Inf\"} 3\n"
            "pause_seconds_sum 5.055\n"
            "pause_seconds_count 3\n");
}

TEST(RegistryTest, EscapesHelpAndLabelValues) {
  Registry registry;
  auto counter = registry.AddCounter("x_total", "line1\nback\\slash \"quotes stay\"");
  ASSERT_TRUE(counter.ok());
  (*counter)->WithLabels({{"path", "a\\b\"c\nd"}}).Increment();
  std::string text = registry.Render();
  EXPECT_NE(text.find("# HELP x_total line1\\nback\\\\slash \"quotes stay\"\n"), std::string::npos);
  EXPECT_NE(text.find("x_total{path=\"a\\\\b\\\"c\\nd\"} 1\n"), std::string::npos);
}

// Prometheus rejects a whole scrape for one malformed UTF-8 byte in a label (issue 15: an emoji
// in spark.app.name as JNI's modified UTF-8). Well-formed text, emoji included, passes unchanged.
TEST(RegistryTest, LabelValuesAreAlwaysValidUtf8) {
  Registry registry;
  auto counter = registry.AddCounter("x_total", "X.");
  ASSERT_TRUE(counter.ok());
  const std::string emoji = "caf\xc3\xa9 \xf0\x9f\x98\x80";
  const std::string modified_utf8_emoji = "\xed\xa0\xbd\xed\xb8\x80";  // two surrogates
  const std::string replacement = "\xef\xbf\xbd";
  (*counter)->WithLabels({{"app", emoji}}).Increment();
  (*counter)->WithLabels({{"app", modified_utf8_emoji}}).Increment();
  (*counter)->WithLabels({{"app", "a\xff\xc0\x80z\xf0\x9f"}}).Increment();
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

TEST(RegistryTest, LabelsAreSortedAndChildrenReused) {
  Registry registry;
  auto counter = registry.AddCounter("c_total", "c");
  ASSERT_TRUE(counter.ok());
  Counter& a = (*counter)->WithLabels({{"b", "2"}, {"a", "1"}});
  Counter& b = (*counter)->WithLabels({{"a", "1"}, {"b", "2"}});
  EXPECT_EQ(&a, &b);
  a.Increment(-5);  // ignored: counters only go up
  b.Increment(0.5);
  EXPECT_NE(registry.Render().find("c_total{a=\"1\",b=\"2\"} 0.5\n"), std::string::npos);
}

TEST(RegistryTest, RejectsBadAndDuplicateNames) {
  Registry registry;
  EXPECT_FALSE(registry.AddCounter("1bad", "x").ok());
  EXPECT_FALSE(registry.AddGauge("has space", "x").ok());
  EXPECT_TRUE(registry.AddGauge("ok:name_1", "x").ok());
  EXPECT_FALSE(registry.AddCounter("ok:name_1", "x").ok());
  EXPECT_FALSE(registry.AddHistogram("h", "x", {1, 1}).ok());
  EXPECT_FALSE(IsValidLabelName("__reserved"));
  EXPECT_TRUE(IsValidLabelName("category"));
}

TEST(RegistryTest, FormatsSpecialValues) {
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatValue(std::nan("")), "NaN");
  EXPECT_EQ(FormatValue(0.1), "0.1");
  EXPECT_EQ(FormatValue(12345678901234.0), "12345678901234");
}

TEST(RegistryTest, CollectCallbackRunsBeforeRender) {
  Registry registry;
  auto gauge = registry.AddGauge("g", "g");
  ASSERT_TRUE(gauge.ok());
  int calls = 0;
  registry.AddCollectCallback([&] { (*gauge)->WithLabels().Set(++calls); });
  EXPECT_NE(registry.Render().find("g 1\n"), std::string::npos);
  EXPECT_NE(registry.Render().find("g 2\n"), std::string::npos);
}

TEST(RegistryTest, HoldUntilCommonLabelsServesNothingUnlabelled) {
  Registry registry;
  auto counter = registry.AddCounter("jobs_total", "Jobs.");
  ASSERT_TRUE(counter.ok());
  (*counter)->WithLabels().Increment();
  registry.HoldUntilCommonLabels(true);
  EXPECT_EQ(registry.Render(), "");
  registry.SetCommonLabels({{"application_id", "app-1"}});
  EXPECT_NE(registry.Render().find("jobs_total{application_id=\"app-1\"} 1"), std::string::npos);
  registry.HoldUntilCommonLabels(false);
  registry.SetCommonLabels({});
  EXPECT_NE(registry.Render().find("jobs_total 1"), std::string::npos);
}

}  // namespace
}  // namespace sparkprof::metrics
