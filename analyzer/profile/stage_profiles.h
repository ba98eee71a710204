// The agent's samples as the diagnosis reads them: for each stage attempt, the sampled task time
// by category (on CPU by what the code did, off CPU by what the thread waited in), the frames
// that hold it, and the time under a few frames that name a known costly pattern. One summary
// serves the live driver (which reads back its own profile.sparkprof at the end) and
// `sparkprof analyze --profile` (which reads the same file), so both reports agree.
//
// Definitions (docs/report-schema.md, `profile`):
//   * task time sampled = the weight of samples carrying a task tag (weight_ns: CPU ns in "cpu"
//     mode; wall ns split into on- and off-CPU parts in "cpu+wall" mode; wall ns unsplit, all
//     counted as on CPU by their frames' category, in "wall" mode). Python worker samples
//     (categories python: on CPU; python_off_cpu: the worker waiting in its own code) are the
//     worker's time, which overlaps the JVM thread's python_wait: they are kept apart (python_ns,
//     python_off_cpu_ns, top_python), never added to the task time.
//   * a Python worker's frames sit under kPythonWorkerFrame, itself under the JVM frame that
//     waited on the worker; the application's Python frames are those outside pyspark, installed
//     packages and the standard library (IsPythonApplicationFrame).
//   * a frame's self time: samples whose innermost frame it is; inclusive time: samples with the
//     frame anywhere on the stack (once per sample however often it recurs).
//   * application frames: frames of the user's code -- every frame outside the JDK, Scala,
//     Spark, Hadoop, the libraries Spark ships and sparkprof's own plugin (IsApplicationFrame).
//   * a category's sites: the innermost frame outside the JDK on the samples of that category
//     (for a wait: the code that waited, not the park or socket read it waited in).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/profile/cpu_use.h"
#include "analyzer/profile/driver_profile.h"
#include "analyzer/profile/memory_use.h"
#include "analyzer/profile/monitor_waits.h"
#include "common/category.h"
#include "common/input_stream.h"
#include "common/status.h"
#include "flamegraph/profile_model.h"

