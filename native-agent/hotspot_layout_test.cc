// The VM structure table reader on clearly synthetic tables laid out as HotSpot's (the real one
// is read by the agent's JVM tests).
#include "native-agent/hotspot_layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <string_view>
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
  return VmStructsTable{entries.data(),
                        sizeof(Entry),
                        offsetof(Entry, type_name),
                        offsetof(Entry, field_name),
                        offsetof(Entry, is_static),
                        offsetof(Entry, offset),
                        offsetof(Entry, type_string),
                        offsetof(Entry, address)};
}

// HotSpot's VMTypeEntry (vmStructs.hpp).
struct TypeEntry {
  const char* type_name;
  const char* superclass_name;
  int32_t is_oop_type;
  int32_t is_integer_type;
  int32_t is_unsigned;
  uint64_t size;
};

const std::vector<TypeEntry>& HotSpotLikeTypes() {
  static const std::vector<TypeEntry> types = {
      {"JavaThread", "Thread", 0, 0, 0, 1200},
      {"HeapBlock", nullptr, 0, 0, 0, 16},
      {nullptr, nullptr, 0, 0, 0, 0},
  };
  return types;
}

VmTypesTable TypesOf(const std::vector<TypeEntry>& types) {
  return VmTypesTable{types.data(), sizeof(TypeEntry), offsetof(TypeEntry, type_name),
                      offsetof(TypeEntry, size)};
}

Result<HotSpotLayout> Read(const std::vector<Entry>& entries) {
  return ReadHotSpotLayout(TableOf(entries), TypesOf(HotSpotLikeTypes()));
}

// Static fields' addresses (the table's entries point at them).
void* g_heaps = nullptr;
uintptr_t g_low_bound = 0, g_high_bound = 0;

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
      {"CodeCache", "_heaps", "GrowableArray<CodeHeap*>*", 1, 0, &g_heaps},
      {"CodeCache", "_low_bound", "address", 1, 0, &g_low_bound},
      {"CodeCache", "_high_bound", "address", 1, 0, &g_high_bound},
      {"GrowableArrayBase", "_len", "int", 0, 0, nullptr},
      {"GrowableArray<int>", "_data", "int*", 0, 8, nullptr},
      {"CodeHeap", "_memory", "VirtualSpace", 0, 8, nullptr},
      {"CodeHeap", "_segmap", "VirtualSpace", 0, 120, nullptr},
      {"CodeHeap", "_log2_segment_size", "int", 0, 256, nullptr},
      {"VirtualSpace", "_low", "char*", 0, 16, nullptr},
      {"VirtualSpace", "_high", "char*", 0, 24, nullptr},
      {"HeapBlock", "_header", "HeapBlock::Header", 0, 0, nullptr},
      {"HeapBlock::Header", "_used", "bool", 0, 8, nullptr},
      {"CodeBlob", "_name", "const char*", 0, 96, nullptr},
      {"CodeBlob", "_size", "int", 0, 12, nullptr},
      {"CodeBlob", "_frame_size", "int", 0, 28, nullptr},
      {"CompiledMethod", "_method", "Method*", 0, 112, nullptr},
      {"Method", "_constMethod", "ConstMethod*", 0, 8, nullptr},
      {"ConstMethod", "_constants", "ConstantPool*", 0, 8, nullptr},
      {"ConstMethod", "_method_idnum", "u2", 0, 38, nullptr},
      {"ConstantPool", "_pool_holder", "InstanceKlass*", 0, 24, nullptr},
      {"InstanceKlass", "_methods_jmethod_ids", "jmethodID*", 0, 344, nullptr},
      {"JavaThread", "_stack_base", "address", 0, 592, nullptr},
      {"JavaThread", "_stack_size", "size_t", 0, 600, nullptr},
      {"JavaThread", "_vframe_array_head", "vframeArray*", 0, 712, nullptr},
      {nullptr, nullptr, nullptr, 0, 0, nullptr},
  };
}

