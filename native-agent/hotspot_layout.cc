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
  bool is_static = false;             // the member takes the field's address, not its offset
  std::string_view type_string = "";  // "" = any; else the C++ type the walker reads it as
};

constexpr Wanted kWanted[] = {
    {"JavaThread", "_jni_environment", &HotSpotLayout::thread_env_offset},
    {"JavaThread", "_thread_state", &HotSpotLayout::thread_state_offset},
    {"JavaThread", "_anchor", &HotSpotLayout::thread_anchor_offset},
    {"JavaFrameAnchor", "_last_Java_sp", &HotSpotLayout::anchor_sp_offset},
    {"JavaFrameAnchor", "_last_Java_pc", &HotSpotLayout::anchor_pc_offset},
    {"JavaFrameAnchor", "_last_Java_fp", &HotSpotLayout::anchor_fp_offset},
    {"CodeCache", "_heaps", &HotSpotLayout::code_heaps_address, true},
    {"CodeCache", "_low_bound", &HotSpotLayout::code_low_bound_address, true, "address"},
    {"CodeCache", "_high_bound", &HotSpotLayout::code_high_bound_address, true, "address"},
    {"GrowableArrayBase", "_len", &HotSpotLayout::array_length_offset, false, "int"},
    {"GrowableArray<int>", "_data", &HotSpotLayout::array_data_offset},
    {"CodeHeap", "_memory", &HotSpotLayout::heap_memory_offset, false, "VirtualSpace"},
    {"CodeHeap", "_segmap", &HotSpotLayout::heap_segment_map_offset, false, "VirtualSpace"},
    {"CodeHeap", "_log2_segment_size", &HotSpotLayout::heap_log2_segment_offset, false, "int"},
    {"VirtualSpace", "_low", &HotSpotLayout::space_low_offset, false, "char*"},
    {"VirtualSpace", "_high", &HotSpotLayout::space_high_offset, false, "char*"},
    {"HeapBlock", "_header", &HotSpotLayout::block_header_offset},
    {"HeapBlock::Header", "_used", &HotSpotLayout::block_used_offset, false, "bool"},
    {"CodeBlob", "_name", &HotSpotLayout::blob_name_offset, false, "const char*"},
    {"CodeBlob", "_size", &HotSpotLayout::blob_size_offset, false, "int"},
    {"CodeBlob", "_frame_size", &HotSpotLayout::blob_frame_size_offset, false, "int"},
    // One of the two, by JDK: CompiledMethod went away in JDK 23.
    {"CompiledMethod", "_method", &HotSpotLayout::nmethod_method_offset, false, "Method*"},
    {"nmethod", "_method", &HotSpotLayout::nmethod_method_offset, false, "Method*"},
    {"Method", "_constMethod", &HotSpotLayout::method_const_offset, false, "ConstMethod*"},
    {"ConstMethod", "_constants", &HotSpotLayout::const_method_constants_offset, false,
     "ConstantPool*"},
    {"ConstMethod", "_method_idnum", &HotSpotLayout::const_method_idnum_offset, false, "u2"},
    {"ConstantPool", "_pool_holder", &HotSpotLayout::pool_holder_offset, false, "InstanceKlass*"},
    {"InstanceKlass", "_methods_jmethod_ids", &HotSpotLayout::klass_method_ids_offset, false,
     "jmethodID*"},
    {"JavaThread", "_stack_base", &HotSpotLayout::thread_stack_base_offset, false, "address"},
    {"JavaThread", "_stack_size", &HotSpotLayout::thread_stack_size_offset, false, "size_t"},
    {"JavaThread", "_vframe_array_head", &HotSpotLayout::thread_vframe_array_offset, false,
     "vframeArray*"},
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

Result<size_t> TypeSize(const VmTypesTable& types, std::string_view wanted) {
  if (types.entries == nullptr || types.stride == 0 || types.stride > 1024 ||
      types.type_name_offset >= types.stride || types.size_offset >= types.stride) {
    return InvalidArgument("the VM type table is empty or its entry size is implausible");
  }
  constexpr int kMaxEntries = 100'000;
  const char* entry = static_cast<const char*>(types.entries);
  for (int i = 0; i < kMaxEntries; ++i, entry += types.stride) {
    auto type = ReadAt<const char*>(entry, types.type_name_offset);
    if (type == nullptr) break;
    if (wanted == type) return static_cast<size_t>(ReadAt<uint64_t>(entry, types.size_offset));
  }
  return NotFound("the VM type table has no " + std::string(wanted));
}

// One entry of HotSpot's structure table (vmStructs.cpp's VMStructEntry), read through the
// offsets libjvm exports.
struct VmStructEntry {
  const char* type;   // never null
  const char* field;  // never null
  bool is_static;
  const char* type_string;  // the field's C++ type, may be null
  uint64_t offset;          // non-static fields
  uintptr_t address;        // static fields
};

Status CheckVmStructsTable(const VmStructsTable& table) {
  if (table.entries == nullptr || table.stride == 0 || table.stride > 1024) {
    return InvalidArgument("the VM structure table is empty or its entry size is implausible");
  }
  for (uint64_t field : {table.type_name_offset, table.field_name_offset, table.is_static_offset,
                         table.offset_offset, table.type_string_offset, table.address_offset}) {
    if (field >= table.stride) return InvalidArgument("a VM structure entry field lies past it");
  }
  return Status();
}

// Calls `visit(const VmStructEntry&)` for each entry of a table CheckVmStructsTable accepted, up
// to its end (a null type name) or until `visit` returns false. HotSpot's table has a few
// thousand entries; more than kMaxEntries means we are not reading a table.
template <typename Visit>
void ForEachVmStructEntry(const VmStructsTable& table, Visit visit) {
  constexpr int kMaxEntries = 100'000;
  const char* entry = static_cast<const char*>(table.entries);
  for (int i = 0; i < kMaxEntries; ++i, entry += table.stride) {
    VmStructEntry read;
    read.type = ReadAt<const char*>(entry, table.type_name_offset);
    if (read.type == nullptr) return;
    read.field = ReadAt<const char*>(entry, table.field_name_offset);
    if (read.field == nullptr) continue;
    read.is_static = ReadAt<int32_t>(entry, table.is_static_offset) != 0;
    read.type_string = ReadAt<const char*>(entry, table.type_string_offset);
    read.offset = ReadAt<uint64_t>(entry, table.offset_offset);
    read.address = ReadAt<uintptr_t>(entry, table.address_offset);
    if (!visit(read)) return;
  }
}

}  // namespace

