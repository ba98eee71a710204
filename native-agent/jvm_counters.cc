#include "native-agent/jvm_counters.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <map>

#include "native-agent/hotspot_layout.h"

namespace sparkprof::agent {
namespace {

// HotSpot's perfMemory.hpp / perfData.hpp, version 2.0: the prologue, then entries.
constexpr size_t kPrologueBytes = 32;
constexpr size_t kPrologueUsedOffset = 8;
constexpr size_t kPrologueEntryOffset = 24;
constexpr size_t kPrologueEntriesOffset = 28;
constexpr size_t kEntryHeaderBytes =
    20;  // length, name offset, vector length, 4 bytes, data offset
constexpr unsigned char kMagic[4] = {0xca, 0xfe, 0xc0, 0xc0};
// A counter name longer than this is not one HotSpot writes: a misread region.
constexpr size_t kMaxNameBytes = 1024;
// HotSpot creates a few hundred counters; far more means a misread region.
constexpr int32_t kMaxEntries = 100'000;
constexpr size_t kMaxTextBytes = 256;

int32_t Int32At(const char* base, size_t offset) {
  int32_t value;
  std::memcpy(&value, base + offset, sizeof(value));
  return value;
}

std::string At(size_t offset) { return "counter region offset " + std::to_string(offset) + ": "; }

// "sun.gc.generation.1.space.0.used" -> generation 1, space 0, "used"; false for other names.
bool SplitSpaceName(std::string_view name, int* generation, int* space, std::string_view* leaf) {
  constexpr std::string_view kPrefix = "sun.gc.generation.";
  if (!name.starts_with(kPrefix)) return false;
  name.remove_prefix(kPrefix.size());
  auto number = [&name](int* out) {
    const char* end = name.data() + name.size();
    auto [ptr, ec] = std::from_chars(name.data(), end, *out);
    if (ec != std::errc() || ptr == name.data() || *out < 0 || *out > 64) return false;
    name.remove_prefix(static_cast<size_t>(ptr - name.data()));
    return true;
  };
  if (!number(generation) || !name.starts_with(".")) return false;
  name.remove_prefix(1);
  *space = -1;
  if (name.starts_with("space.")) {
    name.remove_prefix(6);
    if (!number(space) || !name.starts_with(".")) return false;
    name.remove_prefix(1);
  }
  *leaf = name;
  return true;
}

bool KeepMemoryCounter(std::string_view name) {
  return name.starts_with("sun.gc.generation.") || name.starts_with("sun.gc.metaspace.") ||
         name.starts_with("sun.gc.compressedclassspace.") || name == "java.threads.live" ||
         (name.starts_with("sun.gc.collector.") && name.ends_with(".invocations"));
}

uint64_t Load(const volatile int64_t* value) {
  if (value == nullptr) return 0;
  const int64_t read = *value;
  return read > 0 ? static_cast<uint64_t>(read) : 0;
}

}  // namespace

Result<std::vector<PerfCounter>> ParsePerfCounters(const char* base, size_t capacity,
                                                   bool (*keep)(std::string_view name)) {
  if (base == nullptr || capacity < kPrologueBytes) {
    return InvalidArgument("the counter region is missing or smaller than its prologue");
  }
  if (std::memcmp(base, kMagic, sizeof(kMagic)) != 0) {
    return InvalidArgument(At(0) + "no 0xcafec0c0 magic: not a HotSpot counter region");
  }
  const auto major = static_cast<unsigned char>(base[5]);
  if (major != 2) {
    return Unsupported(At(5) + "counter region version " + std::to_string(major) +
                       " (this agent reads version 2)");
  }
  if (base[7] == 0) return Unsupported(At(7) + "the counter region is not accessible yet");
  const int32_t used = Int32At(base, kPrologueUsedOffset);
  const int32_t first = Int32At(base, kPrologueEntryOffset);
  const int32_t count = Int32At(base, kPrologueEntriesOffset);
  if (used < 0 || static_cast<size_t>(used) > capacity || first < 0 ||
      static_cast<size_t>(first) < kPrologueBytes || first > used || count < 0 ||
      count > kMaxEntries) {
    return InvalidArgument(At(kPrologueUsedOffset) + "implausible prologue (used " +
                           std::to_string(used) + ", first entry " + std::to_string(first) +
                           ", entries " + std::to_string(count) + ", capacity " +
                           std::to_string(capacity) + ")");
  }
  std::vector<PerfCounter> kept;
  size_t offset = static_cast<size_t>(first);
  const auto end = static_cast<size_t>(used);
  for (int32_t i = 0; i < count; ++i) {
    if (offset + kEntryHeaderBytes > end) {
      return InvalidArgument(At(offset) + "entry " + std::to_string(i) + " of " +
                             std::to_string(count) + " starts past the used bytes");
    }
    const int32_t length = Int32At(base, offset);
    const int32_t name_offset = Int32At(base, offset + 4);
    const int32_t vector_length = Int32At(base, offset + 8);
    const char type = base[offset + 12];
    const int32_t data_offset = Int32At(base, offset + 16);
    if (length < static_cast<int32_t>(kEntryHeaderBytes) ||
        static_cast<size_t>(length) > end - offset || name_offset < 0 || name_offset >= length ||
        data_offset < 0 || data_offset >= length || vector_length < 0) {
      return InvalidArgument(At(offset) + "entry " + std::to_string(i) +
                             " has an implausible length or offsets");
    }
    const char* entry = base + offset;
    const size_t name_room = static_cast<size_t>(length - name_offset);
    const char* name_start = entry + name_offset;
    const size_t name_bytes = strnlen(name_start, std::min(name_room, kMaxNameBytes + 1));
    if (name_bytes == 0 || name_bytes == name_room || name_bytes > kMaxNameBytes) {
      return InvalidArgument(At(offset + static_cast<size_t>(name_offset)) + "entry " +
                             std::to_string(i) + "'s name is empty, too long or unterminated");
    }
    const std::string_view name(name_start, name_bytes);
    if (keep == nullptr || keep(name)) {
      PerfCounter counter;
      counter.name = std::string(name);
      const size_t data_room = static_cast<size_t>(length - data_offset);
      if (type == 'J' && vector_length == 0 && data_room >= sizeof(int64_t) &&
          (reinterpret_cast<uintptr_t>(entry + data_offset) % alignof(int64_t)) == 0) {
        counter.value = reinterpret_cast<const volatile int64_t*>(entry + data_offset);
      } else if (type == 'B' && vector_length > 0) {
        const size_t room =
            std::min({static_cast<size_t>(vector_length), data_room, kMaxTextBytes});
        counter.text = std::string(entry + data_offset, strnlen(entry + data_offset, room));
      }
      kept.push_back(std::move(counter));
    }
    offset += static_cast<size_t>(length);
  }
  return kept;
}

Result<JvmCounters*> JvmCounters::Open(const char* base, size_t capacity) {
  SPARKPROF_ASSIGN_OR_RETURN(std::vector<PerfCounter> counters,
                             ParsePerfCounters(base, capacity, KeepMemoryCounter));
  auto* jvm = new JvmCounters();
  std::map<std::pair<int, int>, Space> spaces;
  std::map<int, Generation> generations;
  for (const PerfCounter& counter : counters) {
    int generation = 0, space = 0;
    std::string_view leaf;
    if (SplitSpaceName(counter.name, &generation, &space, &leaf)) {
      if (space >= 0) {
        Space& target = spaces[{generation, space}];
        target.generation = generation;
        if (leaf == "name") target.name = counter.text;
        if (leaf == "used") target.used = counter.value;
        if (leaf == "capacity") target.capacity = counter.value;
        if (leaf == "maxCapacity") target.max_capacity = counter.value;
      } else {
        Generation& target = generations[generation];
        if (leaf == "capacity") target.capacity = counter.value;
        if (leaf == "maxCapacity") target.max_capacity = counter.value;
      }
    } else if (counter.name == "sun.gc.metaspace.used") {
      jvm->metaspace_used_ = counter.value;
    } else if (counter.name == "sun.gc.metaspace.capacity") {
      jvm->metaspace_capacity_ = counter.value;
    } else if (counter.name == "sun.gc.compressedclassspace.used") {
      jvm->class_space_used_ = counter.value;
    } else if (counter.name == "java.threads.live") {
      jvm->threads_live_ = counter.value;
    } else if (counter.value != nullptr && counter.name.ends_with(".invocations")) {
      jvm->invocations_.push_back(counter.value);
    }
  }
  // HotSpot's generational collectors (Serial, Parallel, G1) count the young generation as 0 and
  // the old one as 1 (G1 names its old space "space", the others "old").
  for (auto& [key, space] : spaces) {
    if (space.used == nullptr) continue;
    if (space.generation == 1 && generations.size() == 2) {
      jvm->old_generation_ = 1;
      space.name = "old";
    }
    jvm->spaces_.push_back(std::move(space));
  }
  if (jvm->spaces_.empty()) {
    delete jvm;
    return NotFound("the counter region lists no heap spaces (sun.gc.generation.*.space.*)");
  }
  return jvm;
}

Result<JvmCounters*> JvmCounters::OpenInProcess() {
  SPARKPROF_ASSIGN_OR_RETURN(VmStructsTable table, FindVmStructsTable());
  SPARKPROF_ASSIGN_OR_RETURN(uintptr_t start_address,
                             StaticFieldAddress(table, "PerfMemory", "_start"));
  SPARKPROF_ASSIGN_OR_RETURN(uintptr_t capacity_address,
                             StaticFieldAddress(table, "PerfMemory", "_capacity"));
  const char* start = *reinterpret_cast<char* const*>(start_address);
  const size_t capacity = *reinterpret_cast<const size_t*>(capacity_address);
  if (start == nullptr || capacity == 0) {
    return NotFound("HotSpot keeps no performance counters (-XX:-UsePerfData?)");
  }
  return Open(start, capacity);
}

uint64_t JvmCounters::HeapUsed() const {
  uint64_t used = 0;
  for (const Space& space : spaces_) used += Load(space.used);
  return used;
}

uint64_t JvmCounters::OldUsed() const {
  uint64_t used = 0;
  for (const Space& space : spaces_) {
    if (space.generation == old_generation_) used += Load(space.used);
  }
  return used;
}

void JvmCounters::OnGcFinish() {
  heap_after_gc_.store(HeapUsed(), std::memory_order_relaxed);
  if (old_generation_ >= 0) old_after_gc_.store(OldUsed(), std::memory_order_relaxed);
  gc_finishes_.fetch_add(1, std::memory_order_relaxed);
}

JvmMemoryReading JvmCounters::Read() const {
  JvmMemoryReading reading;
  reading.known = true;
  reading.heap_used_bytes = HeapUsed();
  for (const Space& space : spaces_) {
    // Survivor spaces (s0, s1) are one pool, as the JVM's memory pools show them.
    const std::string name = space.name == "s0" || space.name == "s1" ? "survivor"
                             : space.name.empty() ? "space " + std::to_string(space.generation)
                                                  : space.name;
    HeapPool* pool = nullptr;
    for (HeapPool& existing : reading.pools) {
      if (existing.name == name) pool = &existing;
    }
    if (pool == nullptr) {
      reading.pools.push_back(HeapPool{name});
      pool = &reading.pools.back();
    }
    pool->used_bytes += Load(space.used);
    pool->committed_bytes += Load(space.capacity);
    pool->max_bytes += Load(space.max_capacity);
  }
  reading.metaspace_used_bytes = Load(metaspace_used_);
  reading.metaspace_committed_bytes = Load(metaspace_capacity_);
  reading.class_space_used_bytes = Load(class_space_used_);
  reading.java_threads = static_cast<uint32_t>(Load(threads_live_));
  for (const volatile int64_t* invocations : invocations_) reading.collections += Load(invocations);
  reading.heap_used_after_gc_bytes = heap_after_gc_.load(std::memory_order_relaxed);
  reading.old_used_after_gc_bytes = old_after_gc_.load(std::memory_order_relaxed);
  reading.gc_finishes = gc_finishes_.load(std::memory_order_relaxed);
  return reading;
}

namespace {

jclass GlobalClass(JNIEnv* jni, const char* name) {
  jclass local = jni->FindClass(name);
  if (local == nullptr) {
    jni->ExceptionClear();
    return nullptr;
  }
  auto global = static_cast<jclass>(jni->NewGlobalRef(local));
  jni->DeleteLocalRef(local);
  return global;
}

// A class the application has initialized already, as a global reference; null otherwise (the
// agent never runs a class's initializer: reading a static of an uninitialized class would).
jclass InitializedClass(JNIEnv* jni, jvmtiEnv* jvmti, const char* name) {
  jclass klass = GlobalClass(jni, name);
  if (klass == nullptr) return nullptr;
  jint status = 0;
  if (jvmti == nullptr || jvmti->GetClassStatus(klass, &status) != JVMTI_ERROR_NONE ||
      (status & JVMTI_CLASS_STATUS_INITIALIZED) == 0) {
    jni->DeleteGlobalRef(klass);
    return nullptr;
  }
  return klass;
}

jfieldID StaticField(JNIEnv* jni, jclass klass, const char* name, const char* signature) {
  if (klass == nullptr) return nullptr;
  jfieldID id = jni->GetStaticFieldID(klass, name, signature);
  if (id == nullptr) jni->ExceptionClear();
  return id;
}

}  // namespace

void JavaMemoryFigures::Resolve(JNIEnv* jni, jvmtiEnv* jvmti) {
  if (!runtime_resolved_) {
    runtime_resolved_ = true;
    if ((runtime_class_ = GlobalClass(jni, "java/lang/Runtime")) != nullptr) {
      jmethodID get = jni->GetStaticMethodID(runtime_class_, "getRuntime", "()Ljava/lang/Runtime;");
      total_ = jni->GetMethodID(runtime_class_, "totalMemory", "()J");
      max_ = jni->GetMethodID(runtime_class_, "maxMemory", "()J");
      free_ = jni->GetMethodID(runtime_class_, "freeMemory", "()J");
      if (jni->ExceptionCheck()) jni->ExceptionClear();
      if (get != nullptr) {
        jobject runtime = jni->CallStaticObjectMethod(runtime_class_, get);
        if (jni->ExceptionCheck()) jni->ExceptionClear();
        if (runtime != nullptr) {
          runtime_ = jni->NewGlobalRef(runtime);
          jni->DeleteLocalRef(runtime);
        }
      }
    }
  }
  // The buffer classes once the JVM initialized them itself (most JVMs do early: Netty and NIO
  // use direct buffers); tried again with later readings, at most kMaxBufferAttempts times.
  if (bits_ == nullptr && buffer_attempts_ < kMaxBufferAttempts) {
    ++buffer_attempts_;
    // JDK 11-25: static final AtomicLong RESERVED_MEMORY, COUNT; static volatile long MAX_MEMORY.
    if ((bits_ = InitializedClass(jni, jvmti, "java/nio/Bits")) != nullptr) {
      const char* atomic_long = "Ljava/util/concurrent/atomic/AtomicLong;";
      reserved_ = StaticField(jni, bits_, "RESERVED_MEMORY", atomic_long);
      count_ = StaticField(jni, bits_, "COUNT", atomic_long);
      direct_max_ = StaticField(jni, bits_, "MAX_MEMORY", "J");
      if (jclass atomic = jni->FindClass("java/util/concurrent/atomic/AtomicLong"); atomic) {
        atomic_value_ = jni->GetFieldID(atomic, "value", "J");
        if (atomic_value_ == nullptr) jni->ExceptionClear();
        jni->DeleteLocalRef(atomic);
      } else {
        jni->ExceptionClear();
      }
    }
  }
  if (unmapper_ == nullptr && unmapper_attempts_ < kMaxBufferAttempts) {
    ++unmapper_attempts_;
    // FileChannelImpl$DefaultUnmapper's static volatile int count, long totalSize (JDK 17-25;
    // JDK 11 kept them in $Unmapper). Initialized with the first mapped buffer.
    unmapper_ = InitializedClass(jni, jvmti, "sun/nio/ch/FileChannelImpl$DefaultUnmapper");
    if (unmapper_ == nullptr) {
      unmapper_ = InitializedClass(jni, jvmti, "sun/nio/ch/FileChannelImpl$Unmapper");
    }
    if (unmapper_ != nullptr) {
      mapped_size_ = StaticField(jni, unmapper_, "totalSize", "J");
      mapped_count_ = StaticField(jni, unmapper_, "count", "I");
    }
  }
  if (jni->ExceptionCheck()) jni->ExceptionClear();
}

uint64_t JavaMemoryFigures::CallLong(JNIEnv* jni, jmethodID method) const {
  if (runtime_ == nullptr || method == nullptr) return 0;
  const jlong value = jni->CallLongMethod(runtime_, method);
  if (jni->ExceptionCheck()) {
    jni->ExceptionClear();
    return 0;
  }
  return value > 0 ? static_cast<uint64_t>(value) : 0;
}

uint64_t JavaMemoryFigures::HeapUsed(JNIEnv* jni, jvmtiEnv* jvmti) {
  if (!runtime_resolved_) Resolve(jni, jvmti);
  JavaMemoryReading reading;
  reading.heap_committed_bytes = CallLong(jni, total_);
  reading.heap_free_bytes = CallLong(jni, free_);
  return reading.heap_used_bytes();
}

JavaMemoryReading JavaMemoryFigures::Read(JNIEnv* jni, jvmtiEnv* jvmti) {
  Resolve(jni, jvmti);
  JavaMemoryReading reading;
  reading.heap_committed_bytes = CallLong(jni, total_);
  reading.heap_max_bytes = CallLong(jni, max_);
  reading.heap_free_bytes = CallLong(jni, free_);
  reading.known = reading.heap_max_bytes > 0;
  auto atomic_long = [&](jfieldID field) -> uint64_t {
    if (field == nullptr || atomic_value_ == nullptr) return 0;
    jobject holder = jni->GetStaticObjectField(bits_, field);
    if (holder == nullptr) return 0;
    const jlong value = jni->GetLongField(holder, atomic_value_);
    jni->DeleteLocalRef(holder);
    return value > 0 ? static_cast<uint64_t>(value) : 0;
  };
  if (reserved_ != nullptr && atomic_value_ != nullptr) {
    reading.buffers_known = true;
    reading.direct_bytes = atomic_long(reserved_);
    reading.direct_count = atomic_long(count_);
    if (direct_max_ != nullptr) {
      const jlong max = jni->GetStaticLongField(bits_, direct_max_);
      reading.direct_max_bytes = max > 0 ? static_cast<uint64_t>(max) : 0;
    }
  }
  if (mapped_size_ != nullptr) {
    const jlong size = jni->GetStaticLongField(unmapper_, mapped_size_);
    reading.mapped_bytes = size > 0 ? static_cast<uint64_t>(size) : 0;
  }
  if (mapped_count_ != nullptr) {
    const jint count = jni->GetStaticIntField(unmapper_, mapped_count_);
    reading.mapped_count = count > 0 ? static_cast<uint64_t>(count) : 0;
  }
  return reading;
}

}  // namespace sparkprof::agent