namespace sparkprof::profile {

using CategoryNs = std::array<uint64_t, kCategoryCount>;

// The frame the agent puts above a Python worker's own frames (native-agent/python_profile.h).
inline constexpr std::string_view kPythonWorkerFrame = "[python worker]";
// The innermost frame of a worker's run delay (runnable, no CPU free): the worker's sampler adds
// it.
inline constexpr std::string_view kPythonRunnableFrame = "[runnable: waiting for a CPU]";

// Frames whose inclusive time names a pattern a rule explains (serialization by the JDK, regex
// compilation, exceptions, JSON parsing, ...). The list lives in the .cc (kPatterns).
enum class Pattern : uint8_t {
  kJavaSerialization,  // java.io.ObjectOutputStream / ObjectInputStream
  kKryo,               // com.esotericsoftware.kryo
  kRegexCompile,       // java.util.regex.Pattern.compile
  kExceptionCreation,  // java.lang.Throwable.<init> / fillInStackTrace
  kJsonParsing,        // Jackson, Gson, org.json
  kPythonRunner,       // org.apache.spark.api.python: the task thread driving a Python worker
  kReflection,         // java.lang.reflect.Method.invoke / Class.forName
  kDateFormatting,     // java.text.SimpleDateFormat / DateTimeFormatter built (not parsing)
  // Spark's JavaSerializerInstance.serialize/deserialize of one object: task closures and
  // results (always Java serialization, whatever spark.serializer says); data goes through
  // serialization streams instead.
  kClosureSerialization,
  // Which Python evaluation a task drives (Spark 3.5 and 4 class names): row-at-a-time SQL UDFs
  // (BatchEvalPythonExec, PythonUDFRunner), Arrow batches (pandas UDFs, mapInPandas,
  // applyInPandas, Arrow-optimised UDFs), or Python RDD functions (PythonRDD).
  kPythonRowUdf,
  kPythonArrow,
  kPythonRdd,
};
inline constexpr int kPatternCount = 12;
// "java_serialization", "kryo", "regex_compile", ...
std::string_view PatternName(Pattern pattern);

// inclusive_ns and on_cpu_inclusive_ns are kept for application frames only (0 for the JDK's
// and the framework's frames in top_self).
struct FrameTime {
  std::string frame;
  uint64_t self_ns = 0;  // on and off CPU
  uint64_t on_cpu_self_ns = 0;
  uint64_t inclusive_ns = 0;
  uint64_t on_cpu_inclusive_ns = 0;
  // The category of most of its self time, cpu_starved aside (what the code did when it ran).
  Category category = Category::kCompute;
};

// Where a category's time was spent: the innermost non-JDK frame, and the innermost
// application frame on the same samples ("" when none).
struct Site {
  Category category = Category::kCompute;
  std::string frame;
  std::string application_frame;
  uint64_t ns = 0;
  // The samples ended in a walk-error marker (IsPartialWalkMarker): the agent walked them from
  // `frame`'s compiled code up, past a VM stub (a contended lock, an allocation's slow path), and
  // what that code inlined -- the innermost frames -- is not known. The same frame's samples
  // with whole stacks are a site of their own.
  bool inlined_callees_unknown = false;
};

struct PatternTime {
  Pattern pattern = Pattern::kJavaSerialization;
  uint64_t ns = 0;  // inclusive, on and off CPU
  uint64_t on_cpu_ns = 0;
  // The innermost application frame above the pattern on most of its time ("" when none).
  std::string application_frame;
  uint64_t application_frame_ns = 0;
};

// A Python function of the application in the workers' samples: the innermost one on each
// sample (or the innermost Python frame when the sample has none of the application's).
struct PythonFrameTime {
  std::string function;  // "qualname (file.py)"
  std::string frame;     // its line with the most time: "qualname (file.py:line)"
  uint64_t ns = 0;       // the function's time, on and off CPU
  uint64_t on_cpu_ns = 0;
  // Off CPU runnable, waiting for a CPU (the worker's run delay; under kPythonRunnableFrame).
  uint64_t runnable_ns = 0;
  // Where it waited off CPU otherwise on most of that time: the innermost frame ("" when never).
  std::string waited_in;
};

// One task attempt's time by category, as the agent counted it for that task (the batches'
// TaskCategoryTime rows, summed over batches and executors): the weight of its samples, plus in
// `gc` the stop-the-world GC pauses that overlapped it (measured, not sampled). python and
// python_off_cpu are its Python worker's own time, kept apart as in StageProfile.
struct TaskTime {
  int64_t task_attempt_id = -1;  // Spark's task id (the event log's "Task ID")
  CategoryNs category_ns{};

  uint64_t task_ns() const;  // all categories but python and python_off_cpu
  uint64_t on_cpu_ns() const;
  uint64_t off_cpu_ns() const;
  // (on CPU + cpu_starved) / on CPU, as StageProfile::RunnableFactor for the stage.
  double RunnableFactor() const;
};

struct StageProfile {
  int32_t stage_id = -1;
  int32_t stage_attempt = 0;
  CategoryNs category_ns{};  // every category, python included
  uint64_t task_ns = 0;      // all categories but python
  uint64_t on_cpu_ns = 0;
  uint64_t off_cpu_ns = 0;
  uint64_t python_ns = 0;          // the Python workers on CPU
  uint64_t python_off_cpu_ns = 0;  // the Python workers off CPU in their own code
  // The workers' time (on and off CPU) on samples with an application Python frame: the rest is
  // their per-task setup -- imports, unpickling the task's function, pyspark's own loop.
  uint64_t python_application_ns = 0;
  // The task threads' time (run delay aside) whose site is the JVM's side of the exchange with
  // the Python workers (PySpark's runners and Python operators, the row pickler): waiting for
  // results, reading and unpickling them, pickling and sending rows -- not starting workers (a
  // fixed cost per worker). A task without Python workers would spend none of it.
  uint64_t python_exchange_ns = 0;
  std::vector<PythonFrameTime> top_python;  // most time first (kTopFrames)
  std::vector<FrameTime> top_self;          // most self time first (kTopFrames)
  std::vector<FrameTime> top_application;   // application frames, most on-CPU inclusive first
  std::vector<Site> sites;            // per category with time, most first (kSitesPerCategory)
  std::vector<PatternTime> patterns;  // patterns with time, most first
  // Per category, the time whose site is an application frame: the user's code itself called
  // into the JDK (ObjectOutputStream in a deep copy, Thread.sleep in a UDF), not Spark.
  CategoryNs application_site_ns{};
  uint64_t distinct_stacks = 0;
  // The monitors its task threads waited to enter, timed exactly by the JVM (monitor_waits.h);
  // empty for agents before them, and when no task thread waited on a monitor.
  StageMonitors monitors;
  // Per task attempt of this stage attempt, by task_attempt_id (docs/limits.md: at most
  // ProfileLoadOptions::max_profiled_tasks over the application; what was left out is counted in
  // ApplicationProfile::task_rows_left_out and named in its problems).
  std::vector<TaskTime> tasks;

