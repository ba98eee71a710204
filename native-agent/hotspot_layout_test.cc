// The VM structure table reader on clearly synthetic tables laid out as HotSpot's (the real one
// is read by the agent's JVM tests).
#include "native-agent/hotspot_layout.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

namespace sparkprof::agent {
namespace {

// HotSpot's VMStructEntry (vmStructs.hpp), for building tables.
struct Entry {
  const char* type_name;
  const char* field_name;
  const char* type_string;
  int32_t is_static;
  uint64_t offset;
  void* address;
};

VmStructsTable TableOf(const std::vector<Entry>& entries) {
  return VmStructsTable{entries.data(), sizeof(Entry), offsetof(Entry, type_name),
                        offsetof(Entry, field_name), offsetof(Entry, is_static),
                        offsetof(Entry, offset)};
}

std::vector<Entry> HotSpotLike() {
  return {
      {"Thread", "_tlab", "ThreadLocalAllocBuffer", 0, 88, nullptr},
      {"JavaThread", "_threadObj", "OopHandle", 0, 600, nullptr},
      {"JavaThread", "_anchor", "JavaFrameAnchor", 0, 760, nullptr},
      {"JavaThread", "_thread_state", "JavaThreadState", 0, 900, nullptr},
      {"JavaThread", "_jni_environment", "JNIEnv", 0, 792, nullptr},
      {"JavaFrameAnchor", "_last_Java_sp", "intptr_t*", 0, 0, nullptr},
      {"JavaFrameAnchor", "_last_Java_pc", "address", 0, 16, nullptr},
      {"JavaFrameAnchor", "_last_Java_fp", "intptr_t*", 0, 8, nullptr},
      {"Universe", "_collectedHeap", "CollectedHeap*", 1, 0, nullptr},
      {nullptr, nullptr, nullptr, 0, 0, nullptr},
  };
}

TEST(HotSpotLayoutTest, FindsTheOffsetsInAHotSpotLikeTable) {
  std::vector<Entry> entries = HotSpotLike();
  Result<HotSpotLayout> layout = ReadHotSpotLayout(TableOf(entries));
  ASSERT_TRUE(layout.ok()) << layout.status().message();
  EXPECT_EQ(layout->thread_env_offset, 792u);
  EXPECT_EQ(layout->thread_state_offset, 900u);
  EXPECT_EQ(layout->thread_anchor_offset, 760u);
  EXPECT_EQ(layout->anchor_sp_offset, 0u);
  EXPECT_EQ(layout->anchor_pc_offset, 16u);
}

TEST(HotSpotLayoutTest, WithoutJvmciTheEnvFollowsTheAnchor) {
  std::vector<Entry> entries = HotSpotLike();
  entries.erase(entries.begin() + 4);  // no JavaThread::_jni_environment (a JVM without JVMCI)
  Result<HotSpotLayout> layout = ReadHotSpotLayout(TableOf(entries));
  ASSERT_TRUE(layout.ok()) << layout.status().message();
  EXPECT_TRUE(layout->thread_env_offset_derived);
  EXPECT_EQ(layout->thread_env_offset, 760u + 4 * sizeof(void*));
}

TEST(HotSpotLayoutTest, AMissingEntryIsNamed) {
  std::vector<Entry> entries = HotSpotLike();
  entries.erase(entries.begin() + 3);  // no JavaThread::_thread_state
  Result<HotSpotLayout> layout = ReadHotSpotLayout(TableOf(entries));
  ASSERT_FALSE(layout.ok());
  EXPECT_NE(layout.status().message().find("JavaThread::_thread_state"), std::string::npos);
}

TEST(HotSpotLayoutTest, StaticEntriesAndImplausibleTablesAreRefused) {
  std::vector<Entry> entries = HotSpotLike();
  entries[3].is_static = 1;  // a static _thread_state is not the field we want
  EXPECT_FALSE(ReadHotSpotLayout(TableOf(entries)).ok());

  entries = HotSpotLike();
  entries[2].offset = uint64_t{1} << 40;
  Result<HotSpotLayout> layout = ReadHotSpotLayout(TableOf(entries));
  ASSERT_FALSE(layout.ok());
  EXPECT_NE(layout.status().message().find("implausible"), std::string::npos);

  VmStructsTable table = TableOf(entries);
  table.stride = 0;
  EXPECT_FALSE(ReadHotSpotLayout(table).ok());
  table = TableOf(entries);
  table.offset_offset = table.stride + 8;
  EXPECT_FALSE(ReadHotSpotLayout(table).ok());
  EXPECT_FALSE(ReadHotSpotLayout(VmStructsTable{}).ok());
}

TEST(HotSpotLayoutTest, OutsideAJvmThereIsNoTable) {
  EXPECT_FALSE(FindVmStructsTable().ok());
}

}  // namespace
}  // namespace sparkprof::agent