TEST(HotSpotLayoutTest, FindsTheOffsetsInAHotSpotLikeTable) {
  std::vector<Entry> entries = HotSpotLike();
  Result<HotSpotLayout> layout = Read(entries);
  ASSERT_TRUE(layout.ok()) << layout.status().message();
  EXPECT_EQ(layout->thread_env_offset, 792u);
  EXPECT_EQ(layout->thread_state_offset, 900u);
  EXPECT_EQ(layout->thread_anchor_offset, 760u);
  EXPECT_EQ(layout->anchor_sp_offset, 0u);
  EXPECT_EQ(layout->anchor_pc_offset, 16u);
  EXPECT_EQ(layout->anchor_fp_offset, 8u);
  EXPECT_EQ(layout->code_heaps_address, reinterpret_cast<uintptr_t>(&g_heaps));
  EXPECT_EQ(layout->code_low_bound_address, reinterpret_cast<uintptr_t>(&g_low_bound));
  EXPECT_EQ(layout->code_high_bound_address, reinterpret_cast<uintptr_t>(&g_high_bound));
  EXPECT_EQ(layout->array_data_offset, 8u);
  EXPECT_EQ(layout->heap_segment_map_offset, 120u);
  EXPECT_EQ(layout->heap_log2_segment_offset, 256u);
  EXPECT_EQ(layout->space_high_offset, 24u);
  EXPECT_EQ(layout->block_used_offset, 8u);
  EXPECT_EQ(layout->block_size, 16u);
  EXPECT_EQ(layout->blob_name_offset, 96u);
  EXPECT_EQ(layout->blob_frame_size_offset, 28u);
}

TEST(HotSpotLayoutTest, CompiledMethodOrNmethodNamesTheMethod) {
  std::vector<Entry> entries = HotSpotLike();
  for (Entry& entry : entries) {
    if (entry.type_name != nullptr && std::string_view(entry.type_name) == "CompiledMethod") {
      entry.type_name = "nmethod";  // JDK 23 and later
      entry.offset = 80;
    }
  }
  Result<HotSpotLayout> layout = Read(entries);
  ASSERT_TRUE(layout.ok()) << layout.status().message();
  EXPECT_EQ(layout->nmethod_method_offset, 80u);
  EXPECT_EQ(layout->klass_method_ids_offset, 344u);
  EXPECT_EQ(layout->thread_vframe_array_offset, 712u);

  entries.erase(std::remove_if(entries.begin(), entries.end(),
                               [](const Entry& entry) {
                                 return entry.type_name != nullptr &&
                                        std::string_view(entry.type_name) == "nmethod";
                               }),
                entries.end());
  layout = Read(entries);
  ASSERT_FALSE(layout.ok());
  EXPECT_NE(layout.status().message().find("::_method"), std::string::npos);
}

// A method as HotSpot links it to its jmethodID: Method -> ConstMethod (idnum) -> ConstantPool
// -> InstanceKlass -> jmethodID table (length, then one id per idnum) -> slot -> Method.
struct FakeMethod {
  const void* padding;
  const struct FakeConstMethod* const_method;
};
struct FakeConstMethod {
  const void* padding;
  const struct FakePool* constants;
  uint16_t idnum;
};
struct FakePool {
  const struct FakeKlass* holder;
};
struct FakeKlass {
  const uintptr_t* method_ids;
};

TEST(HotSpotLayoutTest, AMethodIdIsFoundAgainFromItsMethod) {
  HotSpotLayout layout;
  layout.method_const_offset = offsetof(FakeMethod, const_method);
  layout.const_method_constants_offset = offsetof(FakeConstMethod, constants);
  layout.const_method_idnum_offset = offsetof(FakeConstMethod, idnum);
  layout.pool_holder_offset = offsetof(FakePool, holder);
  layout.klass_method_ids_offset = offsetof(FakeKlass, method_ids);
  FakeMethod method{};
  const void* slot = &method;  // what a jmethodID points at
  uintptr_t ids[3] = {2, 0, reinterpret_cast<uintptr_t>(&slot)};
  FakeKlass klass{ids};
  FakePool pool{&klass};
  FakeConstMethod const_method{nullptr, &pool, 1};
  method.const_method = &const_method;
  auto method_id = reinterpret_cast<jmethodID>(&slot);
  EXPECT_TRUE(CheckMethodIdLookup(layout, method_id).ok());

  const_method.idnum = 0;  // the table names another id there
  EXPECT_FALSE(CheckMethodIdLookup(layout, method_id).ok());
  const_method.idnum = 2;  // past the table
  EXPECT_FALSE(CheckMethodIdLookup(layout, method_id).ok());
  const_method.idnum = 1;
  klass.method_ids = nullptr;
  EXPECT_FALSE(CheckMethodIdLookup(layout, method_id).ok());
  EXPECT_FALSE(CheckMethodIdLookup(layout, reinterpret_cast<jmethodID>(uintptr_t{42})).ok());
}

