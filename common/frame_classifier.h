// Decides the category of a sample from its frames: the innermost frame that matches a strong
// rule wins; if none does, the innermost weak match; if none, the thread's name (helper pools such
// as s3a-transfer-*); otherwise compute. The rules are data, in frame_classifier_rules.cc.
//
// A small library of its own (sparkprof::frame_classifier) so the flame graph code can colour
// frames with the same rules.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "common/category.h"

namespace sparkprof::classifier {

// The project-wide categories (common/category.h, same values as schema/profile.fbs).
using ::sparkprof::Category;
using ::sparkprof::CategoryName;
using ::sparkprof::kCategoryCount;

// A weak rule names an outer frame that also runs other kinds of work inside it (e.g. the block
// writer used by both shuffle write and spill): it counts only when no strong rule matches.
// A fallback rule names a JDK primitive that every kind of work uses (FileOutputStream.writeBytes
// under shuffle, spill and user code alike): it counts only when no strong or weak rule and no
// thread-name rule matches, e.g. for an application's own file writes.
enum class Strength : uint8_t { kStrong, kWeak, kFallback };

struct FrameRule {
  // Fully qualified class; a trailing '*' makes it a prefix ("org.apache.parquet.*").
  std::string_view class_pattern;
  // '|'-separated method names that must match exactly; empty = any method.
  std::string_view methods;
  Category category;
  Strength strength;
};

struct ThreadNameRule {
  std::string_view name_prefix;
  Category category;
};

std::span<const FrameRule> FrameRules();
std::span<const ThreadNameRule> ThreadNameRules();

struct FrameMatch {
  Category category;
  Strength strength;
  int rule_index;  // into FrameRules()
};

// Matches one frame, "package.Class.method" (JVM internal '/' separators are accepted too).
std::optional<FrameMatch> ClassifyFrame(std::string_view frame);
std::optional<Category> ClassifyThreadName(std::string_view thread_name);

// `frames` innermost first. The result of ClassifyFrame for each frame may be supplied by the
// caller (cached) through `match_of`; this overload classifies the strings directly.
Category ClassifyStack(std::span<const std::string_view> frames_innermost_first,
                       std::string_view thread_name);

// Combines per-frame matches (innermost first) with the thread rule: the shared core.
Category CombineMatches(std::span<const std::optional<FrameMatch>> matches_innermost_first,
                        std::string_view thread_name);

// --- Off-CPU time: what a task thread waited in (mode cpu+wall). A waiting thread's innermost
// frames are a wait primitive (a socket or file read, a park, Object.wait, a sleep); the frame
// that encloses the primitive names what it waited for (PythonRunner's reader: its Python
// worker; ShuffleBlockFetcherIterator.next: shuffle blocks; Hadoop: storage I/O). So the wait
// rules come in two tables: the primitives, each with the category it gets when no enclosing
// rule applies, and the enclosing frames, each naming the primitives it applies to.

enum class WaitPrimitive : uint8_t {
  kNetwork = 0,      // socket reads, connects, selector waits
  kFile = 1,         // file reads and writes that block on the disk
  kPark = 2,         // LockSupport.park: java.util.concurrent locks, queues, futures
  kMonitorWait = 3,  // Object.wait
  kSleep = 4,        // Thread.sleep
};

constexpr uint8_t PrimitiveBit(WaitPrimitive primitive) {
  return static_cast<uint8_t>(1u << static_cast<unsigned>(primitive));
}

struct WaitPrimitiveRule {
  std::string_view class_pattern;  // as FrameRule
  std::string_view methods;
  WaitPrimitive primitive;
  Category category;  // when no enclosing WaitRule names the wait
};

struct WaitRule {
  std::string_view class_pattern;  // as FrameRule: an enclosing frame
  std::string_view methods;
  uint8_t primitives;  // PrimitiveBit()s of the primitives it names the wait of
  Category category;
  // kStrong: the innermost strong enclosing frame wins; kWeak (generic JDK frames such as
  // java.util.concurrent's) only when no strong one encloses the primitive.
  Strength strength;
};

std::span<const WaitPrimitiveRule> WaitPrimitiveRules();
std::span<const WaitRule> WaitRules();

// A primitive is looked for among the innermost kWaitLeafFrames frames only: a thread that
// waits is in it, deeper ones are code it called before.
inline constexpr int kWaitLeafFrames = 8;

struct WaitFrameMatch {
  int16_t primitive_rule = -1;  // into WaitPrimitiveRules(), -1: none
  int16_t wait_rule = -1;       // into WaitRules(), -1: none
};

// Matches one frame against both tables (first matching row of each).
WaitFrameMatch MatchWaitFrame(std::string_view frame);

// The category of a sample's off-CPU time. `blocked_in_jvm`: HotSpot had the thread blocked
// (_thread_blocked) -- with no wait primitive among its innermost frames, that is a thread
// blocked entering a monitor (a synchronized block), so lock_wait. With neither: off_cpu_other.
Category CombineWaitMatches(std::span<const WaitFrameMatch> matches_innermost_first,
                            bool blocked_in_jvm);
Category ClassifyOffCpuStack(std::span<const std::string_view> frames_innermost_first,
                             bool blocked_in_jvm);

// --- PySpark's JVM side, named once. The wait rules (a socket wait under these packages is
// python_wait), the analyzer's exchange sites and its Python patterns
// (analyzer/profile/stage_profiles.cc) all read these names.
inline constexpr std::string_view kPySparkRunnerPackage = "org.apache.spark.api.python.";
inline constexpr std::string_view kPySparkSqlPackage = "org.apache.spark.sql.execution.python.";
// Pyrolite: the pickler Spark uses for the rows it sends its Python workers.
inline constexpr std::string_view kPySparkPicklerPackage = "net.razorvine.";
// Starting a Python worker or the daemon: a fixed cost per worker, whatever the rows.
inline constexpr std::string_view kPySparkWorkerFactory =
    "org.apache.spark.api.python.PythonWorkerFactory";

constexpr bool IsPySparkWorkerStartFrame(std::string_view frame) {
  return frame.starts_with(kPySparkWorkerFactory);
}

// The JVM's side of the exchange with its Python workers: PySpark's runners, the Python SQL
// operators (row-at-a-time and Arrow UDFs, mapInPandas, ...) and the pickler they use for rows;
// the workers' start is not part of it.
constexpr bool IsPySparkExchangeFrame(std::string_view frame) {
  if (IsPySparkWorkerStartFrame(frame)) return false;
  return frame.starts_with(kPySparkRunnerPackage) || frame.starts_with(kPySparkSqlPackage) ||
         frame.starts_with(kPySparkPicklerPackage);
}

}  // namespace sparkprof::classifier
