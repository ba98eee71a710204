// serialization-bound: the agent's samples put a large share of a stage's task time in
// serialization (Java object streams, Kryo, Spark's serializers), which the event log cannot
// show (its resultSerializationTime covers only the task result).
//
// Judgement: profile_judgement.h (>= 10% of a stage's sampled task time, >= 100 samples; saving
// by what-if; severity by the saving's share of wall time). The fix and its efficiency follow
// what the frames show, the largest part first:
// Times are on-CPU times with their share of the run delay (StageProfile::RunnableNs): on a
// host short of CPUs, code that was not there would not have waited for one either.
//   * closures (Spark's JavaSerializerInstance.serialize/deserialize of one object: every task
//     deserialises its closure, always with Java serialization): a closure capturing a large
//     object is read again by every task; broadcasting it makes that once per executor.
//     Efficiency 80-95% (what stays: the small closure itself).
//   * Java serialization the application calls itself (the innermost frame outside the JDK is
//     the user's: a deep copy or a hand-made cache through ObjectOutputStream): a copy
//     constructor or a purpose-built copy does the same work without writing and parsing a byte
//     stream. Efficiency 50-90%, as for Kryo below (the same byte stream is avoided).
//   * Java serialization of data (java.io.ObjectOutputStream/ObjectInputStream under Spark's
//     serialization streams) with spark.serializer not Kryo: Kryo is "often as much as 10x"
//     faster and more compact (Spark's tuning guide, "Data Serialization"). Efficiency 50-90%.
//   Both parts are named when each holds >= 25% of the serialization time.
//   * Kryo already, or Spark SQL's row serializer: registration (Kryo then writes class ids, not
//     names) and serialising less (DataFrames instead of RDDs of objects, fewer shuffles).
//     Efficiency 10-40%: the data still has to be written. With the classes registered already
//     (spark.kryo.classesToRegister or a registrator) registration is not recommended again and
//     only serialising less remains, whose gain the profile cannot promise: 0-40%.
#include <algorithm>

#include "analyzer/diagnosis/rules/profile_judgement.h"
#include "analyzer/diagnosis/rules/rules.h"