TEST(HotSpotLayoutTest, AFieldOfAnotherTypeOrAMissingSizeIsRefused) {
  std::vector<Entry> entries = HotSpotLike();
  for (Entry& entry : entries) {
    if (entry.field_name != nullptr && std::string_view(entry.field_name) == "_frame_size")
      entry.type_string = "int16_t";  // the walker reads an int there
  }
  Result<HotSpotLayout> layout = Read(entries);
  ASSERT_FALSE(layout.ok());
  EXPECT_NE(layout.status().message().find("CodeBlob::_frame_size has type int16_t"),
            std::string::npos)
      << layout.status().message();

  std::vector<TypeEntry> types = {{"JavaThread", "Thread", 0, 0, 0, 1200},
                                  {nullptr, nullptr, 0, 0, 0, 0}};
  layout = ReadHotSpotLayout(TableOf(HotSpotLike()), TypesOf(types));
  ASSERT_FALSE(layout.ok());
  EXPECT_NE(layout.status().message().find("HeapBlock"), std::string::npos);
}

TEST(HotSpotLayoutTest, TheCodeCacheIsCheckedBeforeUse) {
  std::vector<Entry> entries = HotSpotLike();
  Result<HotSpotLayout> layout = Read(entries);
  ASSERT_TRUE(layout.ok()) << layout.status().message();
  g_heaps = nullptr;
  g_low_bound = 0x1000;
  g_high_bound = 0x1000;  // an empty range
  EXPECT_FALSE(CheckCodeCache(*layout).ok());
  g_high_bound = 0x9000;
  EXPECT_FALSE(CheckCodeCache(*layout).ok());  // no heap list
}

TEST(HotSpotLayoutTest, WithoutJvmciTheEnvFollowsTheAnchor) {
  std::vector<Entry> entries = HotSpotLike();
  entries.erase(entries.begin() + 4);  // no JavaThread::_jni_environment (a JVM without JVMCI)
  Result<HotSpotLayout> layout = Read(entries);
  ASSERT_TRUE(layout.ok()) << layout.status().message();
  EXPECT_TRUE(layout->thread_env_offset_derived);
  EXPECT_EQ(layout->thread_env_offset, 760u + 4 * sizeof(void*));
}

TEST(HotSpotLayoutTest, AMissingEntryIsNamed) {
  std::vector<Entry> entries = HotSpotLike();
  entries.erase(entries.begin() + 3);  // no JavaThread::_thread_state
  Result<HotSpotLayout> layout = Read(entries);
  ASSERT_FALSE(layout.ok());
  EXPECT_NE(layout.status().message().find("JavaThread::_thread_state"), std::string::npos);
}

TEST(HotSpotLayoutTest, StaticEntriesAndImplausibleTablesAreRefused) {
  std::vector<Entry> entries = HotSpotLike();
  entries[3].is_static = 1;  // a static _thread_state is not the field we want
  EXPECT_FALSE(Read(entries).ok());

  entries = HotSpotLike();
  entries[2].offset = uint64_t{1} << 40;
  Result<HotSpotLayout> layout = Read(entries);
  ASSERT_FALSE(layout.ok());
  EXPECT_NE(layout.status().message().find("implausible"), std::string::npos);

  const VmTypesTable types = TypesOf(HotSpotLikeTypes());
  VmStructsTable table = TableOf(entries);
  table.stride = 0;
  EXPECT_FALSE(ReadHotSpotLayout(table, types).ok());
  table = TableOf(entries);
  table.offset_offset = table.stride + 8;
  EXPECT_FALSE(ReadHotSpotLayout(table, types).ok());
  EXPECT_FALSE(ReadHotSpotLayout(VmStructsTable{}, types).ok());
  EXPECT_FALSE(ReadHotSpotLayout(TableOf(HotSpotLike()), VmTypesTable{}).ok());
}

// HotSpot 17's JVMFlag as far as the reader cares (the layout comes from the table, not from here).
struct FakeFlag {
  void* addr;
  const char* name;
  int16_t flags;
  int16_t type;  // 0 bool, 1 int, ...
};

