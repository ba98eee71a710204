#include "driver-aggregator/python_driver_batch.h"

#include <gtest/gtest.h>

#include <string>

#include "analyzer/profile/stage_profiles.h"
#include "driver-aggregator/driver_aggregator.h"
#include "driver-aggregator/profile_file_writer.h"

namespace sparkprof::driver {
namespace {

constexpr int64_t kSecondNs = 1'000'000'000;

std::string File(const std::string& stacks) {
  return "sparkprof-python 1\ntask 0 0 0 0\nworker 4242 10000000\n"
         "totals 300 2000000000 1000000000 500000000 0 0\n" +
         stacks;
}

TEST(PythonDriverBatchTest, StacksBecomeTheDriversUntaggedTimeInItsWindow) {
  Result<std::string> batch = PythonDriverBatch(
      File("s 2000000000 0 200 <module> (app.py:3)\tscore (app.py:10)\n"
           "s 0 1000000000 100 <module> (app.py:3)\tsleep (<stdlib>/time.py:1)\n"),
      100 * kSecondNs, 105 * kSecondNs);
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(batch->data()),
                                       batch->size());
  // The aggregator takes it as it takes an executor's batch.
  Result<std::unique_ptr<DriverAggregator>> aggregator = DriverAggregator::Start({});
  ASSERT_TRUE(aggregator.ok()) << aggregator.status().ToString();
  EXPECT_EQ((*aggregator)->Ingest(bytes), IngestOutcome::kAccepted);
  // As the driver's profile file holds it.
  std::string file;
  AppendSizePrefixed(bytes, file);
  Result<profile::ApplicationProfile> read =
      profile::ApplicationProfileFromBytes(file, "python-driver");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_TRUE(read->stages.empty());
  EXPECT_EQ(read->untagged_ns, 3 * static_cast<uint64_t>(kSecondNs));
  const profile::DriverProfile& driver = read->driver;
  ASSERT_EQ(driver.windows.size(), 1u);
  EXPECT_EQ(driver.windows[0].start_epoch_ns, 100 * kSecondNs);
  EXPECT_EQ(driver.windows[0].threads_ns, 3 * static_cast<uint64_t>(kSecondNs));
  EXPECT_EQ(driver.windows[0].off_cpu_ns, static_cast<uint64_t>(kSecondNs));
  ASSERT_EQ(driver.windows[0].top.size(), 2u);
  const profile::DriverActivity& top = driver.activities[driver.windows[0].top[0].activity];
  EXPECT_EQ(top.thread, kPythonDriverThread);
  EXPECT_EQ(top.frame, "score (app.py)");
  EXPECT_TRUE(top.python && top.application);
  // The sleep's innermost application frame is the module's body.
  EXPECT_EQ(driver.activities[driver.windows[0].top[1].activity].frame, "<module> (app.py)");
}

TEST(PythonDriverBatchTest, RefusesBadFilesAndWindowsSayingWhy) {
  Result<std::string> cut = PythonDriverBatch("sparkprof-python 1\ntask 0 0", 1, 2);
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find("the Python driver's samples: line 2"), std::string::npos)
      << cut.status().message();
  Result<std::string> inverted = PythonDriverBatch(File(""), 5 * kSecondNs, 4 * kSecondNs);
  ASSERT_FALSE(inverted.ok());
  EXPECT_NE(inverted.status().message().find("empty or inverted"), std::string::npos);
  // Control characters in a frame cannot reach the reports.
  Result<std::string> hostile =
      PythonDriverBatch(File("s 1000000 0 1 evil\x1b[2J (app.py:1)\n"), kSecondNs, 2 * kSecondNs);
  ASSERT_TRUE(hostile.ok());
  EXPECT_EQ(hostile->find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace sparkprof::driver
