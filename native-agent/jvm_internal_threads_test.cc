// The JVM-thread poller on real threads of this process named as HotSpot names its own.
#include "native-agent/jvm_internal_threads.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "native-agent/drain.h"
#include "native-agent/signal_handler.h"

namespace sparkprof::agent {
namespace {

pid_t Tid() { return static_cast<pid_t>(syscall(SYS_gettid)); }

// A thread named `name` that burns CPU until told to stop.
class NamedSpinner {
 public:
  explicit NamedSpinner(const char* name) {
    thread_ = std::thread([this, name] {
      pthread_setname_np(pthread_self(), name);
      tid_.store(Tid());
      volatile uint64_t x = 0;
      while (!stop_.load()) {
        for (int i = 0; i < 10000; ++i) x = x + 1;
      }
    });
    while (tid_.load() == 0) std::this_thread::yield();
  }
  ~NamedSpinner() {
    stop_.store(true);
    thread_.join();
  }
  pid_t tid() const { return tid_.load(); }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<pid_t> tid_{0};
  std::thread thread_;
};

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

TEST(JvmInternalThreadsTest, ClassifiesHotSpotThreadNames) {
  EXPECT_EQ(ClassifyJvmThread("GC Thread#3"), Category::kGc);
  EXPECT_EQ(ClassifyJvmThread("G1 Conc#0"), Category::kGc);
  EXPECT_EQ(ClassifyJvmThread("G1 Refine#0"), Category::kGc);
  EXPECT_EQ(ClassifyJvmThread("ZWorkerYoung#0"), Category::kGc);
  EXPECT_EQ(ClassifyJvmThread("Shenandoah GC T"), Category::kGc);
  EXPECT_EQ(ClassifyJvmThread("C2 CompilerThre"), Category::kJit);
  EXPECT_EQ(ClassifyJvmThread("C1 CompilerThre"), Category::kJit);
  EXPECT_EQ(ClassifyJvmThread("VM Thread"), Category::kVm);
  EXPECT_EQ(ClassifyJvmThread("VM Periodic Tas"), Category::kVm);
  // Java threads and everything else: not the JVM's own.
  EXPECT_EQ(ClassifyJvmThread("java"), std::nullopt);
  EXPECT_EQ(ClassifyJvmThread("Executor task l"), std::nullopt);
  EXPECT_EQ(ClassifyJvmThread("Finalizer"), std::nullopt);
  EXPECT_EQ(ClassifyJvmThread(""), std::nullopt);
  EXPECT_EQ(ClassifyJvmThread("GC"), std::nullopt);
  for (const JvmThreadRule& rule : JvmThreadRules()) {
    EXPECT_TRUE(rule.category == Category::kGc || rule.category == Category::kJit ||
                rule.category == Category::kVm)
        << rule.name_prefix;
    EXPECT_LE(rule.name_prefix.size(), 15u) << "comm holds 15 bytes: " << rule.name_prefix;
  }
}

TEST(JvmInternalThreadsTest, ReportsTheCpuOfJvmNamedThreadsOnly) {
  NamedSpinner gc("GC Thread#0");
  NamedSpinner jit("C2 CompilerThre");
  NamedSpinner sampled("GC Thread#1");  // a sampled thread is never polled, whatever its name
  NamedSpinner task("Executor task l");
  JvmInternalThreads threads(1'000'000, /*count_cpu_before_first_scan=*/false);
  std::unordered_set<pid_t> sampled_tids = {sampled.tid(), Tid()};
  std::vector<JvmThreadCpu> out;
  const int64_t gc_start = ThreadCpuNs(gc.tid());
  threads.Poll(NowNs(), sampled_tids, &out);  // baselines
  EXPECT_EQ(threads.tracked(), 2u);
  out.clear();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  threads.Poll(NowNs(), sampled_tids, &out);
  const int64_t gc_end = ThreadCpuNs(gc.tid());
  int64_t gc_cpu = 0;
  bool jit_seen = false;
  for (const JvmThreadCpu& thread : out) {
    EXPECT_NE(thread.tid, sampled.tid());
    EXPECT_NE(thread.tid, task.tid());
    if (thread.tid == gc.tid()) {
      EXPECT_EQ(thread.category, Category::kGc);
      EXPECT_EQ(thread.name, "GC Thread#0");
      gc_cpu = thread.cpu_ns;
      // Whole 1 ms samples of the CPU used, the rest carried.
      EXPECT_EQ(thread.samples, static_cast<uint64_t>(thread.cpu_ns / 1'000'000));
    }
    if (thread.tid == jit.tid()) jit_seen = thread.category == Category::kJit;
  }
  EXPECT_TRUE(jit_seen);
  // The poller's two reads lie between the test's own.
  EXPECT_GT(gc_cpu, 0);
  EXPECT_LE(gc_cpu, gc_end - gc_start);
}

TEST(JvmInternalThreadsTest, AThreadThatEndsIsForgotten) {
  JvmInternalThreads threads(1'000'000, /*count_cpu_before_first_scan=*/true);
  std::vector<JvmThreadCpu> out;
  pid_t ended = 0;
  {
    NamedSpinner vm("VM Thread");
    ended = vm.tid();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    threads.Poll(NowNs(), {}, &out);
    EXPECT_EQ(threads.tracked(), 1u);
    // Counted from the thread's start: its first poll already reports CPU.
    ASSERT_EQ(out.size(), 1u);
    EXPECT_GT(out[0].cpu_ns, 0);
  }
  // pthread_join returns when the thread cleared its id, a moment before the kernel releases
  // it: until then its clock can still be read (once seen in a clean-clone CI run).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (ThreadCpuNs(ended) >= 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  out.clear();
  threads.Poll(NowNs(), {}, &out);  // before the next rescan: the clock read fails
  EXPECT_EQ(threads.tracked(), 0u);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(ThreadCpuNs(-1), -1);
}

class NoNames : public MethodNameResolver {
 public:
  std::string Resolve(const void*) override { return ""; }
};

TEST(JvmInternalThreadsTest, TheDrainProfilesThemAsTheirCategoryWithoutATask) {
  ThreadRegistry registry;
  NoNames resolver;
  GcMonitor gc_monitor;
  TaskTimeline timeline;
  Drain drain(DrainConfig{1'000'000}, registry, resolver, gc_monitor, timeline);
  JvmInternalThreads threads(1'000'000, /*count_cpu_before_first_scan=*/true);
  drain.set_jvm_internal_threads(&threads);
  NamedSpinner gc("G1 Conc#3");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  drain.RunCycle();
  EXPECT_EQ(drain.jvm_threads_tracked(), 1u);
  const Profile& profile = drain.cumulative();
  ASSERT_EQ(profile.stacks().size(), 1u);
  const auto& stack = profile.stacks()[0];
  ASSERT_EQ(stack.size(), 2u);
  EXPECT_EQ(drain.strings().Get(stack[0]), "[jvm gc]");
  EXPECT_EQ(drain.strings().Get(stack[1]), "[G1 Conc#N]");
  ASSERT_EQ(profile.task_times().size(), 1u);
  const auto& [key, total] = *profile.task_times().begin();
  EXPECT_EQ(key.category, Category::kGc);
  EXPECT_FALSE(key.tag.is_task());
  EXPECT_GT(total.time_ns, 0u);
  EXPECT_EQ(total.samples, profile.total_samples());
}

TEST(JvmInternalThreadsTest, AMissingTaskDirectoryTracksNothing) {
  JvmInternalThreads threads(1'000'000, true, "/nonexistent/task");
  std::vector<JvmThreadCpu> out;
  threads.Poll(NowNs(), {}, &out);
  EXPECT_EQ(threads.tracked(), 0u);
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace sparkprof::agent