bool g_debug_non_safepoints = false;
int g_other_flag = 0;
FakeFlag g_flags[] = {
    {&g_other_flag, "MaxInlineSize", 0, 1},
    {&g_debug_non_safepoints, "DebugNonSafepoints", 0, 0},
    {nullptr, nullptr, 0, 0},
};
FakeFlag* g_flag_table = g_flags;
uint64_t g_flag_count = 2;

std::vector<Entry> FlagTable(const char* type_string = "short") {
  return {
      {"JVMFlag", "_addr", nullptr, 0, offsetof(FakeFlag, addr), nullptr},
      {"JVMFlag", "_name", "const char*", 0, offsetof(FakeFlag, name), nullptr},
      {"JVMFlag", "_flags", "JVMFlag::Flags", 0, offsetof(FakeFlag, flags), nullptr},
      {"JVMFlag", "_type", type_string, 0, offsetof(FakeFlag, type), nullptr},
      {"JVMFlag", "flags", "JVMFlag*", 1, 0, &g_flag_table},
      {"JVMFlag", "numFlags", "size_t", 1, 0, &g_flag_count},
      {nullptr, nullptr, nullptr, 0, 0, nullptr},
  };
}

const std::vector<TypeEntry>& FlagTypes() {
  static const std::vector<TypeEntry> types = {
      {"JVMFlag", nullptr, 0, 0, 0, sizeof(FakeFlag)},
      {"JVMFlag::Flags", nullptr, 0, 1, 0, sizeof(int16_t)},
      {nullptr, nullptr, 0, 0, 0, 0},
  };
  return types;
}

TEST(HotSpotLayoutTest, FindsABoolFlagsValueAndWhetherItWasSet) {
  std::vector<Entry> entries = FlagTable();
  Result<BoolFlag> flag =
      FindBoolFlag(TableOf(entries), TypesOf(FlagTypes()), "DebugNonSafepoints");
  ASSERT_TRUE(flag.ok()) << flag.status().message();
  EXPECT_EQ(flag->value, &g_debug_non_safepoints);
  EXPECT_FALSE(flag->set_explicitly);

  g_flags[1].flags = 1;  // COMMAND_LINE
  flag = FindBoolFlag(TableOf(entries), TypesOf(FlagTypes()), "DebugNonSafepoints");
  g_flags[1].flags = 0;
  ASSERT_TRUE(flag.ok());
  EXPECT_TRUE(flag->set_explicitly);
}

TEST(HotSpotLayoutTest, AFlagThatIsNotABoolOrNotThereIsRefused) {
  std::vector<Entry> entries = FlagTable();
  const VmTypesTable types = TypesOf(FlagTypes());
  Result<BoolFlag> flag = FindBoolFlag(TableOf(entries), types, "MaxInlineSize");
  ASSERT_FALSE(flag.ok());
  EXPECT_NE(flag.status().message().find("not a bool"), std::string::npos);
  EXPECT_FALSE(FindBoolFlag(TableOf(entries), types, "NoSuchFlag").ok());

  entries.erase(entries.begin() + 3);  // no _type: the flag's type cannot be checked
  flag = FindBoolFlag(TableOf(entries), types, "DebugNonSafepoints");
  ASSERT_FALSE(flag.ok());
  EXPECT_NE(flag.status().message().find("JVMFlag::_type"), std::string::npos);

  entries = FlagTable("double");  // a _type the reader does not know
  EXPECT_FALSE(FindBoolFlag(TableOf(entries), types, "DebugNonSafepoints").ok());
  uint64_t saved = g_flag_count;
  g_flag_count = 1'000'000;  // not a flag table
  EXPECT_FALSE(FindBoolFlag(TableOf(FlagTable()), types, "DebugNonSafepoints").ok());
  g_flag_count = saved;
  EXPECT_FALSE(FindBoolFlag(TableOf(FlagTable()), VmTypesTable{}, "DebugNonSafepoints").ok());
  EXPECT_FALSE(FindBoolFlag(VmStructsTable{}, types, "DebugNonSafepoints").ok());
}

TEST(HotSpotLayoutTest, OutsideAJvmThereIsNoTable) {
  EXPECT_FALSE(FindVmStructsTable().ok());
  EXPECT_FALSE(FindVmTypesTable().ok());
}

}  // namespace
}  // namespace sparkprof::agent
