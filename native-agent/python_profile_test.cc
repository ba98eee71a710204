#include "native-agent/python_profile.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "native-agent/drain.h"

namespace sparkprof::agent {
namespace {

const char* kFile =
    "sparkprof-python 1\n"
    "task 3 1 0 42\n"
    "worker 1234 10000000\n"
    "totals 30 120000000 90000000 5000000 0 2\n"
    "s 110000000 0 11 <module> (job.py:18)\tudf (job.py:14)\tbusy (job.py:8)\n"
    "s 10000000 80000000 9 <module> (job.py:18)\tudf (job.py:15)\n"
    "s 0 10000000 1 <module> (job.py:18)\tudf (job.py:15)\t[runnable: waiting for a CPU]\n";

TEST(PythonProfileTest, ParsesAWorkersFile) {
  PythonTaskProfile profile;
  ASSERT_EQ(ParsePythonProfile(kFile, profile), std::nullopt);
  EXPECT_EQ(profile.stage_id, 3);
  EXPECT_EQ(profile.partition_id, 1);
  EXPECT_EQ(profile.task_attempt_id, 42);
  EXPECT_EQ(profile.worker_pid, 1234);
  EXPECT_EQ(profile.interval_ns, 10'000'000);
  EXPECT_EQ(profile.jvm_wait_ns, 5'000'000u);
  EXPECT_EQ(profile.files_dropped, 2u);
  ASSERT_EQ(profile.stacks.size(), 3u);
  EXPECT_EQ(profile.stacks[0].cpu_ns, 110'000'000u);
  EXPECT_EQ(profile.stacks[0].samples, 11u);
  ASSERT_EQ(profile.stacks[0].frames.size(), 3u);
  EXPECT_EQ(profile.stacks[0].frames[2], "busy (job.py:8)");
  EXPECT_EQ(profile.stacks[1].off_cpu_ns, 80'000'000u);
}

// Every malformed file is refused with the line and the reason, never a crash or a guess.
TEST(PythonProfileTest, RefusesMalformedFilesNamingTheLine) {
  const std::map<std::string, std::string> cases = {
      {"", "line 1: an empty file"},
      {"sparkprof-python 2\n", "line 1: not a sparkprof Python profile"},
      {"sparkprof-python 1\ntask 3 1 0 42\n", "line 2: the task, worker or totals line"},
      {"sparkprof-python 1\ntask 3 1 0\n", "line 2: task wants 4"},
      {"sparkprof-python 1\ntask -3 1 0 42\n", "line 2: task wants 4"},
      {"sparkprof-python 1\ntask 3 1 0 42\ntask 3 1 0 42\n", "line 3: a second task line"},
      {"sparkprof-python 1\nworker 0 10\n", "line 2: worker wants"},
      {"sparkprof-python 1\ntotals 1 2 3 4 5\n", "line 2: totals wants 6"},
      {"sparkprof-python 1\ntotals 1 99999999999999999999 3 4 5 6\n", "line 2: totals wants 6"},
      {"sparkprof-python 1\ns 1 2 3\n", "line 2: a stack wants"},
      {"sparkprof-python 1\ns 1 2 3 a\t\tb\n", "line 2: an empty frame"},
      {"sparkprof-python 1\ns 1 2 3 a\t\n", "line 2: an empty frame"},
      {"sparkprof-python 1\ns 1 2 3 a", "line 2: the last line has no newline"},
      {"sparkprof-python 1\nbogus\x1b[31m 1\n", "line 2: unknown record 'bogus?[31m'"},
  };
  for (const auto& [text, expected] : cases) {
    PythonTaskProfile profile;
    std::optional<std::string> error = ParsePythonProfile(text, profile);
    ASSERT_TRUE(error.has_value()) << text;
    EXPECT_EQ(error->rfind(expected, 0), 0u) << "got: " << *error << " for: " << text;
  }
  std::string deep = "sparkprof-python 1\ns 1 2 3 f";
  for (size_t i = 0; i < kMaxPythonFrames; ++i) deep += "\tf";
  deep += "\n";
  PythonTaskProfile profile;
  EXPECT_NE(ParsePythonProfile(deep, profile), std::nullopt);
  std::string big(kMaxPythonProfileBytes + 1, 'x');
  EXPECT_NE(ParsePythonProfile(big, profile), std::nullopt);
}

TEST(PythonProfileTest, FrameNamesAreBoundedAndPrintable) {
  EXPECT_EQ(SanitisePythonFrame("f (a.py:1)"), "f (a.py:1)");
  EXPECT_EQ(SanitisePythonFrame("a\x1b]0;x\x07z"), "a?]0;x?z");
  EXPECT_EQ(SanitisePythonFrame("caf\xc3\xa9"), "caf\xc3\xa9");  // UTF-8 kept
  EXPECT_EQ(SanitisePythonFrame("bad\xc3(\xff"), "bad?(?");      // malformed: '?'
  EXPECT_EQ(SanitisePythonFrame("c1\xc2\x9b"), "c1??");          // a C1 control (CSI)
  EXPECT_EQ(SanitisePythonFrame("\xed\xa0\x80"), "???");         // a surrogate
  EXPECT_EQ(SanitisePythonFrame(""), "?");
  EXPECT_EQ(SanitisePythonFrame(std::string(2000, 'y')).size(), kMaxPythonFrameBytes);
}

TEST(PythonProfileTest, RecentTasksForgetTheOldestBeyondTheBound) {
  RecentTasks tasks;
  for (int64_t id = 0; id < static_cast<int64_t>(RecentTasks::kMaxTasks) + 10; ++id) {
    tasks.Remember(TaskTag{1, 0, id});
  }
  EXPECT_EQ(tasks.size(), RecentTasks::kMaxTasks);
  EXPECT_EQ(tasks.Find(0), nullptr);
  ASSERT_NE(tasks.Find(RecentTasks::kMaxTasks + 9), nullptr);
  const uint32_t frames[] = {7, 8};
  tasks.RememberPythonWait(TaskTag{1, 2, 5000}, frames);
  ASSERT_NE(tasks.Find(5000), nullptr);
  EXPECT_EQ(tasks.Find(5000)->tag.stage_attempt, 2);
  EXPECT_EQ(tasks.Find(5000)->python_wait_stack.size(), 2u);
  tasks.Remember(TaskTag{});  // no task: nothing
  EXPECT_EQ(tasks.size(), RecentTasks::kMaxTasks);
}

class NoResolver : public MethodNameResolver {
 public:
  std::string Resolve(const void* method_id) override {
    auto it = names.find(reinterpret_cast<uintptr_t>(method_id));
    return it == names.end() ? "" : it->second;
  }
  std::map<uintptr_t, std::string> names;
};

// A task's Python stacks go under the JVM stack in which it waited on its worker, with the
// task's full tag (the worker knows no stage attempt), as python and python_off_cpu.
TEST(PythonProfileTest, DrainPutsTheWorkersStacksUnderTheJvmWait) {
  ThreadRegistry registry;
  NoResolver resolver;
  resolver.names = {{1, "org.apache.spark.executor.Executor$TaskRunner.run"},
                    {2, "org.apache.spark.api.python.BasePythonRunner$ReaderInputStream.read"},
                    {3, "sun.nio.ch.SocketDispatcher.read0"}};
  GcMonitor gc;
  TaskTimeline timeline;
  Drain drain(DrainConfig{}, registry, resolver, gc, timeline);
  ThreadState* state = registry.Add(std::make_unique<ThreadState>(100, 16, 8));
  TaskTag tag{3, 1, 42};
  SampleRecord* record = state->ring.TryReserve();
  ASSERT_NE(record, nullptr);
  record->tag = tag;
  record->weight_ns = 0;
  record->off_cpu_ns = 10'000'000;
  record->cpu_starved_ns = 0;
  record->jvm_thread_state = -1;
  record->idle_before_us = 0;
  record->partial_walk_error = 0;
  record->frames[0] = RawFrame{0, reinterpret_cast<const void*>(3)};
  record->frames[1] = RawFrame{0, reinterpret_cast<const void*>(2)};
  record->frames[2] = RawFrame{0, reinterpret_cast<const void*>(1)};
  record->num_frames = 3;
  state->ring.Commit();
  drain.RunCycle();

  PythonTaskProfile profile;
  ASSERT_EQ(ParsePythonProfile(kFile, profile), std::nullopt);
  ASSERT_TRUE(drain.AddPythonProfile(profile));
  std::map<Category, uint64_t> time;
  bool found_nested = false;
  for (const auto& [key, count] : drain.pending().samples()) {
    time[count.category] += count.time_ns;
    if (count.category != Category::kPython) continue;
    EXPECT_EQ(key.tag, tag);
    const std::vector<uint32_t>& stack = drain.pending().stacks()[key.stack];
    std::vector<std::string> names;
    names.reserve(stack.size());
    for (uint32_t id : stack) names.push_back(drain.strings().Get(id));
    if (names.size() == 7 && names.back() == "busy (job.py:8)") {
      found_nested = true;
      EXPECT_EQ(names[2], "sun.nio.ch.SocketDispatcher.read0");
      EXPECT_EQ(names[3], kPythonWorkerFrame);
    }
  }
  EXPECT_TRUE(found_nested);
  EXPECT_EQ(time[Category::kPythonWait], 10'000'000u);
  EXPECT_EQ(time[Category::kPython], 120'000'000u);
  EXPECT_EQ(time[Category::kPythonOffCpu], 90'000'000u);

  // A task the drain never saw (no sample, no timeline entry): nothing is added.
  profile.task_attempt_id = 99;
  EXPECT_FALSE(drain.AddPythonProfile(profile));
  // One the timeline knows (started, no sample yet): added directly under the task.
  timeline.Begin(state, TaskTag{4, 0, 100}, 1);
  profile.task_attempt_id = 100;
  EXPECT_TRUE(drain.AddPythonProfile(profile));
}

}  // namespace
}  // namespace sparkprof::agent