Result<HotSpotLayout> ReadHotSpotLayout(const VmStructsTable& table, const VmTypesTable& types) {
  SPARKPROF_RETURN_IF_ERROR(CheckVmStructsTable(table));
  HotSpotLayout layout;
  bool found[std::size(kWanted)] = {};
  Status bad;
  ForEachVmStructEntry(table, [&](const VmStructEntry& entry) {
    for (size_t w = 0; w < std::size(kWanted); ++w) {
      const Wanted& wanted = kWanted[w];
      if (wanted.type != entry.type || wanted.field != entry.field ||
          wanted.is_static != entry.is_static) {
        continue;
      }
      const std::string name = std::string(entry.type) + "::" + entry.field;
      if (!wanted.type_string.empty() &&
          (entry.type_string == nullptr || wanted.type_string != entry.type_string)) {
        bad = InvalidArgument(name + " has type " +
                              (entry.type_string ? entry.type_string : "(none)") + " where " +
                              std::string(wanted.type_string) + " was expected");
        return false;
      }
      if (entry.is_static) {
        if (entry.address == 0 || entry.address % sizeof(void*) != 0) {
          bad = InvalidArgument(name + " has no usable address");
          return false;
        }
        layout.*wanted.member = entry.address;
      } else {
        if (entry.offset >= kMaxFieldOffset) {
          bad =
              InvalidArgument(name + " has an implausible offset " + std::to_string(entry.offset));
          return false;
        }
        layout.*wanted.member = static_cast<size_t>(entry.offset);
      }
      found[w] = true;
    }
    return true;
  });
  SPARKPROF_RETURN_IF_ERROR(bad);
  constexpr size_t kEnvWanted = 0, kAnchorWanted = 2;
  static_assert(kWanted[kEnvWanted].member == &HotSpotLayout::thread_env_offset);
  static_assert(kWanted[kAnchorWanted].member == &HotSpotLayout::thread_anchor_offset);
  if (!found[kEnvWanted] && found[kAnchorWanted]) {
    layout.thread_env_offset = layout.thread_anchor_offset + 4 * sizeof(void*);
    layout.thread_env_offset_derived = true;
    found[kEnvWanted] = true;
  }
  for (size_t w = 0; w < std::size(kWanted); ++w) {
    bool member_found = false;  // entries that fill the same member are alternatives
    for (size_t other = 0; other < std::size(kWanted); ++other) {
      member_found |= found[other] && kWanted[other].member == kWanted[w].member;
    }
    if (!member_found) {
      return NotFound("the VM structure table has no " + std::string(kWanted[w].type) +
                      "::" + std::string(kWanted[w].field));
    }
  }
  // The header's _used as an offset from the block's start.
  layout.block_used_offset += layout.block_header_offset;
  SPARKPROF_ASSIGN_OR_RETURN(layout.block_size, TypeSize(types, "HeapBlock"));
  if (layout.block_size == 0 || layout.block_size > 64 ||
      layout.block_used_offset >= layout.block_size) {
    return InvalidArgument("HeapBlock's size " + std::to_string(layout.block_size) +
                           " is implausible");
  }
  return layout;
}

