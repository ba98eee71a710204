// Categories of task time, shared by the agent's frame classifier, the driver aggregator and the
// flame graph code. Same names and values as `enum Category` in schema/profile.fbs, so a schema
// value converts with a static_cast after a range check (CategoryFromSchemaValue).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace sparkprof {

enum class Category : uint8_t {
  kCompute = 0,
  kSerialization = 1,
  kS3aWrite = 2,
  kS3aRead = 3,
  kShuffleWrite = 4,
  kShuffleRead = 5,
  kSpill = 6,
  kFileIo = 7,
  kGc = 8,
  kOther = 9,
  // The JVM's own threads (JIT compilers; the VM thread and its helpers): executor CPU, never a
  // task's. gc covers GC threads' CPU as well as the pauses that stop tasks.
  kJit = 10,
  kVm = 11,
  // Off-CPU task time (wall samples of task threads, the part of a sample's interval the thread
  // was not running), by what the thread waited in: its Python worker (PythonRunner's socket),
  // shuffle blocks (the fetcher's queue), storage or network I/O (object store, HDFS, local disk,
  // JDBC), a monitor or java.util.concurrent lock, a sleep, or -- runnable but not running --
  // a CPU held by other threads (the kernel's run delay). off_cpu_other: off CPU in a frame no
  // wait rule names.
  kPythonWait = 12,
  kShuffleFetchWait = 13,
  kIoWait = 14,
  kLockWait = 15,
  kSleep = 16,
  kCpuStarved = 17,
  kOffCpuOther = 18,
  // The executor's Python workers, sampled in the worker per task (not task-thread time: the
  // task's thread meanwhile waits in python_wait): Python code on CPU, and the worker off CPU in
  // its own code (its I/O, sleeps, locks; not waiting for the JVM).
  kPython = 19,
  kPythonOffCpu = 20,
};

inline constexpr int kCategoryCount = 21;

inline constexpr std::array<std::string_view, kCategoryCount> kCategoryNames = {
    "compute",
    "serialization",
    "s3a_write",
    "s3a_read",
    "shuffle_write",
    "shuffle_read",
    "spill",
    "file_io",
    "gc",
    "other",
    "jit",
    "vm",
    "python_wait",
    "shuffle_fetch_wait",
    "io_wait",
    "lock_wait",
    "sleep",
    "cpu_starved",
    "off_cpu_other",
    "python",
    "python_off_cpu",
};

// True for the categories of time a task thread spent off CPU (waiting or runnable).
constexpr bool IsOffCpu(Category category) {
  return category >= Category::kPythonWait && category <= Category::kOffCpuOther;
}

// True for the Python workers' own time (kept apart from task-thread time, which it overlaps).
constexpr bool IsPythonWorker(Category category) {
  return category == Category::kPython || category == Category::kPythonOffCpu;
}

// The frame the agent puts above a Python worker's own frames, under the JVM frame that waited on
// the worker (native-agent/drain.h); flame graphs draw its subtree within that frame's wait.
inline constexpr std::string_view kPythonWorkerFrame = "[python worker]";

constexpr int CategoryIndex(Category category) { return static_cast<int>(category); }

// "compute", "serialization", "s3a_write", ... (the schema's spelling); "other" when out of range.
constexpr std::string_view CategoryName(Category category) {
  int index = CategoryIndex(category);
  return index >= 0 && index < kCategoryCount ? kCategoryNames[index] : "other";
}

// Inverse of CategoryName; nullopt for an unknown name.
constexpr std::optional<Category> ParseCategory(std::string_view name) {
  for (int i = 0; i < kCategoryCount; ++i) {
    if (kCategoryNames[i] == name) return static_cast<Category>(i);
  }
  return std::nullopt;
}

// Category from a raw schema value; nullopt when out of range (a newer writer or a corrupt file).
constexpr std::optional<Category> CategoryFromSchemaValue(uint32_t value) {
  if (value >= static_cast<uint32_t>(kCategoryCount)) return std::nullopt;
  return static_cast<Category>(value);
}

}  // namespace sparkprof
