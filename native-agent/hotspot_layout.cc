#include "native-agent/hotspot_layout.h"

#include <dlfcn.h>

#include <cstring>

namespace sparkprof::agent {
namespace {

// Offsets past this are not fields of a thread or an anchor: a table we misread.
constexpr uint64_t kMaxFieldOffset = 1u << 16;
// The last Java frame of the calling thread, if any, lies this close to a local variable.
constexpr uintptr_t kMaxStackDistance = 64u << 20;

struct Wanted {
  std::string_view type;
  std::string_view field;
  size_t HotSpotLayout::*member;
};

constexpr Wanted kWanted[] = {
    {"JavaThread", "_jni_environment", &HotSpotLayout::thread_env_offset},
    {"JavaThread", "_thread_state", &HotSpotLayout::thread_state_offset},
    {"JavaThread", "_anchor", &HotSpotLayout::thread_anchor_offset},
    {"JavaFrameAnchor", "_last_Java_sp", &HotSpotLayout::anchor_sp_offset},
    {"JavaFrameAnchor", "_last_Java_pc", &HotSpotLayout::anchor_pc_offset},
};

template <typename T>
T ReadAt(const void* base, uint64_t offset) {
  T value;
  std::memcpy(&value, static_cast<const char*>(base) + offset, sizeof(T));
  return value;
}

template <typename T>
Result<T> ExportedValue(const char* symbol) {
  void* address = dlsym(RTLD_DEFAULT, symbol);
  if (address == nullptr) return NotFound(std::string("libjvm exports no ") + symbol);
  return *static_cast<const T*>(address);
}

}  // namespace

Result<HotSpotLayout> ReadHotSpotLayout(const VmStructsTable& table) {
  if (table.entries == nullptr || table.stride == 0 || table.stride > 1024) {
    return InvalidArgument("the VM structure table is empty or its entry size is implausible");
  }
  for (uint64_t field : {table.type_name_offset, table.field_name_offset, table.is_static_offset,
                         table.offset_offset}) {
    if (field >= table.stride) return InvalidArgument("a VM structure entry field lies past it");
  }
  HotSpotLayout layout;
  bool found[std::size(kWanted)] = {};
  // HotSpot's table has a few thousand entries; more means we are not reading a table.
  constexpr int kMaxEntries = 100'000;
  const char* entry = static_cast<const char*>(table.entries);
  for (int i = 0; i < kMaxEntries; ++i, entry += table.stride) {
    auto type = ReadAt<const char*>(entry, table.type_name_offset);
    if (type == nullptr) break;
    auto field = ReadAt<const char*>(entry, table.field_name_offset);
    if (field == nullptr || ReadAt<int32_t>(entry, table.is_static_offset) != 0) continue;
    for (size_t w = 0; w < std::size(kWanted); ++w) {
      if (kWanted[w].type != type || kWanted[w].field != field) continue;
      auto offset = ReadAt<uint64_t>(entry, table.offset_offset);
      if (offset >= kMaxFieldOffset) {
        return InvalidArgument(std::string(type) + "::" + field + " has an implausible offset " +
                               std::to_string(offset));
      }
      layout.*kWanted[w].member = static_cast<size_t>(offset);
      found[w] = true;
    }
  }
  constexpr size_t kEnvWanted = 0, kAnchorWanted = 2;
  static_assert(kWanted[kEnvWanted].member == &HotSpotLayout::thread_env_offset);
  static_assert(kWanted[kAnchorWanted].member == &HotSpotLayout::thread_anchor_offset);
  if (!found[kEnvWanted] && found[kAnchorWanted]) {
    layout.thread_env_offset = layout.thread_anchor_offset + 4 * sizeof(void*);
    layout.thread_env_offset_derived = true;
    found[kEnvWanted] = true;
  }
  for (size_t w = 0; w < std::size(kWanted); ++w) {
    if (!found[w]) {
      return NotFound("the VM structure table has no " + std::string(kWanted[w].type) +
                      "::" + std::string(kWanted[w].field));
    }
  }
  return layout;
}

Result<VmStructsTable> FindVmStructsTable() {
  VmStructsTable table;
  SPARKPROF_ASSIGN_OR_RETURN(table.entries, ExportedValue<const void*>("gHotSpotVMStructs"));
  SPARKPROF_ASSIGN_OR_RETURN(table.stride,
                             ExportedValue<uint64_t>("gHotSpotVMStructEntryArrayStride"));
  SPARKPROF_ASSIGN_OR_RETURN(table.type_name_offset,
                             ExportedValue<uint64_t>("gHotSpotVMStructEntryTypeNameOffset"));
  SPARKPROF_ASSIGN_OR_RETURN(table.field_name_offset,
                             ExportedValue<uint64_t>("gHotSpotVMStructEntryFieldNameOffset"));
  SPARKPROF_ASSIGN_OR_RETURN(table.is_static_offset,
                             ExportedValue<uint64_t>("gHotSpotVMStructEntryIsStaticOffset"));
  SPARKPROF_ASSIGN_OR_RETURN(table.offset_offset,
                             ExportedValue<uint64_t>("gHotSpotVMStructEntryOffsetOffset"));
  return table;
}

Status CheckLayoutOnCurrentThread(const HotSpotLayout& layout, JNIEnv* env) {
  if (env == nullptr) return InvalidArgument("no JNIEnv to check the VM structures on");
  const char* thread = reinterpret_cast<const char*>(env) - layout.thread_env_offset;
  auto state = ReadAt<int32_t>(thread, layout.thread_state_offset);
  if (state != kThreadInNative) {
    return Unsupported("this thread's state reads " + std::to_string(state) +
                              " where 'in native' (4) was expected");
  }
  auto last_java_sp =
      ReadAt<uintptr_t>(thread, layout.thread_anchor_offset + layout.anchor_sp_offset);
  int local = 0;
  auto here = reinterpret_cast<uintptr_t>(&local);
  uintptr_t distance = last_java_sp > here ? last_java_sp - here : here - last_java_sp;
  if (last_java_sp != 0 && distance > kMaxStackDistance) {
    return Unsupported("this thread's last Java frame is not on its stack");
  }
  return Status::Ok();
}

}  // namespace sparkprof::agent