  // A runnable thread waits to run the same code it runs once it has a CPU: run delay
  // (cpu_starved) belongs to the on-CPU work in proportion to its time. RunnableFactor() is
  // (on CPU + cpu_starved) / on CPU (1 without on-CPU time); RunnableNs(on-CPU ns of a cause)
  // is that cause's time with its part of the run delay (at most task_ns).
  double RunnableFactor() const;
  uint64_t RunnableNs(uint64_t on_cpu) const;

  double Share(Category category) const {
    return task_ns > 0 ? static_cast<double>(category_ns[CategoryIndex(category)]) / task_ns : 0.0;
  }
  const PatternTime* FindPattern(Pattern pattern) const;
  // The task attempt's time, or null when the profile holds none of it.
  const TaskTime* FindTask(int64_t task_attempt_id) const;
  // The category's sites, most time first (at most kSitesPerCategory).
  std::vector<const Site*> SitesOf(Category category) const;
};

inline constexpr size_t kTopFrames = 10;
inline constexpr size_t kSitesPerCategory = 3;

struct ApplicationProfile {
  std::string source;              // the file read ("" when built live without one)
  std::vector<std::string> modes;  // Batch.mode values seen: "cpu", "wall", "cpu+wall"
  int64_t interval_ns = 0;         // the smallest sampling interval seen
  uint64_t executors = 0;          // distinct executor ids that sent batches
  uint64_t batches_read = 0;
  uint64_t batches_skipped = 0;
  uint64_t problem_count = 0;
  std::vector<std::string> problems;  // the first few, located (file: byte N: ...)
  uint64_t untagged_ns = 0;           // samples outside any task (driver, JVM threads)
  // The driver's own samples in time (batches from executor "driver"), for what the driver did
  // while no task ran; empty when the driver was not sampled.
  DriverProfile driver;
  std::vector<StageProfile> stages;  // by (stage id, attempt)
  // Task-time rows not in any StageProfile::tasks: rows of task attempts beyond the first
  // max_profiled_tasks, and rows of stage attempts without stack samples (GC pauses only). Each
  // kind is named in `problems`; the stage figures come from the samples and lose nothing.
  uint64_t task_rows_left_out = 0;
  uint64_t task_ns_left_out = 0;
  size_t max_profiled_tasks = 0;  // the limit the per-task views were kept under
  // The JVMs' host, process and cgroup CPU per batch window (empty for agents before it): what
  // tells a task thread's run delay apart (cpu_use.h).
  ApplicationCpuUse cpu_use;
  // The JVMs' memory per batch (empty for agents before it): per JVM its last reading and peaks.
  ApplicationMemoryUse memory_use;
  // Monitor waits not in any StageProfile::monitors, each kind named in `problems`: rows that
  // would have added a key past max_monitor_keys (counted), and with them, in the wait, those of
  // stage attempts without stack samples (or outside a task).
  size_t max_monitor_keys = 0;
  uint64_t monitor_rows_left_out = 0;
  uint64_t monitor_wait_ns_left_out = 0;