Result<uintptr_t> StaticFieldAddress(const VmStructsTable& table, std::string_view type,
                                     std::string_view field) {
  uintptr_t address = 0;
  if (CheckVmStructsTable(table).ok()) {
    ForEachVmStructEntry(table, [&](const VmStructEntry& entry) {
      if (type != entry.type || field != entry.field) return true;
      if (entry.is_static && entry.address != 0 && entry.address % sizeof(void*) == 0) {
        address = entry.address;
      }
      return false;  // the first entry of that name decides
    });
  }
  if (address == 0) {
    return NotFound("the VM structure table has no usable static " + std::string(type) +
                    "::" + std::string(field));
  }
  return address;
}

Result<BoolFlag> FindBoolFlag(const VmStructsTable& table, const VmTypesTable& types,
                              std::string_view name) {
  SPARKPROF_RETURN_IF_ERROR(CheckVmStructsTable(table));
  // JVMFlag's entries: offsets (or, for the two statics, addresses) and their C++ types.
  struct Entry {
    std::string_view field;
    bool is_static;
    uint64_t value = 0;
    const char* type_string = nullptr;
    bool found = false;
  };
  Entry entries[] = {{"_name", false}, {"_addr", false}, {"_flags", false},
                     {"_type", false}, {"flags", true},  {"numFlags", true}};
  enum { kName, kAddr, kFlags, kType, kTable, kCount };
  ForEachVmStructEntry(table, [&](const VmStructEntry& entry) {
    if (std::string_view(entry.type) != "JVMFlag") return true;
    for (Entry& wanted : entries) {
      if (wanted.field != entry.field || wanted.is_static != entry.is_static) continue;
      wanted.value = entry.is_static ? entry.address : entry.offset;
      wanted.type_string = entry.type_string;
      wanted.found = true;
    }
    return true;
  });
  for (const Entry& wanted : entries) {
    if (!wanted.found) {
      return NotFound("the VM structure table has no JVMFlag::" + std::string(wanted.field));
    }
    if (wanted.is_static ? (wanted.value == 0 || wanted.value % sizeof(void*) != 0)
                         : wanted.value >= kMaxFieldOffset) {
      return InvalidArgument("JVMFlag::" + std::string(wanted.field) + " reads implausibly");
    }
  }
  SPARKPROF_ASSIGN_OR_RETURN(size_t flag_size, TypeSize(types, "JVMFlag"));
  // The type's value: an enum whose first member is bool (HotSpot 16 and later: int or short),
  // or the type's name (HotSpot 11: const char*).
  const std::string_view type_type =
      entries[kType].type_string != nullptr ? entries[kType].type_string : "";
  const std::string_view flags_type =
      entries[kFlags].type_string != nullptr ? entries[kFlags].type_string : "";
  SPARKPROF_ASSIGN_OR_RETURN(size_t flags_size, TypeSize(types, flags_type));
  if (flag_size < 16 || flag_size > 256 ||
      (flags_size != 1 && flags_size != 2 && flags_size != 4) ||
      (type_type != "int" && type_type != "short" && type_type != "const char*")) {
    return InvalidArgument("HotSpot's JVMFlag reads implausibly (size " +
                           std::to_string(flag_size) + ", _type " + std::string(type_type) + ")");
  }
  const auto* flags = ReadAt<const char*>(reinterpret_cast<const void*>(entries[kTable].value), 0);
  const auto count = ReadAt<uint64_t>(reinterpret_cast<const void*>(entries[kCount].value), 0);
  if (flags == nullptr || count == 0 || count > 10'000) {
    return InvalidArgument("HotSpot's flag table holds " + std::to_string(count) + " flags");
  }
  for (uint64_t i = 0; i < count; ++i) {
    const char* flag = flags + i * flag_size;
    auto flag_name = ReadAt<const char*>(flag, entries[kName].value);
    if (flag_name == nullptr || name != flag_name) continue;
    bool is_bool = false;
    if (type_type == "const char*") {
      auto type_name = ReadAt<const char*>(flag, entries[kType].value);
      is_bool = type_name != nullptr && std::string_view(type_name) == "bool";
    } else {
      is_bool = (type_type == "int" ? ReadAt<int32_t>(flag, entries[kType].value)
                                    : ReadAt<int16_t>(flag, entries[kType].value)) == 0;
    }
    if (!is_bool) return InvalidArgument("-XX:" + std::string(name) + " is not a bool flag");
    BoolFlag found;
    found.value = ReadAt<bool*>(flag, entries[kAddr].value);
    if (found.value == nullptr) return InvalidArgument(std::string(name) + " has no value");
    uint32_t origin = 0;  // JVMFlag::Flags' low four bits: where the value came from, 0 default
    std::memcpy(&origin, flag + entries[kFlags].value, flags_size);
    found.set_explicitly = (origin & 0xF) != 0;
    return found;
  }
  return NotFound("HotSpot's flag table has no " + std::string(name));
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
  SPARKPROF_ASSIGN_OR_RETURN(table.type_string_offset,
                             ExportedValue<uint64_t>("gHotSpotVMStructEntryTypeStringOffset"));
  SPARKPROF_ASSIGN_OR_RETURN(table.address_offset,
                             ExportedValue<uint64_t>("gHotSpotVMStructEntryAddressOffset"));
  return table;
}

