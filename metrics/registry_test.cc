#include "metrics/registry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace sparkprof::metrics {
namespace {

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

}  // namespace
}  // namespace sparkprof::metrics
