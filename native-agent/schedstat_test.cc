#include "native-agent/schedstat.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>

namespace sparkprof::agent {
namespace {

TEST(SchedstatTest, ParsesTheRunDelayAndTimesliceFields) {
  for (auto [text, run_delay_ns, timeslices] :
       {std::tuple<const char*, int64_t, uint64_t>{"123456789 98765 42\n", 98765, 42},
        {"0 0 0\n", 0, 0},  // CONFIG_SCHEDSTATS off writes zeros
        {"1 9223372036854775807 3", INT64_MAX, 3}}) {
    std::optional<SchedstatReading> reading = ParseSchedstat(text);
    ASSERT_TRUE(reading.has_value()) << text;
    EXPECT_EQ(reading->run_delay_ns, run_delay_ns) << text;
    EXPECT_EQ(reading->timeslices, timeslices) << text;
  }
}

TEST(SchedstatTest, RefusesMalformedText) {
  for (const char* text :
       {"", "\n", "12 34\n", "12  34 5\n", "12 -34 5\n", "12 abc 5\n", "12 34 5 6\n", "12 34 5x\n",
        " 12 34 5\n", "1 18446744073709551615 3\n", "1 99999999999999999999999 3\n"}) {
    EXPECT_FALSE(ParseSchedstat(text).has_value()) << '"' << text << '"';
  }
}

TEST(SchedstatTest, ReadsThisThreadsFile) {
  int fd = OpenSchedstat(static_cast<pid_t>(syscall(SYS_gettid)));
  if (fd < 0) GTEST_SKIP() << "no /proc/self/task/<tid>/schedstat here";
  auto first = ReadSchedstat(fd);
  ASSERT_TRUE(first.has_value());
  EXPECT_GE(first->run_delay_ns, 0);
  auto second = ReadSchedstat(fd);  // pread from 0: the fd is read again and again
  ASSERT_TRUE(second.has_value());
  EXPECT_GE(second->run_delay_ns, first->run_delay_ns);
  EXPECT_GE(second->timeslices, first->timeslices);
  close(fd);
}

TEST(SchedstatTest, AMalformedOrMissingFileReadsAsNothing) {
  char dir[] = "/tmp/schedstat_test_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string task = std::string(dir) + "/77";
  ASSERT_EQ(mkdir(task.c_str(), 0700), 0);
  std::string path = task + "/schedstat";
  FILE* file = std::fopen(path.c_str(), "w");
  ASSERT_NE(file, nullptr);
  std::fputs("garbage, not numbers\n", file);
  std::fclose(file);
  int fd = OpenSchedstat(77, dir);
  ASSERT_GE(fd, 0);
  EXPECT_FALSE(ReadSchedstat(fd).has_value());
  close(fd);
  EXPECT_LT(OpenSchedstat(78, dir), 0);
  EXPECT_FALSE(ReadSchedstat(-1).has_value());
  unlink(path.c_str());
  rmdir(task.c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace sparkprof::agent