Result<HotSpotTables> FindHotSpotTables() {
  HotSpotTables tables;
  SPARKPROF_ASSIGN_OR_RETURN(tables.structs, FindVmStructsTable());
  SPARKPROF_ASSIGN_OR_RETURN(tables.types, FindVmTypesTable());
  return tables;
}

Result<VmTypesTable> FindVmTypesTable() {
  VmTypesTable types;
  SPARKPROF_ASSIGN_OR_RETURN(types.entries, ExportedValue<const void*>("gHotSpotVMTypes"));
  SPARKPROF_ASSIGN_OR_RETURN(types.stride,
                             ExportedValue<uint64_t>("gHotSpotVMTypeEntryArrayStride"));
  SPARKPROF_ASSIGN_OR_RETURN(types.type_name_offset,
                             ExportedValue<uint64_t>("gHotSpotVMTypeEntryTypeNameOffset"));
  SPARKPROF_ASSIGN_OR_RETURN(types.size_offset,
                             ExportedValue<uint64_t>("gHotSpotVMTypeEntrySizeOffset"));
  return types;
}

Status CheckMethodIdLookup(const HotSpotLayout& layout, jmethodID method_id) {
  // Each pointer is checked before it is followed: this runs outside the crash guard.
  auto usable = [](uintptr_t pointer) { return pointer >= 4096 && pointer % sizeof(void*) == 0; };
  const auto id = reinterpret_cast<uintptr_t>(method_id);
  if (!usable(id)) return Unsupported("this JVM's jmethodIDs are not pointers");
  const auto method = ReadAt<uintptr_t>(method_id, 0);
  const void* const_method =
      usable(method)
          ? ReadAt<const void*>(reinterpret_cast<const void*>(method), layout.method_const_offset)
          : nullptr;
  if (!usable(reinterpret_cast<uintptr_t>(const_method))) {
    return Unsupported("a jmethodID does not lead to a Method with a ConstMethod");
  }
  auto constants = ReadAt<const void*>(const_method, layout.const_method_constants_offset);
  auto idnum = ReadAt<uint16_t>(const_method, layout.const_method_idnum_offset);
  auto holder = usable(reinterpret_cast<uintptr_t>(constants))
                    ? ReadAt<const void*>(constants, layout.pool_holder_offset)
                    : nullptr;
  auto ids = usable(reinterpret_cast<uintptr_t>(holder))
                 ? ReadAt<const uintptr_t*>(holder, layout.klass_method_ids_offset)
                 : nullptr;
  if (!usable(reinterpret_cast<uintptr_t>(ids)) || idnum >= ids[0] || ids[idnum + 1] != id) {
    return Unsupported("a method's jmethodID is not found again from its class");
  }
  return Status::Ok();
}

