// The JVM's own memory accounts, read without touching its heap (issue 29 goal 1): HotSpot keeps
// its performance counters (the "jvmstat" counters jstat reads) in one region of plain memory --
// a prologue, then entries of name, type and value -- and updates them in place. The agent finds
// the region through HotSpot's exported structure table (PerfMemory::_start and ::_capacity; it
// is there whether or not the JVM also shares it as /tmp/hsperfdata_<user>/<pid>), indexes the
// entries it wants once, and then reads their 8-byte values: no call into the JVM, no allocation
// in its heap, no safepoint. From them: heap used, committed and max, per pool (eden, survivor,
// old: the generations' spaces), metaspace and compressed class space, live Java threads, and the
// collections so far. After-GC occupancy: the GC-finish callback (world stopped) reads the heap's
// and the old generation's use right after each stop-the-world collection.
//
// The heap's committed and maximum size, and direct and mapped byte buffers, come from Java:
// Runtime.totalMemory/maxMemory (native methods returning a long: the collector's own figures,
// which the counters spread over generations in collector-specific ways) and java.nio's statics
// (Bits, FileChannelImpl$Unmapper) through JNI field reads -- no allocation either
// (JavaMemoryFigures). Figures this JVM does not keep stay 0 (-XX:-UsePerfData, another JDK's
// field names).
#pragma once

#include <jni.h>
#include <jvmti.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace sparkprof::agent {

// One counter of the region, as indexed: its name and, for an 8-byte scalar, where its value is.
struct PerfCounter {
  std::string name;
  const volatile int64_t* value = nullptr;  // 'J' scalars; null for others
  std::string text;                         // 'B' vectors (strings such as a space's name)
};

// Parses the counter region at `base` (`capacity` bytes): the prologue (magic 0xcafec0c0 in the
// JVM's byte order, version 2, accessible) and every entry it lists, each checked to lie inside
// the region. An error names the offset and what was wrong. `keep` picks the counters kept.
Result<std::vector<PerfCounter>> ParsePerfCounters(const char* base, size_t capacity,
                                                   bool (*keep)(std::string_view name));

struct HeapPool {
  std::string name;  // "eden", "survivor", "old" (the counters' space names, survivors summed)
  uint64_t used_bytes = 0;
  uint64_t committed_bytes = 0;
  uint64_t max_bytes = 0;
};

struct JvmMemoryReading {
  bool known = false;            // the counters were found
  uint64_t heap_used_bytes = 0;  // the generations' spaces summed, as the counters last had it
  std::vector<HeapPool> pools;
  uint64_t metaspace_used_bytes = 0;
  uint64_t metaspace_committed_bytes = 0;
  uint64_t class_space_used_bytes = 0;
  uint32_t java_threads = 0;
  uint64_t collections = 0;  // all collectors' invocations so far
  // Right after the last stop-the-world collection (0: none seen yet).
  uint64_t heap_used_after_gc_bytes = 0;
  uint64_t old_used_after_gc_bytes = 0;
  uint64_t gc_finishes = 0;  // collections whose end the agent saw
};

class JvmCounters {
 public:
  // Finds and indexes the region of this process's JVM; an error says why not (then the JVM
  // figures stay 0).
  static Result<JvmCounters*> OpenInProcess();
  // Over a region given by its address (tests, and OpenInProcess).
  static Result<JvmCounters*> Open(const char* base, size_t capacity);

  JvmMemoryReading Read() const;
  // From the GarbageCollectionFinish callback: plain loads and atomic stores only.
  void OnGcFinish();

 private:
  JvmCounters() = default;
  struct Space {
    int generation = 0;
    std::string name;
    const volatile int64_t* used = nullptr;
    const volatile int64_t* capacity = nullptr;
    const volatile int64_t* max_capacity = nullptr;
  };
  struct Generation {
    const volatile int64_t* capacity = nullptr;
    const volatile int64_t* max_capacity = nullptr;
  };
  uint64_t HeapUsed() const;
  uint64_t OldUsed() const;

  std::vector<Space> spaces_;
  std::vector<Generation> generations_;
  const volatile int64_t* metaspace_used_ = nullptr;
  const volatile int64_t* metaspace_capacity_ = nullptr;
  const volatile int64_t* class_space_used_ = nullptr;
  const volatile int64_t* threads_live_ = nullptr;
  std::vector<const volatile int64_t*> invocations_;
  int old_generation_ = -1;  // 1 with a young and an old generation, else -1
  std::atomic<uint64_t> heap_after_gc_{0};
  std::atomic<uint64_t> old_after_gc_{0};
  std::atomic<uint64_t> gc_finishes_{0};
};

struct JavaMemoryReading {
  bool known = false;
  uint64_t heap_committed_bytes = 0;  // Runtime.totalMemory()
  uint64_t heap_max_bytes = 0;        // Runtime.maxMemory()
  uint64_t heap_free_bytes = 0;       // Runtime.freeMemory()
  // Runtime.totalMemory() - freeMemory(): the heap in use.
  uint64_t heap_used_bytes() const {
    return heap_committed_bytes > heap_free_bytes ? heap_committed_bytes - heap_free_bytes : 0;
  }
  bool buffers_known = false;
  uint64_t direct_bytes = 0;  // memory reserved by direct ByteBuffers (java.nio.Bits)
  uint64_t direct_count = 0;
  uint64_t direct_max_bytes = 0;  // -XX:MaxDirectMemorySize as the JDK applies it
  uint64_t mapped_bytes = 0;      // mapped buffers' size (FileChannel.map)
  uint64_t mapped_count = 0;
};

// Reads Runtime's heap figures and java.nio's buffer statics through JNI (native-method calls
// and field reads; every exception is cleared). Runtime is looked up on the first read; the
// buffer classes only once the JVM has initialized them itself (JVMTI GetClassStatus), so the
// agent never runs a class initializer. Call on a Java thread (a JNI call or an agent thread),
// one at a time.
class JavaMemoryFigures {
 public:
  JavaMemoryReading Read(JNIEnv* jni, jvmtiEnv* jvmti);
  // Runtime.totalMemory() - freeMemory(): the heap in use now (0 when unknown).
  uint64_t HeapUsed(JNIEnv* jni, jvmtiEnv* jvmti);
  static constexpr int kMaxBufferAttempts = 100;

 private:
  void Resolve(JNIEnv* jni, jvmtiEnv* jvmti);
  uint64_t CallLong(JNIEnv* jni, jmethodID method) const;
  bool runtime_resolved_ = false;
  int buffer_attempts_ = 0;
  int unmapper_attempts_ = 0;
  jclass runtime_class_ = nullptr;  // global references
  jobject runtime_ = nullptr;
  jmethodID total_ = nullptr, max_ = nullptr, free_ = nullptr;
  jclass bits_ = nullptr;
  jfieldID reserved_ = nullptr, count_ = nullptr, direct_max_ = nullptr, atomic_value_ = nullptr;
  jclass unmapper_ = nullptr;
  jfieldID mapped_size_ = nullptr, mapped_count_ = nullptr;
};

}  // namespace sparkprof::agent
