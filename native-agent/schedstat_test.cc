#include "native-agent/schedstat.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace sparkprof::agent {
namespace {

TEST(SchedstatTest, ParsesTheRunDelayField) {
  EXPECT_EQ(ParseSchedstatRunDelayNs("123456789 98765 42\n"), 98765);
  EXPECT_EQ(ParseSchedstatRunDelayNs("0 0 0\n"), 0);  // CONFIG_SCHEDSTATS off writes zeros
  EXPECT_EQ(ParseSchedstatRunDelayNs("1 9223372036854775807 3"), INT64_MAX);
}

TEST(SchedstatTest, RefusesMalformedText) {
  for (const char* text :
       {"", "\n", "12 34\n", "12  34 5\n", "12 -34 5\n", "12 abc 5\n", "12 34 5 6\n", "12 34 5x\n",
        " 12 34 5\n", "1 18446744073709551615 3\n", "1 99999999999999999999999 3\n"}) {
    EXPECT_FALSE(ParseSchedstatRunDelayNs(text).has_value()) << '"' << text << '"';
  }
}

TEST(SchedstatTest, ReadsThisThreadsFile) {
  int fd = OpenSchedstat(static_cast<pid_t>(syscall(SYS_gettid)));
  if (fd < 0) GTEST_SKIP() << "no /proc/self/task/<tid>/schedstat here";
  auto first = ReadSchedstatRunDelayNs(fd);
  ASSERT_TRUE(first.has_value());
  EXPECT_GE(*first, 0);
  auto second = ReadSchedstatRunDelayNs(fd);  // pread from 0: the fd is read again and again
  ASSERT_TRUE(second.has_value());
  EXPECT_GE(*second, *first);
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
  EXPECT_FALSE(ReadSchedstatRunDelayNs(fd).has_value());
  close(fd);
  EXPECT_LT(OpenSchedstat(78, dir), 0);
  EXPECT_FALSE(ReadSchedstatRunDelayNs(-1).has_value());
  unlink(path.c_str());
  rmdir(task.c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace sparkprof::agent