Status CheckCodeCache(const HotSpotLayout& layout) {
  auto low_bound =
      ReadAt<uintptr_t>(reinterpret_cast<const void*>(layout.code_low_bound_address), 0);
  auto high_bound =
      ReadAt<uintptr_t>(reinterpret_cast<const void*>(layout.code_high_bound_address), 0);
  if (low_bound == 0 || high_bound <= low_bound) {
    return Unsupported("the code cache's bounds are not a range");
  }
  auto heaps = ReadAt<const char*>(reinterpret_cast<const void*>(layout.code_heaps_address), 0);
  if (heaps == nullptr || reinterpret_cast<uintptr_t>(heaps) % sizeof(void*) != 0) {
    return Unsupported("the code cache has no heap list");
  }
  auto count = ReadAt<int32_t>(heaps, layout.array_length_offset);
  auto data = ReadAt<const char* const*>(heaps, layout.array_data_offset);
  if (count < 1 || count > kMaxCodeHeaps || data == nullptr) {
    return Unsupported("the code cache lists " + std::to_string(count) + " heaps");
  }
  for (int32_t i = 0; i < count; ++i) {
    const char* heap = data[i];
    if (heap == nullptr) return Unsupported("a code heap is null");
    auto low = ReadAt<uintptr_t>(heap, layout.heap_memory_offset + layout.space_low_offset);
    auto high = ReadAt<uintptr_t>(heap, layout.heap_memory_offset + layout.space_high_offset);
    auto map_low =
        ReadAt<uintptr_t>(heap, layout.heap_segment_map_offset + layout.space_low_offset);
    auto log2_segment = ReadAt<int32_t>(heap, layout.heap_log2_segment_offset);
    if (low == 0 || high < low || low < low_bound || high > high_bound || map_low == 0 ||
        log2_segment < kMinLog2Segment || log2_segment > kMaxLog2Segment) {
      return Unsupported("code heap " + std::to_string(i) + " does not read as one");
    }
  }
  return Status::Ok();
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