namespace sparkprof::diagnosis::rules {

namespace {

uint64_t PatternNs(const profile::StageProfile& stage, profile::Pattern pattern) {
  const profile::PatternTime* time = stage.FindPattern(pattern);
  return time != nullptr ? time->on_cpu_ns : 0;
}

}  // namespace

void SerializationBound(const DiagnosisInput& input, std::vector<Finding>& out) {
  // On-CPU work with its share of the run delay (profile::StageProfile::RunnableNs).
  std::vector<ProfiledCause> causes = StagesWhere(input, [](const profile::StageProfile& stage) {
    return stage.RunnableNs(stage.category_ns[CategoryIndex(TaskCategory::kSerialization)]);
  });
  if (causes.empty()) return;
  uint64_t serialization = 0, java = 0, closure = 0, kryo = 0, by_application = 0;
  for (const ProfiledCause& cause : causes) {
    serialization += cause.ns;
    const profile::StageProfile& stage = cause.stage;
    by_application +=
        stage.RunnableNs(stage.application_site_ns[CategoryIndex(TaskCategory::kSerialization)]);
    java += stage.RunnableNs(PatternNs(stage, profile::Pattern::kJavaSerialization));
    closure += stage.RunnableNs(PatternNs(stage, profile::Pattern::kClosureSerialization));
    kryo += stage.RunnableNs(PatternNs(stage, profile::Pattern::kKryo));
  }
  const std::string serializer = input.Property("spark.serializer", "");
  const bool kryo_configured = serializer.find("Kryo") != std::string::npos;
  // Kryo told the record classes (SparkConf.registerKryoClasses sets classesToRegister).
  const bool registered =
      kryo_configured && (!input.Property("spark.kryo.classesToRegister", "").empty() ||
                          !input.Property("spark.kryo.registrator", "").empty());
  const ProfiledCause& top = causes.front();

  Finding f =
      NewProfileFinding(input, "serialization-bound", causes, "serialization", serialization,
                        {{"java_serialization_ms", WholeMs(java), "ms"},
                         {"closure_serialization_ms", WholeMs(closure), "ms"},
                         {"kryo_ms", WholeMs(kryo), "ms"},
                         {"called_by_application_ms", WholeMs(by_application), "ms"}});
  for (const ProfiledCause& cause : causes) AddSiteFrames(cause, TaskCategory::kSerialization, f);
  std::string where =
      "Stage " + std::to_string(top.stage_id) + " spent " +
      TimeAndShare(top, top.stage.category_ns[CategoryIndex(TaskCategory::kSerialization)]) +
      " serialising and deserialising objects";
  const std::string sites = SitesText(top.stage, TaskCategory::kSerialization);
  if (!sites.empty()) where += ", on CPU in " + sites;
  where += ".";
  if (causes.size() > 1) {
    where += " " + std::to_string(causes.size() - 1) + " more stage(s) spent >= 10% there too (" +
             HumanDurationMs(static_cast<int64_t>((serialization - top.ns) / 1'000'000)) + ").";
  }
  Efficiency efficiency;
  if (closure * 2 >= serialization) {
    f.title = "Tasks spend their time deserialising a large closure";
    f.explanation =
        where + " Most of it (" + HumanDurationMs(static_cast<int64_t>(closure / 1'000'000)) +
        ") is Spark reading each task's closure, which is always Java-serialised: the function "
        "captures a large object (a lookup table, a model, a collection), and every task "
        "deserialises its own copy.";
    f.recommendations.push_back(
        {"",
         "broadcast the captured object (sc.broadcast / spark.sparkContext.broadcast) and "
         "read .value inside the function",
         "a broadcast is deserialised once per executor instead of once per task"});
    efficiency = {0.80, 0.95, "a broadcast is read once per executor; the small closure stays"};
  } else if (java * 2 >= serialization &&
             (!kryo_configured || by_application * 4 >= serialization)) {
    f.title = "Java serialization dominates the task time";
    f.explanation = where + " " + HumanDurationMs(static_cast<int64_t>(java / 1'000'000)) +
                    " of it is the JDK's ObjectOutputStream/ObjectInputStream.";
    if (by_application * 4 >= serialization) {
      std::string callers;
      for (const profile::Site* site : top.stage.SitesOf(TaskCategory::kSerialization)) {
        if (site->frame == site->application_frame) {
          callers += (callers.empty() ? "`" : ", `") + site->frame + "`";
        }
      }
      f.explanation += " The application's own code calls it for " +
                       HumanDurationMs(static_cast<int64_t>(by_application / 1'000'000)) +
                       (callers.empty() ? std::string() : " (" + callers + ")") +
                       ": objects are copied or stored by writing and parsing a byte stream.";
      f.recommendations.push_back(
          {"",
           "copy the objects without Java serialization (copy constructors, or a copy "
           "method per class), or keep them immutable and share them",
           "a copy walks the objects once; ObjectOutputStream writes class descriptors and every "
           "field as bytes, and ObjectInputStream parses them back"});
    }
    if (!kryo_configured && java > by_application && (java - by_application) * 4 >= serialization) {
      f.explanation +=
          " Spark's serializer writes " +
          HumanDurationMs(static_cast<int64_t>((java - by_application) / 1'000'000)) +
          " of it (shuffled or cached objects): spark.serializer is " +
          (serializer.empty() ? std::string("not set (JavaSerializer, the default)")
                              : "'" + serializer + "'") +
          ". Kryo is often as much as 10x faster and more compact (Spark's tuning guide).";
      f.recommendations.push_back(
          {"spark.serializer", "org.apache.spark.serializer.KryoSerializer",
           "the serializer Spark recommends for anything shuffled or cached as objects"});
      f.recommendations.push_back(
          {"spark.kryo.registrationRequired", "true",
           "with the record classes registered (SparkConf.registerKryoClasses or "
           "spark.kryo.classesToRegister) Kryo writes a class id, not the class name, per "
           "record; the flag makes a missing registration an error instead of a slowdown"});
    }
    efficiency = {0.50, 0.90,
                  "Java serialization avoided: Kryo or a direct copy, Spark's tuning guide's 10x"};
  } else {
    f.title = "Serialization dominates the task time";
    f.explanation = where +
                    (kryo > 0 ? " " + HumanDurationMs(static_cast<int64_t>(kryo / 1'000'000)) +
                                    " of it is Kryo."
                              : std::string()) +
                    " The serializer itself is not the slow one; the amount of data serialised is.";
    if (kryo_configured && !registered) {
      f.recommendations.push_back(
          {"spark.kryo.registrationRequired", "true",
           "register the record classes (SparkConf.registerKryoClasses): Kryo then writes a "
           "class id per record instead of the class name"});
    }
    f.recommendations.push_back(
        {"",
         "serialise less: DataFrame/Dataset operations on Spark's binary rows instead of "
         "RDDs of objects, project columns before a shuffle, cache MEMORY_ONLY (deserialised) "
         "data read many times",
         "the time is proportional to the objects serialised"});
    if (registered) {
      f.explanation += " Kryo already knows the record classes (" +
                       std::string(input.Property("spark.kryo.registrator", "").empty()
                                       ? "spark.kryo.classesToRegister"
                                       : "spark.kryo.registrator") +
                       ").";
    }
    efficiency = registered
                     ? Efficiency{0.0, 0.40,
                                  "less data serialised; the classes are registered already, so "
                                  "nothing comes for free: the data still has to be written"}
                     : Efficiency{0.10, 0.40,
                                  "less data or registered classes; the data still has to be "
                                  "written"};
  }
  SpreadByRunnableCategory(causes, TaskCategory::kSerialization);
  if (!JudgeProfiledCauses(input, causes, efficiency, f)) return;
  out.push_back(std::move(f));
}

}  // namespace sparkprof::diagnosis::rules
