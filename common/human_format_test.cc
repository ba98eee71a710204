// The shared number formats: one figure reads the same wherever it appears.
#include "common/human_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace sparkprof {
namespace {

// A saving of seconds of one core printed "0.00-0.00 core-hours": the unit now follows the high
// end, both ends alike, so the range can be read and recomputed (x 3600, x 60).
TEST(CoreHoursRange, TheUnitFollowsTheHighEnd) {
  EXPECT_EQ(CoreHoursRange(0.25, 1.4), "0.25-1.40 core-hours");
  EXPECT_EQ(CoreHoursRange(0.05, 0.1), "0.05-0.10 core-hours");
  EXPECT_EQ(CoreHoursRange(0.02, 0.08), "1.2-4.8 core-minutes");
  EXPECT_EQ(CoreHoursRange(0.002306, 0.003112), "8-11 core-seconds");
  EXPECT_EQ(CoreHoursRange(0, 0), "0.00-0.00 core-hours");
  EXPECT_EQ(CoreHoursRange(0.5, 1.0, "&ndash;"), "0.50&ndash;1.00 core-hours");
}

TEST(CoreHoursRange, HostileValuesStayReadable) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(CoreHoursRange(nan, nan), "0.00-0.00 core-hours");
  EXPECT_EQ(CoreHoursRange(-3, 0.5), "0.00-0.50 core-hours");
  EXPECT_EQ(CoreHoursRange(0.5, 0.2), "0.50-0.50 core-hours");  // high never below low
  EXPECT_EQ(CoreHoursRange(1, inf), "1.00-1.00 core-hours");
  EXPECT_EQ(CoreHoursRange(1e300, 1e300), "1000000000000.00-1000000000000.00 core-hours");
}

}  // namespace
}  // namespace sparkprof
