// The driver side of the JNI boundary (Java side:
// spark-plugin/.../io/sparkprof/NativeAggregator.java); the executor side is sparkprof_jni.cc. Each
// function converts, forwards to the one DriverAggregator of this JVM, and turns a failure into a
// Java exception through one helper. Nothing here throws on the ingest path: a refused batch is a
// return value, not an exception.
#include <jni.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "driver-aggregator/driver_aggregator.h"
#include "driver-aggregator/driver_settings.h"
#include "driver-aggregator/event_log_analysis.h"
#include "driver-aggregator/python_driver_batch.h"
#include "driver-aggregator/stage_diff.h"
#include "jni/java_exceptions.h"
#include "jni/jni_strings.h"

namespace {

using sparkprof::driver::AggregatorOptions;
using sparkprof::driver::ApplyDriverSettings;
using sparkprof::driver::DriverAggregator;
using sparkprof::driver::IngestOutcome;
using sparkprof::jni::ThrowJava;

// One aggregator per JVM, started by DriverPlugin.init and kept until stop(). Calls after stop()
// find no aggregator and do nothing.
std::mutex g_lifecycle_mutex;
std::shared_ptr<DriverAggregator> g_aggregator;

std::shared_ptr<DriverAggregator> CurrentAggregator() {
  std::lock_guard<std::mutex> lock(g_lifecycle_mutex);
  return g_aggregator;
}

// Every string crosses as standard UTF-8 (jni_strings.h): an emoji in spark.app.name must not
// reach a label as modified UTF-8, which Prometheus refuses.
std::string ToString(JNIEnv* env, jstring text) { return sparkprof::jni::ToUtf8(env, text); }

// A String[] as strings (null elements as ""); none for a null array.
std::vector<std::string> ToStrings(JNIEnv* env, jobjectArray array) {
  std::vector<std::string> strings;
  if (array == nullptr) return strings;
  const jsize length = env->GetArrayLength(array);
  strings.reserve(static_cast<size_t>(length));
  for (jsize i = 0; i < length; ++i) {
    auto element = static_cast<jstring>(env->GetObjectArrayElement(array, i));
    strings.push_back(ToString(env, element));
    if (element != nullptr) env->DeleteLocalRef(element);
  }
  return strings;
}

// The History Server's event-log analyses in progress (io.sparkprof.HistoryEventLogAnalysis), by
// the handle Java holds. Java uses a handle from one thread at a time; the map only hands it out.
std::mutex g_analyses_mutex;
std::map<jlong, std::shared_ptr<sparkprof::driver::EventLogAnalysis>> g_analyses;
jlong g_next_analysis = 1;

std::shared_ptr<sparkprof::driver::EventLogAnalysis> FindAnalysis(jlong handle) {
  std::lock_guard<std::mutex> lock(g_analyses_mutex);
  auto it = g_analyses.find(handle);
  return it == g_analyses.end() ? nullptr : it->second;
}

}  // namespace