  // Off-CPU time was sampled (mode "cpu+wall" on some executor: only that mode splits a task
  // thread's wall time into on- and off-CPU parts; "wall" samples carry no CPU split).
  bool has_off_cpu() const;
  const StageProfile* Find(int32_t stage_id, int32_t stage_attempt) const;
  // Every attempt of a stage, summed (for rules that judge a stage whatever its retries); the
  // frames, sites and patterns are the first sampled attempt's; the tasks and monitors are every
  // attempt's.
  StageProfile Combined(int32_t stage_id) const;
};

// The summary of one stage attempt's call tree (weights in nanoseconds).
StageProfile SummarizeStage(const flamegraph::ProfileModel& model, int32_t stage_id,
                            int32_t stage_attempt);

// A stack's site as `sites` name them (frames root first): the innermost frame outside the JDK,
// and the innermost application frame ("" each when none). The views point into `frames`.
struct StackSite {
  std::string_view frame;
  std::string_view application_frame;
};
StackSite SiteOfStack(std::span<const std::string_view> frames);

// True for the agent's markers of a stack walked only from a caller (native-agent/stack_walker.cc,
// WalkErrorFrameName): "[not_walkable_not_Java]", "[unknown_not_Java]", "[not_walkable_Java]",
// "[unknown_Java]" at the leaf of a stack whose innermost frames are missing.
bool IsPartialWalkMarker(std::string_view frame);

// True for a frame of the user's code (see the header comment).
bool IsApplicationFrame(std::string_view frame);
// True for a Python frame of the user's code: not "(pyspark/...", "(<site>/...", "(<stdlib>/...",
// "(<frozen ...", nor a bracketed marker.
bool IsPythonApplicationFrame(std::string_view frame);
// "qualname (file.py:12)" -> "qualname (file.py)": a Python frame's function, without its line.
std::string PythonFunctionName(std::string_view frame);

struct ProfileLoadOptions {
  uint64_t max_file_bytes = uint64_t{2} << 30;  // docs/limits.md
  // Task attempts whose per-category time is kept (StageProfile::tasks), over the application,
  // first come in file order; about 200 bytes each while reading (docs/limits.md).
  size_t max_profiled_tasks = 100'000;
  // Batch windows of CPU use kept (ApplicationCpuUse), about 90 bytes each (docs/limits.md).
  size_t max_cpu_windows = 200'000;
  // Distinct monitor-wait keys kept (MonitorWaitTable: stage attempt, monitor class, waiter
  // site, holder site, owner's thread) over the application, first come in file order; about 150
  // bytes each plus their names (docs/limits.md).
  size_t max_monitor_keys = 20'000;
  // Reads a profile kept compressed: given the opened file, its path and the size limit, the
  // stream to read (report::Analyze passes the event logs' codecs); null: the file as it is. A
  // hook, so that the driver's library, which reads only its own profile, links no codec.
  Result<std::unique_ptr<InputStream>> (*decoder)(std::unique_ptr<InputStream> file,
                                                  const std::string& path,
                                                  uint64_t max_bytes) = nullptr;
};

// Reads a saved profile (*.sparkprof) into per-stage summaries. Bad batches are skipped and
// named in `problems`; fails only when the file cannot be read or holds no readable batch.
Result<ApplicationProfile> LoadApplicationProfile(const std::string& path,
                                                  const ProfileLoadOptions& options = {});
// The same from bytes already in memory; `source_name` names them in messages.
Result<ApplicationProfile> ApplicationProfileFromBytes(std::string_view bytes,
                                                       const std::string& source_name,
                                                       const ProfileLoadOptions& options = {});

// The directory the driver writes an application's files to, under its output directory: the
// application id with characters other than [A-Za-z0-9._-] replaced by '_'.
std::string ApplicationDirectoryName(const std::string& application_id);

// Beside a profile the driver is still writing (or stopped writing without finishing: killed):
// `<profile>.inprogress`, empty; the driver removes it once the application ended and the
// profile is complete. LoadApplicationProfile names it in `problems`.
inline constexpr std::string_view kInProgressMarkerSuffix = ".inprogress";

// The folder the driver stores an application's outputs in beside its event log
// (spark-plugin's EventLogDirOutputs): Spark's name for the application's event log (id lower-
// cased, [ :/] as '-', [.${}'"] as '_', anything else outside [a-z0-9._-] as '_') + ".sparkprof".
std::string EventLogDirFolderName(const std::string& application_id);

// Where `--profile PATH` finds an application's profile: PATH itself when it is a file; in a
// directory, <PATH>/<application id>/profile.sparkprof (the driver's local layout, its id made
// file-name safe as the driver does), else <PATH>/profile.sparkprof, else the compressed copy
// the driver stores beside the event log: <PATH>/profile.sparkprof.zstd (.gz) (PATH is the
// application's folder there) or <PATH>/<EventLogDirFolderName>/profile.sparkprof.zstd (.gz)
// (PATH is spark.eventLog.dir). "" when none exists.
std::string FindProfileFor(const std::string& path, const std::string& application_id);

}  // namespace sparkprof::profile
