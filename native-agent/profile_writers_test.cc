#include "native-agent/profile_writers.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace sparkprof::agent {
namespace {

class NamesResolver : public MethodNameResolver {
 public:
  std::string Resolve(const void* id) override {
    return reinterpret_cast<uintptr_t>(id) == 1 ? "Main.main" : "Weird;name\nwith\"quotes";
  }
};

TEST(ProfileWritersTest, CollapsedAndJsonDescribeTheProfile) {
  ThreadRegistry registry;
  NamesResolver resolver;
  GcMonitor gc;
  TaskTimeline timeline;
  Drain drain(DrainConfig{}, registry, resolver, gc, timeline);
  ThreadState* state = registry.Add(std::make_unique<ThreadState>(1, 8, 4));
  state->name = "main";
  for (int i = 0; i < 3; ++i) {
    SampleRecord* record = state->ring.TryReserve();
    record->tag = TaskTag{1, 0, 9};
    record->frames[0] = RawFrame{0, reinterpret_cast<const void*>(uintptr_t{2})};
    record->frames[1] = RawFrame{0, reinterpret_cast<const void*>(uintptr_t{1})};
    record->num_frames = 2;
    state->ring.Commit();
  }
  drain.RunCycle();

  EXPECT_EQ(RenderCollapsed(drain.cumulative(), drain.strings()), "Main.main;Weird_name_with\"quotes 3\n");
  ReportContext context{"cpu", "cpu: timer_create per thread", "AsyncGetCallTrace", 10'000'000, 7, 1, 2};
  std::string json = RenderJson(context, drain, HealthSnapshot{});
  EXPECT_NE(json.find("\"samples\":3"), std::string::npos) << json;
  EXPECT_NE(json.find("{\"stage_id\":1,\"stage_attempt\":0,\"task_attempt_id\":9,\"categories\":"
                      "{\"compute\":{\"samples\":3,\"time_ns\":30000000}}}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"thread\":\"main\""), std::string::npos);
  EXPECT_NE(json.find("concurrent GC phases are not pauses"), std::string::npos);
}

TEST(ProfileWritersTest, JsonEscapeHandlesControlCharacters) {
  EXPECT_EQ(JsonEscape("a\"b\\c\n\x01"), "a\\\"b\\\\c\\n\\u0001");
}

TEST(ProfileWritersTest, WritesFilesAtomically) {
  std::string path = ::testing::TempDir() + "/sparkprof_writer_test.txt";
  ASSERT_TRUE(WriteFileAtomically(path, "hello\n").ok());
  std::ifstream in(path);
  std::stringstream contents;
  contents << in.rdbuf();
  EXPECT_EQ(contents.str(), "hello\n");
  std::remove(path.c_str());
  EXPECT_FALSE(WriteFileAtomically("/nonexistent-dir/x", "y").ok());
}

}  // namespace
}  // namespace sparkprof::agent