extern "C" {

// Returns the bound Prometheus port (-1 without one); throws IllegalStateException on failure.
// `settings`: the driver aggregator's keys the user set (key, value, ...; driver_settings.h),
// whose refused values settingsProblems0 reported; their defaults are AggregatorOptions'.
JNIEXPORT jint JNICALL Java_io_sparkprof_NativeAggregator_start0(JNIEnv* env, jclass,
                                                                 jstring prometheus_bind_address,
                                                                 jstring output_dir,
                                                                 jobjectArray settings) {
  AggregatorOptions options;
  options.prometheus_bind_address = ToString(env, prometheus_bind_address);
  options.output_dir = ToString(env, output_dir);
  options.hold_metrics_until_application = true;  // registerMetrics(appId) labels the series
  options = ApplyDriverSettings(std::move(options), ToStrings(env, settings)).options;
  std::lock_guard<std::mutex> lock(g_lifecycle_mutex);
  if (g_aggregator) return g_aggregator->port();  // a second init in one JVM reuses the first
  auto started = DriverAggregator::Start(std::move(options));
  if (!started.ok()) {
    ThrowJava(env, "java/lang/IllegalStateException",
              "sparkprof driver aggregator: " + started.status().ToString());
    return -1;
  }
  g_aggregator = std::shared_ptr<DriverAggregator>(std::move(started).value());
  if (!g_aggregator->metrics_error().empty()) {
    std::fprintf(stderr,
                 "sparkprof: driver: no /metrics endpoint (%s); reports and flame graphs "
                 "go on\n",
                 g_aggregator->metrics_error().c_str());
  }
  return g_aggregator->port();
}

// The refused values among `settings` (as start0 takes them), one sentence each, joined by "; ";
// "" when every value is used. Never throws.
JNIEXPORT jstring JNICALL
Java_io_sparkprof_NativeAggregator_settingsProblems0(JNIEnv* env, jclass, jobjectArray settings) {
  std::string joined;
  for (const std::string& problem :
       ApplyDriverSettings(AggregatorOptions{}, ToStrings(env, settings)).problems) {
    joined += (joined.empty() ? "" : "; ") + problem;
  }
  return sparkprof::jni::ToJavaString(env, joined);
}

// Copies the batch into the aggregator's ingest queue and returns: Spark's dispatcher thread never
// folds. Returns the outcome code (0 = queued, 5 = queue full, -1 = no aggregator); never throws.
// Oversized arrays are counted and refused before any copy.
JNIEXPORT jint JNICALL Java_io_sparkprof_NativeAggregator_ingest0(JNIEnv* env, jclass,
                                                                  jbyteArray batch) {
  std::shared_ptr<DriverAggregator> aggregator = CurrentAggregator();
  if (aggregator == nullptr || batch == nullptr) return -1;
  jsize length = env->GetArrayLength(batch);
  return static_cast<jint>(
      aggregator->Enqueue(static_cast<size_t>(length), [&](uint8_t* destination) {
        env->GetByteArrayRegion(batch, 0, length, reinterpret_cast<jbyte*>(destination));
        if (!env->ExceptionCheck()) return true;
        env->ExceptionClear();
        return false;
      }));
}

// The Python driver program's samples of one window (io.sparkprof.PythonDriverProfiling): made a
// batch (driver-aggregator/python_driver_batch.h) and queued as ingest0 queues one. Returns the
// same outcomes; a file or window the converter refuses is 2 (invalid). Never throws.
JNIEXPORT jint JNICALL Java_io_sparkprof_NativeAggregator_ingestPythonDriver0(JNIEnv* env, jclass,
                                                                              jbyteArray file,
                                                                              jlong start_epoch_ns,
                                                                              jlong end_epoch_ns) {
  std::shared_ptr<DriverAggregator> aggregator = CurrentAggregator();
  if (aggregator == nullptr || file == nullptr) return -1;
  const jsize length = env->GetArrayLength(file);
  if (length < 0 || static_cast<size_t>(length) > sparkprof::driver::kMaxPythonDriverFileBytes) {
    return static_cast<jint>(IngestOutcome::kTooLarge);
  }
  std::string text(static_cast<size_t>(length), '\0');
  env->GetByteArrayRegion(file, 0, length, reinterpret_cast<jbyte*>(text.data()));
  if (env->ExceptionCheck()) {
    env->ExceptionClear();
    return static_cast<jint>(IngestOutcome::kInvalid);
  }
  sparkprof::Result<std::string> batch =
      sparkprof::driver::PythonDriverBatch(text, start_epoch_ns, end_epoch_ns);
  if (!batch.ok()) return static_cast<jint>(IngestOutcome::kInvalid);
  return static_cast<jint>(aggregator->Enqueue(batch->size(), [&](uint8_t* destination) {
    std::copy(batch->begin(), batch->end(), destination);  // bytes, not a C string
    return true;
  }));
}

// Waits until every batch queued before the call was folded, at most `timeout_ms`; false when
// the time ran out (or no aggregator runs). Never throws.
JNIEXPORT jboolean JNICALL Java_io_sparkprof_NativeAggregator_drain0(JNIEnv*, jclass,
                                                                     jlong timeout_ms) {
  std::shared_ptr<DriverAggregator> aggregator = CurrentAggregator();
  if (aggregator == nullptr) return JNI_FALSE;
  return aggregator->DrainIngestQueue(std::chrono::milliseconds(timeout_ms < 0 ? 0 : timeout_ms))
             ? JNI_TRUE
             : JNI_FALSE;
}

// Files go to <outputDir>/<applicationId>/ from now on; throws IllegalStateException when the
// directory cannot be created.
JNIEXPORT void JNICALL Java_io_sparkprof_NativeAggregator_setApplication0(
    JNIEnv* env, jclass, jstring application_id, jstring application_name) {
  std::shared_ptr<DriverAggregator> aggregator = CurrentAggregator();
  if (aggregator == nullptr) return;
  sparkprof::Status status =
      aggregator->SetApplication(ToString(env, application_id), ToString(env, application_name));
  if (!status.ok()) ThrowJava(env, "java/lang/IllegalStateException", status.ToString());
}

// Writes the stage's flame graph; returns its path, or null when the stage has no samples.
// Throws IllegalStateException when the file cannot be written.
JNIEXPORT jstring JNICALL Java_io_sparkprof_NativeAggregator_writeStageFlameGraph0(
    JNIEnv* env, jclass, jint stage_id, jint stage_attempt) {
  std::shared_ptr<DriverAggregator> aggregator = CurrentAggregator();
  if (aggregator == nullptr) return nullptr;
  auto path = aggregator->WriteStageFlameGraph(stage_id, stage_attempt);
  if (!path.ok()) {
    if (path.status().code() != sparkprof::StatusCode::kNotFound) {
      ThrowJava(env, "java/lang/IllegalStateException", path.status().ToString());
    } else if (path.status().message().find("flame graph files written already") !=
               std::string::npos) {
      static std::atomic<bool> said{false};  // once per driver: the rest are counted
      if (!said.exchange(true)) {
        std::fprintf(stderr,
                     "sparkprof: driver: %s; later stages' graphs are counted "
                     "(sparkprof_driver_flamegraphs_over_limit_total), not written\n",
                     path.status().message().c_str());
      }
    }
    return nullptr;
  }
  return sparkprof::jni::ToJavaString(env, *path);
}

// One listener event as an event-log JSON line: 0 accepted, 1 refused (counted), -1 no
// aggregator. Never throws. The Java side writes ASCII-only JSON (\\u escapes), so the JVM's
// modified UTF-8 is the line's exact bytes.
JNIEXPORT jint JNICALL Java_io_sparkprof_NativeAggregator_onEvent0(JNIEnv* env, jclass,
                                                                   jbyteArray utf8_line) {
  std::shared_ptr<DriverAggregator> aggregator = CurrentAggregator();
  if (aggregator == nullptr || utf8_line == nullptr) return -1;
  jsize bytes = env->GetArrayLength(utf8_line);
  thread_local std::string buffer;  // the listener thread: one buffer, reused
  buffer.resize(static_cast<size_t>(bytes));
  env->GetByteArrayRegion(utf8_line, 0, bytes, reinterpret_cast<jbyte*>(buffer.data()));
  if (env->ExceptionCheck()) {
    env->ExceptionClear();
    return -1;
  }
  return aggregator->OnEvent(std::string_view(buffer.data(), buffer.size())).ok() ? 0 : 1;
}

// End of the application: writes the reports (once). Returns their paths, one per line, or
// null without an aggregator; throws IllegalStateException when they cannot be written.
JNIEXPORT jstring JNICALL Java_io_sparkprof_NativeAggregator_finishApplication0(JNIEnv* env,
                                                                                jclass) {
  std::shared_ptr<DriverAggregator> aggregator = CurrentAggregator();
  if (aggregator == nullptr) return nullptr;
  auto paths = aggregator->FinishApplication();
  if (!paths.ok()) {
    ThrowJava(env, "java/lang/IllegalStateException", paths.status().ToString());
    return nullptr;
  }
  std::string joined;
  for (const std::string& path : *paths) joined += (joined.empty() ? "" : "\n") + path;
  return sparkprof::jni::ToJavaString(env, joined);
}

// The ended jobs among `job_ids` with their stage attempts, as JSON (LiveApplication::
// EndedJobsJson); "" once the application finished, null without an aggregator. Never throws.
JNIEXPORT jstring JNICALL Java_io_sparkprof_NativeAggregator_endedJobsJson0(JNIEnv* env, jclass,
                                                                            jintArray job_ids) {
  std::shared_ptr<DriverAggregator> aggregator = CurrentAggregator();
  if (aggregator == nullptr || job_ids == nullptr) return nullptr;
  std::vector<int32_t> ids(static_cast<size_t>(env->GetArrayLength(job_ids)));
  env->GetIntArrayRegion(job_ids, 0, static_cast<jsize>(ids.size()),
                         reinterpret_cast<jint*>(ids.data()));
  if (env->ExceptionCheck()) {
    env->ExceptionClear();
    return nullptr;
  }
  return sparkprof::jni::ToJavaString(env, aggregator->live().EndedJobsJson(ids));
}

// The sparkprof tab's data (DriverAggregator::LiveUiJson), computed now; null without an
// aggregator. Never throws.
JNIEXPORT jstring JNICALL Java_io_sparkprof_NativeAggregator_liveUiJson0(JNIEnv* env, jclass) {
  std::shared_ptr<DriverAggregator> aggregator = CurrentAggregator();
  if (aggregator == nullptr) return nullptr;
  return sparkprof::jni::ToJavaString(env, aggregator->LiveUiJson());
}

// The stage attempt's flame graph page from what arrived so far; null when no sample of it
// arrived or without an aggregator. Never throws.
JNIEXPORT jstring JNICALL Java_io_sparkprof_NativeAggregator_stageFlameGraphHtml0(
    JNIEnv* env, jclass, jint stage_id, jint stage_attempt) {
  std::shared_ptr<DriverAggregator> aggregator = CurrentAggregator();
  if (aggregator == nullptr) return nullptr;
  auto html = aggregator->StageFlameGraphHtml({stage_id, stage_attempt});
  if (!html.ok()) return nullptr;
  return sparkprof::jni::ToJavaString(env, *html);
}

// A new event-log analysis (EventLogAnalysis); its handle for the calls below. Needs no
// aggregator: the History Server runs none. Never throws.
JNIEXPORT jlong JNICALL Java_io_sparkprof_NativeAggregator_eventLogAnalysisStart0(JNIEnv*, jclass) {
  auto analysis = std::make_shared<sparkprof::driver::EventLogAnalysis>();
  std::lock_guard<std::mutex> lock(g_analyses_mutex);
  const jlong handle = g_next_analysis++;
  g_analyses.emplace(handle, std::move(analysis));
  return handle;
}

// The next `length` decoded bytes of the log; false for an unknown handle. Never throws.
JNIEXPORT jboolean JNICALL Java_io_sparkprof_NativeAggregator_eventLogAnalysisAdd0(
    JNIEnv* env, jclass, jlong handle, jbyteArray bytes, jint length) {
  std::shared_ptr<sparkprof::driver::EventLogAnalysis> analysis = FindAnalysis(handle);
  if (analysis == nullptr || bytes == nullptr || length < 0 ||
      length > env->GetArrayLength(bytes)) {
    return JNI_FALSE;
  }
  jbyte* data = env->GetByteArrayElements(bytes, nullptr);
  if (data == nullptr) return JNI_FALSE;
  analysis->Add(std::string_view(reinterpret_cast<const char*>(data), static_cast<size_t>(length)));
  env->ReleaseByteArrayElements(bytes, data, JNI_ABORT);
  return JNI_TRUE;
}

// The report document of the bytes added, the log named `name`, and the handle released.
// Throws IllegalArgumentException when no line was an event (the message says so).
JNIEXPORT jstring JNICALL Java_io_sparkprof_NativeAggregator_eventLogAnalysisReport0(JNIEnv* env,
                                                                                     jclass,
                                                                                     jlong handle,
                                                                                     jstring name) {
  std::shared_ptr<sparkprof::driver::EventLogAnalysis> analysis;
  {
    std::lock_guard<std::mutex> lock(g_analyses_mutex);
    auto it = g_analyses.find(handle);
    if (it == g_analyses.end()) return nullptr;
    analysis = std::move(it->second);
    g_analyses.erase(it);
  }
  sparkprof::Result<std::string> json = analysis->ReportJson(ToString(env, name));
  if (!json.ok()) {
    ThrowJava(env, "java/lang/IllegalArgumentException", json.status().message());
    return nullptr;
  }
  return sparkprof::jni::ToJavaString(env, *json);
}

// Drops an analysis not reported (the log too large, too slow, unreadable). Never throws.
JNIEXPORT void JNICALL Java_io_sparkprof_NativeAggregator_eventLogAnalysisClose0(JNIEnv*, jclass,
                                                                                 jlong handle) {
  std::lock_guard<std::mutex> lock(g_analyses_mutex);
  g_analyses.erase(handle);
}

// The differential flame graph of two stage attempts from what arrived so far; null when either
// has no samples or without an aggregator. Never throws.
JNIEXPORT jstring JNICALL Java_io_sparkprof_NativeAggregator_stageDiffHtml0(JNIEnv* env, jclass,
                                                                            jint before_stage,
                                                                            jint before_attempt,
                                                                            jint after_stage,
                                                                            jint after_attempt) {
  std::shared_ptr<DriverAggregator> aggregator = CurrentAggregator();
  if (aggregator == nullptr) return nullptr;
  auto html =
      aggregator->StageDiffHtml({before_stage, before_attempt}, {after_stage, after_attempt});
  if (!html.ok()) return nullptr;
  return sparkprof::jni::ToJavaString(env, *html);
}

// The same from a saved profile's bytes (the History Server's copy beside the event log,
// decompressed); needs no aggregator. Throws IllegalArgumentException with the reason when the
// bytes are not a profile or either attempt has no samples.
JNIEXPORT jstring JNICALL Java_io_sparkprof_NativeAggregator_profileStageDiffHtml0(
    JNIEnv* env, jclass, jbyteArray profile, jint length, jstring name, jint before_stage,
    jint before_attempt, jint after_stage, jint after_attempt) {
  if (profile == nullptr || length < 0 || length > env->GetArrayLength(profile)) return nullptr;
  jbyte* data = env->GetByteArrayElements(profile, nullptr);
  if (data == nullptr) return nullptr;
  sparkprof::Result<std::string> html = sparkprof::driver::RenderStageDiffFromProfile(
      std::string_view(reinterpret_cast<const char*>(data), static_cast<size_t>(length)),
      ToString(env, name), {before_stage, before_attempt}, {after_stage, after_attempt});
  env->ReleaseByteArrayElements(profile, data, JNI_ABORT);
  if (!html.ok()) {
    ThrowJava(env, "java/lang/IllegalArgumentException", html.status().message());
    return nullptr;
  }
  return sparkprof::jni::ToJavaString(env, *html);
}

JNIEXPORT jstring JNICALL Java_io_sparkprof_NativeAggregator_status0(JNIEnv* env, jclass) {
  std::shared_ptr<DriverAggregator> aggregator = CurrentAggregator();
  std::string text = aggregator ? aggregator->StatusJson() : "{\"running\":false}";
  return sparkprof::jni::ToJavaString(env, text);
}

JNIEXPORT void JNICALL Java_io_sparkprof_NativeAggregator_stop0(JNIEnv*, jclass) {
  std::shared_ptr<DriverAggregator> stopping;
  {
    std::lock_guard<std::mutex> lock(g_lifecycle_mutex);
    stopping.swap(g_aggregator);
  }
  // Destroyed (exposer joined) when the last in-flight call lets go of it.
}

}  // extern "C"
