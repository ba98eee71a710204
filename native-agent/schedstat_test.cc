#include "native-agent/schedstat.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
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

// A fake /proc/self/task: one directory per thread with its schedstat.
class FakeTasks {
 public:
  FakeTasks() {
    char dir[] = "/tmp/run_delay_test_XXXXXX";
    EXPECT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  ~FakeTasks() { std::filesystem::remove_all(dir_); }
  void Set(int tid, int64_t run_delay_ns) {
    std::filesystem::create_directories(dir_ + "/" + std::to_string(tid));
    std::ofstream(dir_ + "/" + std::to_string(tid) + "/schedstat")
        << "1000 " << run_delay_ns << " 7\n";
  }
  void End(int tid) { std::filesystem::remove_all(dir_ + "/" + std::to_string(tid)); }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

TEST(ProcessRunDelayTest, StepsSumEveryThreadsWaitSinceThePreviousPoll) {
  FakeTasks tasks;
  tasks.Set(11, 5'000'000);
  tasks.Set(12, 1'000'000);
  ProcessRunDelay meter(tasks.dir());
  ASSERT_TRUE(meter.Poll(1000));  // the baseline: nothing before it is counted
  tasks.Set(11, 8'000'000);       // waited 3 ms
  tasks.Set(12, 2'000'000);       // 1 ms
  tasks.Set(13, 4'000'000);       // began since: all of its 4 ms
  ASSERT_TRUE(meter.Poll(1250));
  ASSERT_TRUE(meter.Poll(1500));  // nobody waited: no step kept, the poll counted
  tasks.End(12);
  tasks.Set(11, 8'500'000);
  tasks.Set(13, 1'000'000);  // lower than before: the id belongs to a new thread, all counted
  ASSERT_TRUE(meter.Poll(1750));
  EXPECT_EQ(meter.followed(), 2u);

  ProcessRunDelay::Taken taken = meter.Take();
  EXPECT_EQ(taken.polls, 3u);
  EXPECT_EQ(taken.total_ns, 8'000'000u + 1'500'000u);
  ASSERT_EQ(taken.steps.size(), 2u);
  EXPECT_EQ(taken.steps[0].start_epoch_ms, 1000);
  EXPECT_EQ(taken.steps[0].end_epoch_ms, 1250);
  EXPECT_EQ(taken.steps[0].total_ns, 8'000'000u);
  EXPECT_EQ(taken.steps[0].busiest_ns, 4'000'000u);
  EXPECT_EQ(taken.steps[1].start_epoch_ms, 1500);
  EXPECT_EQ(taken.steps[1].total_ns, 1'500'000u);
  EXPECT_EQ(taken.steps[1].busiest_ns, 1'000'000u);

  EXPECT_EQ(meter.Take().polls, 0u);  // taken: the next window starts empty
}

TEST(ProcessRunDelayTest, StepsBeyondTheBoundAddToTheLast) {
  FakeTasks tasks;
  tasks.Set(21, 0);
  ProcessRunDelay meter(tasks.dir());
  ASSERT_TRUE(meter.Poll(0));
  const size_t polls = ProcessRunDelay::kMaxSteps + 5;
  for (size_t i = 1; i <= polls; ++i) {
    tasks.Set(21, static_cast<int64_t>(i) * 1000);
    ASSERT_TRUE(meter.Poll(static_cast<int64_t>(i) * 10));
  }
  ProcessRunDelay::Taken taken = meter.Take();
  ASSERT_EQ(taken.steps.size(), ProcessRunDelay::kMaxSteps);
  EXPECT_EQ(taken.total_ns, polls * 1000);
  uint64_t in_steps = 0;
  for (const RunDelayStep& step : taken.steps) in_steps += step.total_ns;
  EXPECT_EQ(in_steps, taken.total_ns);  // nothing lost: the last step holds the rest
  EXPECT_EQ(taken.steps.back().end_epoch_ms, static_cast<int64_t>(polls) * 10);
}

TEST(ProcessRunDelayTest, ReadsThisProcessAndRefusesAMissingDirectory) {
  ProcessRunDelay missing("/nonexistent/task");
  EXPECT_FALSE(missing.Poll(0));
  EXPECT_EQ(missing.Take().polls, 0u);

  const int fd = OpenSchedstat(static_cast<pid_t>(syscall(SYS_gettid)));
  if (fd < 0) GTEST_SKIP() << "no /proc/self/task/<tid>/schedstat here";
  close(fd);
  // A parked thread beside this one: it sleeps through the steps, so its schedstat is read only
  // every kMaxSkips + 1 polls.
  std::mutex mutex;
  std::condition_variable wake;
  bool done = false;
  std::atomic<pid_t> parked_tid{0};
  std::thread parked([&] {
    parked_tid = static_cast<pid_t>(syscall(SYS_gettid));
    std::unique_lock<std::mutex> lock(mutex);
    wake.wait(lock, [&] { return done; });
  });
  while (parked_tid.load() == 0) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // parked by now
  ProcessRunDelay meter;
  ASSERT_TRUE(meter.Poll(0));
  const uint64_t baseline_reads = meter.schedstat_reads();
  constexpr int kPolls = 8;
  for (int i = 1; i <= kPolls; ++i) ASSERT_TRUE(meter.Poll(i));
  EXPECT_GE(meter.followed(), 2u);  // this thread and the parked one at least
  // The parked thread was read at most twice in 8 polls (every 4th); this one, which runs, each.
  EXPECT_LE(meter.schedstat_reads() - baseline_reads,
            static_cast<uint64_t>(kPolls * (meter.followed() - 1) + 2));
  EXPECT_EQ(meter.Take().polls, static_cast<uint32_t>(kPolls));
  {
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
  }
  wake.notify_all();
  parked.join();
}

TEST(ProcessRunDelayTest, PollInThePreviousPollsMillisecondLeavesTheWaitToTheNext) {
  FakeTasks tasks;
  tasks.Set(31, 0);
  ProcessRunDelay meter(tasks.dir());
  ASSERT_TRUE(meter.Poll(100'500));
  tasks.Set(31, 2'000'000);
  ASSERT_TRUE(meter.Poll(100'500));  // the same millisecond: nothing read, no step of no width
  ProcessRunDelay::Taken same = meter.Take();
  EXPECT_EQ(same.polls, 0u);
  EXPECT_TRUE(same.steps.empty());
  tasks.Set(31, 3'000'000);
  ASSERT_TRUE(meter.Poll(100'510));  // the next poll counts all of it, from the last real poll
  ProcessRunDelay::Taken next = meter.Take();
  ASSERT_EQ(next.steps.size(), 1u);
  EXPECT_EQ(next.steps[0].start_epoch_ms, 100'500);
  EXPECT_EQ(next.steps[0].end_epoch_ms, 100'510);
  EXPECT_EQ(next.steps[0].total_ns, 3'000'000u);

  // The wall clock stepped back a long way: a new baseline, never a step that ends before it
  // starts.
  tasks.Set(31, 9'000'000);
  ASSERT_TRUE(meter.Poll(100'510 - ProcessRunDelay::kMaxClockStepBackMs - 1));
  EXPECT_TRUE(meter.Take().steps.empty());
  tasks.Set(31, 9'500'000);
  ASSERT_TRUE(meter.Poll(100'600 - ProcessRunDelay::kMaxClockStepBackMs));
  ProcessRunDelay::Taken after = meter.Take();
  ASSERT_EQ(after.steps.size(), 1u);
  EXPECT_LT(after.steps[0].start_epoch_ms, after.steps[0].end_epoch_ms);
  EXPECT_EQ(after.steps[0].total_ns, 500'000u);
}

}  // namespace
}  // namespace sparkprof::agent
