// Driver ingest bench (issue 6): profile batches from 1,000 executors, 5k distinct stacks each, one
// batch every 10 s per executor (100 batches/s at the driver), fed through DriverAggregator::Ingest
// as the DriverPlugin's receive() does.
//
// Batches are built in the agent's wire format (schema/profile.fbs, encoded the way
// native-agent/batch_encoder.cc does it: batch-local strings in order of first use, one Stack per
// distinct stack, one StackSample per (task, thread, stack), category time per task, GC pauses,
// cumulative health). Stacks are 20-80 frames of real executor-thread frames (Spark's task runner,
// RDD/SQL operators, codegen, user lambdas) ending in category chains with the class names of
// reference/spark-facts.md section 7 (ObjectOutputStream, SortShuffleWriter, ParquetWriteSupport,
// S3ABlockOutputStream, ...). Each stage has its own universe of distinct stacks; every executor's
// batch holds its popular core plus a random tail, so the per-stage union keeps growing as
// executors report.
//
// Baselines, measured on the same bytes in the same run: memcpy of the batch (what the JNI side
// does with the byte[]) and the flatbuffers Verifier alone (the first thing Ingest does).
// Times are this thread's CPU time (CLOCK_THREAD_CPUTIME_ID): the machine is shared.
//
// Phases:
//   memory:  stages keep arriving (more than max_stages), each fed until its call tree is full;
//            RSS after every few stages, then the cost of writing the last (full) stage's flame
//            graph, during which Ingest waits for the aggregator's lock.
//   ingest:  steady state: CPU per batch (mean, p50, p99) against the baselines, batches/s one
//            core sustains vs the 100/s needed, and the cost of a scrape (registry render and a
//            GET of /metrics on loopback).
//   profile: the same with the saved profile file on (every accepted batch appended to
//            profile.sparkprof until its byte cap), and how soon the cap is reached at 100/s.
//
// Usage: driver_ingest_bench [key=value ...]; keys and defaults in Config below, e.g.
//   driver_ingest_bench mode=all memory_max_stages=32 memory_stages=40
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "driver-aggregator/driver_aggregator.h"
#include "flatbuffers/flatbuffers.h"
#include "schema/profile_generated.h"

namespace {

namespace fb = sparkprof::schema;
using sparkprof::driver::AggregatorOptions;
using sparkprof::driver::DriverAggregator;
using sparkprof::driver::IngestOutcome;

struct Config {
  std::string mode = "all";     // all | memory | ingest | profile
  int executors = 1000;         // distinct executors sending batches
  int stacks_per_batch = 5000;  // distinct stacks in one batch
  int stage_universe = 15000;   // distinct stacks a stage can produce over all executors
  int task_slots = 16;          // concurrent task threads per executor
  int sorted_stacks = 0;        // 1: the batch lists stacks sorted (a what-if for the encoder)
  int branch_percent = 10;      // calls that leave a method's usual callee (tree width)
  int ingest_stages = 2;        // ingest phase: stages fed one after the other
  int ingest_batches_per_stage = 1000;  // = one batch from each of 1,000 executors (10 s)
  int scrapes = 200;
  int memory_stages = 40;  // memory phase: stages fed (more than memory_max_stages)
  int memory_batches_per_stage = 6;
  int memory_max_stages = 32;        // AggregatorOptions::max_stages for the memory phase
  int max_nodes_per_stage = 200000;  // AggregatorOptions::max_nodes_per_stage
  int profile_cap_mib =
      1024;  // the plugin's default         // profile phase: max_profile_file_bytes
  int profile_batches_after_cap = 100;
  std::string output_dir;  // default: a directory under the temp directory
};

bool ParseArgs(int argc, char** argv, Config& config) {
  std::unordered_map<std::string, int*> ints = {
      {"executors", &config.executors},
      {"stacks", &config.stacks_per_batch},
      {"universe", &config.stage_universe},
      {"task_slots", &config.task_slots},
      {"branch_percent", &config.branch_percent},
      {"sorted_stacks", &config.sorted_stacks},
      {"ingest_stages", &config.ingest_stages},
      {"ingest_batches_per_stage", &config.ingest_batches_per_stage},
      {"scrapes", &config.scrapes},
      {"memory_stages", &config.memory_stages},
      {"memory_batches_per_stage", &config.memory_batches_per_stage},
      {"memory_max_stages", &config.memory_max_stages},
      {"max_nodes", &config.max_nodes_per_stage},
      {"profile_cap_mib", &config.profile_cap_mib},
      {"profile_batches_after_cap", &config.profile_batches_after_cap},
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    size_t eq = arg.find('=');
    if (eq == std::string::npos) {
      std::fprintf(stderr, "expected key=value, got '%s'\n", argv[i]);
      return false;
    }
    std::string key = arg.substr(0, eq);
    std::string value = arg.substr(eq + 1);
    if (key == "mode") {
      config.mode = value;
    } else if (key == "output_dir") {
      config.output_dir = value;
    } else if (auto it = ints.find(key); it != ints.end()) {
      char* end = nullptr;
      long parsed = std::strtol(value.c_str(), &end, 10);
      long minimum = key == "sorted_stacks" || key == "branch_percent" ? 0 : 1;
      if (end == value.c_str() || *end != '\0' || parsed < minimum || parsed > 100000000) {
        std::fprintf(stderr, "%s: not an integer >= %ld: '%s'\n", key.c_str(), minimum,
                     value.c_str());
        return false;
      }
      *it->second = static_cast<int>(parsed);
    } else {
      std::fprintf(stderr, "unknown key '%s'\n", key.c_str());
      return false;
    }
  }
  if (config.stacks_per_batch > config.stage_universe) {
    std::fprintf(stderr, "stacks (%d) must not exceed universe (%d)\n", config.stacks_per_batch,
                 config.stage_universe);
    return false;
  }
  return true;
}

uint64_t ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

uint64_t WallNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// VmRSS or VmHWM from /proc/self/status, in MiB.
double ProcStatusMib(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  size_t length = std::strlen(field);
  while (std::getline(in, line)) {
    if (line.compare(0, length, field) == 0 && line.size() > length && line[length] == ':') {
      return std::strtod(line.c_str() + length + 1, nullptr) / 1024.0;
    }
  }
  return -1;
}

// ---------------------------------------------------------------------------------------------
// Frame names and stacks.

class FrameNames {
 public:
  uint32_t Id(const std::string& name) {
    auto [it, inserted] = ids_.emplace(name, static_cast<uint32_t>(names_.size()));
    if (inserted) names_.push_back(name);
    return it->second;
  }
  const std::string& Name(uint32_t id) const { return names_[id]; }
  size_t size() const { return names_.size(); }

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, uint32_t> ids_;
};

// Innermost chains per category: real class and method names (spark-facts.md section 7, JDK).
struct LeafChains {
  fb::Category category;
  int share_percent;                             // of a stage's stacks
  std::vector<std::vector<std::string>> chains;  // outermost first
};

const std::vector<LeafChains>& LeafCatalogue() {
  static const std::vector<LeafChains> catalogue = {
      {fb::Category::compute,
       55,
       {{"org.apache.spark.unsafe.types.UTF8String.contains",
         "org.apache.spark.unsafe.types.UTF8String.matchAt"},
        {"java.util.HashMap.get", "java.util.HashMap.getNode", "java.lang.String.hashCode"},
        {"scala.collection.mutable.HashMap.get", "scala.collection.mutable.HashTable.findEntry"},
        {"org.apache.spark.sql.catalyst.expressions.UnsafeRow.getUTF8String",
         "org.apache.spark.unsafe.types.UTF8String.fromAddress"},
        {"org.apache.spark.sql.catalyst.util.DateTimeUtils$.stringToTimestamp",
         "java.time.format.DateTimeFormatter.parse"},
        {"org.apache.spark.unsafe.map.BytesToBytesMap$Location.append",
         "org.apache.spark.unsafe.Platform.copyMemory", "jdk.internal.misc.Unsafe.copyMemory"},
        {"java.util.regex.Matcher.find", "java.util.regex.Pattern$Start.match",
         "java.util.regex.Pattern$BmpCharProperty.match"}}},
      {fb::Category::serialization,
       10,
       {{"org.apache.spark.serializer.JavaSerializationStream.writeObject",
         "java.io.ObjectOutputStream.writeObject", "java.io.ObjectOutputStream.writeObject0",
         "java.io.ObjectOutputStream.writeOrdinaryObject",
         "java.io.ObjectOutputStream.writeSerialData",
         "java.io.ObjectOutputStream.defaultWriteFields"},
        {"org.apache.spark.serializer.KryoSerializationStream.writeObject",
         "com.esotericsoftware.kryo.Kryo.writeClassAndObject",
         "com.esotericsoftware.kryo.serializers.FieldSerializer.write"},
        {"org.apache.spark.serializer.JavaDeserializationStream.readObject",
         "java.io.ObjectInputStream.readObject", "java.io.ObjectInputStream.readObject0",
         "java.io.ObjectInputStream.readOrdinaryObject"}}},
      {fb::Category::shuffle_write,
       10,
       {{"org.apache.spark.shuffle.sort.SortShuffleWriter.write",
         "org.apache.spark.util.collection.ExternalSorter.insertAll",
         "org.apache.spark.util.collection.ExternalSorter.writePartitionedMapOutput",
         "org.apache.spark.storage.DiskBlockObjectWriter.write"},
        {"org.apache.spark.shuffle.sort.UnsafeShuffleWriter.write",
         "org.apache.spark.shuffle.sort.UnsafeShuffleWriter.insertRecordIntoSorter",
         "org.apache.spark.shuffle.sort.ShuffleExternalSorter.insertRecord"},
        {"org.apache.spark.shuffle.sort.BypassMergeSortShuffleWriter.write",
         "org.apache.spark.storage.DiskBlockObjectWriter.write",
         "org.apache.spark.storage.DiskBlockObjectWriter.recordWritten"}}},
      {fb::Category::shuffle_read,
       8,
       {{"org.apache.spark.shuffle.BlockStoreShuffleReader.read",
         "org.apache.spark.storage.ShuffleBlockFetcherIterator.next",
         "java.util.concurrent.LinkedBlockingQueue.take"},
        {"org.apache.spark.storage.ShuffleBlockFetcherIterator.hasNext",
         "org.apache.spark.storage.ShuffleBlockFetcherIterator.fetchUpToMaxBytes",
         "org.apache.spark.storage.ShuffleBlockFetcherIterator.sendRequest"}}},
      {fb::Category::spill,
       4,
       {{"org.apache.spark.util.collection.unsafe.sort.UnsafeExternalSorter.spill",
         "org.apache.spark.util.collection.unsafe.sort.UnsafeSorterSpillWriter.write",
         "org.apache.spark.storage.DiskBlockObjectWriter.write"},
        {"org.apache.spark.memory.TaskMemoryManager.acquireExecutionMemory",
         "org.apache.spark.memory.TaskMemoryManager.trySpillAndAcquire",
         "org.apache.spark.util.collection.unsafe.sort.UnsafeExternalSorter.spill"},
        {"org.apache.spark.util.collection.ExternalAppendOnlyMap.insertAll",
         "org.apache.spark.util.collection.Spillable.maybeSpill",
         "org.apache.spark.util.collection.ExternalAppendOnlyMap.spill",
         "org.apache.spark.util.collection.ExternalAppendOnlyMap.spillMemoryIteratorToDisk"}}},
      {fb::Category::file_io,
       7,
       {{"org.apache.spark.sql.execution.datasources.FileFormatDataWriter.writeWithIterator",
         "org.apache.spark.sql.execution.datasources.SingleDirectoryDataWriter.write",
         "org.apache.spark.sql.execution.datasources.parquet.ParquetOutputWriter.write",
         "org.apache.parquet.hadoop.ParquetRecordWriter.write",
         "org.apache.parquet.hadoop.InternalParquetRecordWriter.write",
         "org.apache.spark.sql.execution.datasources.parquet.ParquetWriteSupport.write",
         "org.apache.spark.sql.execution.datasources.parquet.ParquetWriteSupport.writeFields",
         "org.apache.parquet.column.impl.ColumnWriterBase.write"},
        {"org.apache.spark.sql.execution.datasources.parquet.VectorizedParquetRecordReader."
         "nextKeyValue",
         "org.apache.spark.sql.execution.datasources.parquet.VectorizedParquetRecordReader."
         "nextBatch",
         "org.apache.spark.sql.execution.datasources.parquet.VectorizedParquetRecordReader."
         "checkEndOfRowGroup",
         "org.apache.parquet.hadoop.ParquetFileReader.readNextRowGroup",
         "org.apache.parquet.hadoop.ParquetFileReader.internalReadRowGroup"},
        {"org.apache.spark.sql.execution.datasources.orc.OrcOutputWriter.write",
         "org.apache.orc.mapreduce.OrcMapreduceRecordWriter.write",
         "org.apache.orc.impl.WriterImpl.addRowBatch",
         "org.apache.orc.impl.writer.TreeWriterBase.writeRootBatch"}}},
      {fb::Category::s3a_write,
       3,
       {{"org.apache.hadoop.fs.s3a.S3ABlockOutputStream.write",
         "org.apache.hadoop.fs.s3a.S3ABlockOutputStream.uploadCurrentBlock",
         "org.apache.hadoop.fs.s3a.S3ABlockOutputStream$MultiPartUpload.uploadBlockAsync"},
        {"org.apache.hadoop.fs.s3a.S3ABlockOutputStream.close",
         "org.apache.hadoop.fs.s3a.S3ABlockOutputStream.putObject",
         "org.apache.hadoop.fs.s3a.WriteOperationHelper.putObject",
         "org.apache.hadoop.fs.s3a.Invoker.retry",
         "org.apache.hadoop.fs.s3a.S3AFileSystem.putObjectDirect",
         "com.amazonaws.services.s3.AmazonS3Client.putObject"}}},
      {fb::Category::s3a_read,
       3,
       {{"org.apache.hadoop.fs.s3a.S3AInputStream.read",
         "org.apache.hadoop.fs.s3a.S3AInputStream.lazySeek",
         "org.apache.hadoop.fs.s3a.S3AInputStream.reopen",
         "org.apache.hadoop.fs.s3a.Invoker.retry"},
        {"org.apache.hadoop.fs.s3a.S3AInputStream.readFully",
         "org.apache.hadoop.fs.s3a.S3AInputStream.read", "java.net.SocketInputStream.read"}}},
  };
  return catalogue;
}

// The executor task thread's frames down to the task (ShuffleMapTask or ResultTask).
const std::vector<std::string>& TaskPrefix() {
  static const std::vector<std::string> prefix = {
      "java.lang.Thread.run",
      "java.util.concurrent.ThreadPoolExecutor$Worker.run",
      "java.util.concurrent.ThreadPoolExecutor.runWorker",
      "org.apache.spark.executor.Executor$TaskRunner.run",
      "org.apache.spark.util.Utils$.tryWithSafeFinally",
      "org.apache.spark.executor.Executor$TaskRunner.$anonfun$run$3",
      "org.apache.spark.scheduler.Task.run",
  };
  return prefix;
}

// Operator frames a stage's stacks walk through (RDD, SQL, codegen, iterators, user code). A few
// names carry the stage's own numbers (codegen stage, user lambdas), as real stages do.
std::vector<std::string> OperatorFrames(int stage_id) {
  std::vector<std::string> frames = {
      "org.apache.spark.rdd.RDD.iterator",
      "org.apache.spark.rdd.RDD.computeOrReadCheckpoint",
      "org.apache.spark.rdd.MapPartitionsRDD.compute",
      "org.apache.spark.rdd.ZippedPartitionsRDD2.compute",
      "org.apache.spark.sql.execution.SQLExecutionRDD.compute",
      "org.apache.spark.sql.execution.BufferedRowIterator.hasNext",
      "org.apache.spark.sql.execution.WholeStageCodegenEvaluatorFactory$"
      "WholeStageCodegenPartitionEvaluator$$anon$1.hasNext",
      "org.apache.spark.sql.execution.joins.SortMergeJoinScanner.findNextInnerJoinRows",
      "org.apache.spark.sql.execution.joins.SortMergeJoinScanner.advancedStreamed",
      "org.apache.spark.sql.execution.UnsafeExternalRowSorter.sort",
      "org.apache.spark.sql.execution.UnsafeExternalRowSorter$1.next",
      "org.apache.spark.sql.execution.aggregate.TungstenAggregationIterator.processInputs",
      "org.apache.spark.sql.execution.aggregate.TungstenAggregationIterator.<init>",
      "org.apache.spark.sql.execution.UnsafeFixedWidthAggregationMap."
      "getAggregationBufferFromUnsafeRow",
      "org.apache.spark.sql.execution.datasources.FileScanRDD$$anon$1.hasNext",
      "org.apache.spark.sql.execution.datasources.FileScanRDD$$anon$1.nextIterator",
      "org.apache.spark.sql.execution.datasources.FileScanRDD$$anon$1.readCurrentFile",
      "org.apache.spark.sql.execution.datasources.RecordReaderIterator.hasNext",
      "org.apache.spark.sql.execution.datasources.FileFormatWriter$.executeTask",
      "org.apache.spark.sql.execution.datasources.FileFormatWriter$.$anonfun$executeTask$1",
      "org.apache.spark.InterruptibleIterator.hasNext",
      "org.apache.spark.util.CompletionIterator.hasNext",
      "org.apache.spark.shuffle.ShuffleWriteProcessor.write",
      "scala.collection.Iterator$$anon$10.hasNext",
      "scala.collection.Iterator$$anon$10.next",
      "scala.collection.Iterator$$anon$9.hasNext",
      "scala.collection.Iterator$$anon$11.hasNext",
      "scala.collection.Iterator$ConcatIterator.hasNext",
      "org.apache.spark.sql.catalyst.expressions.GeneratedClass$SpecificUnsafeProjection.apply",
      "org.apache.spark.sql.catalyst.expressions.GeneratedClass$SpecificPredicate.eval",
  };
  for (int codegen = 0; codegen < 4; ++codegen) {
    std::string generated =
        "org.apache.spark.sql.catalyst.expressions.GeneratedClass$"
        "GeneratedIteratorForCodegenStage" +
        std::to_string(stage_id * 4 + codegen + 1);
    frames.push_back(generated + ".processNext");
    frames.push_back(generated + ".hashAgg_doAggregateWithKeys_0$");
    frames.push_back(generated + ".smj_findNextJoinRows_0$");
    frames.push_back(generated + ".sort_addToSorter_0$");
  }
  static const char* jobs[] = {"SessionizeJob", "EnrichEvents", "DailyRollup", "FraudFeatures"};
  static const char* functions[] = {"parse", "enrich", "score", "normalize", "dedupe", "explode"};
  for (const char* job : jobs) {
    for (const char* function : functions) {
      for (int n = 1; n <= 3; ++n) {
        frames.push_back(std::string("com.example.etl.") + job + "$.$anonfun$" + function + "$" +
                         std::to_string(n + stage_id % 5));
      }
    }
  }
  // Application code below the operators: model, parsing and rule classes of a typical ETL job.
  static const char* packages[] = {"model", "parse", "rules", "geo", "session", "io"};
  static const char* classes[] = {"Event",  "Record", "Visitor", "Order",  "Feature",
                                  "Window", "Lookup", "Codec",   "Schema", "Mapper"};
  static const char* methods[] = {"apply",    "eval",     "merge",  "toRow",
                                  "fromJson", "validate", "update", "key"};
  for (const char* package : packages) {
    for (const char* class_name : classes) {
      for (const char* method : methods) {
        frames.push_back(std::string("com.example.etl.") + package + "." + class_name +
                         std::to_string(stage_id % 3) + "." + method);
      }
    }
  }
  return frames;
}

struct StageStack {
  std::vector<uint32_t> frames;  // global frame ids, root first
  fb::Category category;
};

// A stage's universe of distinct stacks: random walks over a call graph of its operator frames
// (1-4 callees each, skewed choice, so stacks share prefixes as JVM stacks do), between the task
// prefix and a category chain, with recursion in the serialization chains. Depths 20..80.
std::vector<StageStack> StageUniverse(FrameNames& names, int stage_id, int universe_size,
                                      int branch_percent) {
  std::mt19937_64 random(0x5eed0000u + static_cast<uint64_t>(stage_id));
  std::uniform_real_distribution<double> uniform(0, 1);
  std::vector<uint32_t> prefix;
  for (const auto& frame : TaskPrefix()) prefix.push_back(names.Id(frame));
  uint32_t shuffle_map_task = names.Id("org.apache.spark.scheduler.ShuffleMapTask.runTask");
  uint32_t result_task = names.Id("org.apache.spark.scheduler.ResultTask.runTask");
  std::vector<uint32_t> operators;
  for (const auto& frame : OperatorFrames(stage_id)) operators.push_back(names.Id(frame));
  // Engine frames (RDD, SQL, codegen, iterators, lambdas) call engine or application frames;
  // application frames call application frames.
  const size_t application_first = operators.size() - 480;
  std::vector<std::vector<uint32_t>> callees(operators.size());
  for (size_t caller = 0; caller < operators.size(); ++caller) {
    size_t fanout = 1 + random() % 4;
    for (size_t i = 0; i < fanout; ++i) {
      bool engine = caller < application_first && random() % 4 != 0;
      callees[caller].push_back(engine ? random() % application_first
                                       : application_first +
                                             random() % (operators.size() - application_first));
    }
  }
  struct Chain {
    fb::Category category;
    std::vector<uint32_t> frames;
  };
  std::vector<Chain> chains;
  std::vector<int> chain_weights;
  for (const LeafChains& leaf : LeafCatalogue()) {
    for (const auto& chain : leaf.chains) {
      Chain ids{leaf.category, {}};
      for (const auto& frame : chain) ids.frames.push_back(names.Id(frame));
      chains.push_back(std::move(ids));
      chain_weights.push_back(leaf.share_percent * 100 / static_cast<int>(leaf.chains.size()));
    }
  }
  std::discrete_distribution<size_t> pick_chain(chain_weights.begin(), chain_weights.end());
  uint32_t recurse[4] = {names.Id("java.io.ObjectOutputStream.writeObject0"),
                         names.Id("java.io.ObjectOutputStream.writeOrdinaryObject"),
                         names.Id("java.io.ObjectOutputStream.writeSerialData"),
                         names.Id("java.io.ObjectOutputStream.defaultWriteFields")};

  struct VectorHash {
    size_t operator()(const std::vector<uint32_t>& v) const {
      uint64_t h = 1469598103934665603ull;
      for (uint32_t x : v) h = (h ^ x) * 1099511628211ull;
      return static_cast<size_t>(h);
    }
  };
  std::unordered_set<std::vector<uint32_t>, VectorHash> seen;
  std::vector<StageStack> universe;
  universe.reserve(static_cast<size_t>(universe_size));
  while (universe.size() < static_cast<size_t>(universe_size)) {
    size_t depth = 20 + random() % 61;
    StageStack stack;
    stack.frames = prefix;
    stack.frames.push_back(uniform(random) < 0.6 ? shuffle_map_task : result_task);
    const Chain& chain = chains[pick_chain(random)];
    stack.category = chain.category;
    std::vector<uint32_t> leaf = chain.frames;
    if (chain.frames.back() == recurse[3]) {  // object graphs: writeObject0 ... recursion
      size_t levels = random() % 6;
      for (size_t i = 0; i < levels; ++i) leaf.insert(leaf.end(), recurse, recurse + 4);
    }
    size_t middle = depth > stack.frames.size() + leaf.size() + 1
                        ? depth - stack.frames.size() - leaf.size()
                        : 1;
    size_t op = random() % 8;  // walks start at the RDD/SQL entry points
    for (size_t i = 0; i < middle; ++i) {
      stack.frames.push_back(operators[op]);
      // Hot paths: most calls go to the method's usual callee; some branch off.
      const auto& next = callees[op];
      op = random() % 100 < static_cast<uint64_t>(branch_percent) ? next[random() % next.size()]
                                                                  : next[0];
    }
    stack.frames.insert(stack.frames.end(), leaf.begin(), leaf.end());
    if (seen.insert(stack.frames).second) universe.push_back(std::move(stack));
  }
  return universe;
}

// ---------------------------------------------------------------------------------------------
// Batches, encoded like native-agent/batch_encoder.cc.

struct ExecutorState {
  uint64_t samples_taken = 0;
  uint64_t batches = 0;
};

class BatchFactory {
 public:
  BatchFactory(const Config& config, FrameNames& names) : config_(config), names_(names) {}

  // The batch `executor` sends after 10 s of `stage_id`: the universe's popular core (the first
  // 40% of the batch) plus a random tail, 16 task threads x 3 tasks, 100 Hz CPU sampling.
  std::vector<uint8_t> Build(int executor, int stage_id, const std::vector<StageStack>& universe,
                             ExecutorState& state, uint64_t seed) {
    std::mt19937_64 random(seed);
    const size_t count = static_cast<size_t>(config_.stacks_per_batch);
    const size_t core = count * 2 / 5;
    chosen_.clear();
    for (size_t i = 0; i < core; ++i) chosen_.push_back(static_cast<uint32_t>(i));
    taken_.assign(universe.size(), false);
    while (chosen_.size() < count) {
      uint32_t index = static_cast<uint32_t>(core + random() % (universe.size() - core));
      if (taken_[index]) continue;
      taken_[index] = true;
      chosen_.push_back(index);
    }
    if (config_.sorted_stacks != 0) {  // stacks in lexicographic order: neighbours share prefixes
      std::sort(chosen_.begin(), chosen_.end(),
                [&](uint32_t a, uint32_t b) { return universe[a].frames < universe[b].frames; });
    }

    constexpr int64_t kIntervalNs = 10'000'000;
    const int tasks = config_.task_slots * 3;
    const int64_t first_task_id =
        static_cast<int64_t>(executor) * 1'000'000 + static_cast<int64_t>(state.batches) * tasks;
    const uint64_t samples_per_batch = static_cast<uint64_t>(config_.task_slots) * 1000;  // 10 s

    flatbuffers::FlatBufferBuilder builder(2 << 20);
    local_index_.assign(names_.size(), UINT32_MAX);
    std::vector<flatbuffers::Offset<flatbuffers::String>> string_offsets;
    auto local = [&](uint32_t global) {
      if (global >= local_index_.size()) local_index_.resize(global + 1, UINT32_MAX);
      if (local_index_[global] == UINT32_MAX) {
        local_index_[global] = static_cast<uint32_t>(string_offsets.size());
        string_offsets.push_back(builder.CreateString(names_.Name(global)));
      }
      return local_index_[global];
    };
    uint32_t thread = local(names_.Id(
        "Executor task launch worker for task N.N in stage N.N (TID N)"));  // normalised name

    std::vector<flatbuffers::Offset<fb::Stack>> stack_offsets;
    stack_offsets.reserve(count);
    std::vector<uint32_t> frames;
    for (uint32_t index : chosen_) {
      frames.clear();
      for (uint32_t frame : universe[index].frames) frames.push_back(local(frame));
      stack_offsets.push_back(fb::CreateStack(builder, builder.CreateVector(frames)));
    }

    // Samples per (task, stack): every stack in one task, half of them in a second one; counts
    // skewed so the batch sums to about samples_per_batch.
    struct TaskTime {
      uint64_t samples = 0;
    };
    std::vector<TaskTime> task_time(static_cast<size_t>(tasks) * flamegraph_categories_);
    std::vector<flatbuffers::Offset<fb::StackSample>> sample_offsets;
    sample_offsets.reserve(count * 3 / 2);
    std::uniform_real_distribution<double> uniform(0, 1);
    double mean = static_cast<double>(samples_per_batch) / (static_cast<double>(count) * 1.5);
    auto add_sample = [&](uint32_t stack, int task) {
      double u = uniform(random);
      uint64_t samples = 1 + static_cast<uint64_t>(u * u * u * 4 * (mean - 1));
      fb::Category category = universe[chosen_[stack]].category;
      sample_offsets.push_back(
          fb::CreateStackSample(builder, stack, stage_id, 0, first_task_id + task, thread, category,
                                samples, samples * static_cast<uint64_t>(kIntervalNs)));
      task_time[static_cast<size_t>(task) * flamegraph_categories_ + static_cast<size_t>(category)]
          .samples += samples;
      state.samples_taken += samples;
    };
    for (uint32_t stack = 0; stack < count; ++stack) {
      add_sample(stack, static_cast<int>(random() % static_cast<uint64_t>(tasks)));
      if (random() % 2 == 0) {
        add_sample(stack, static_cast<int>(random() % static_cast<uint64_t>(tasks)));
      }
    }

    std::vector<flatbuffers::Offset<fb::TaskCategoryTime>> task_offsets;
    for (int task = 0; task < tasks; ++task) {
      for (size_t category = 0; category < flamegraph_categories_; ++category) {
        uint64_t samples =
            task_time[static_cast<size_t>(task) * flamegraph_categories_ + category].samples;
        if (samples == 0) continue;
        task_offsets.push_back(fb::CreateTaskCategoryTime(
            builder, stage_id, 0, first_task_id + task, static_cast<fb::Category>(category),
            samples, samples * static_cast<uint64_t>(kIntervalNs)));
      }
    }
    std::vector<flatbuffers::Offset<fb::GcPause>> pause_offsets;
    int64_t start_ns =
        1'700'000'000'000'000'000 + static_cast<int64_t>(state.batches) * 10'000'000'000;
    for (int64_t i = 0; i < 5; ++i) {
      pause_offsets.push_back(
          fb::CreateGcPause(builder, start_ns + i * int64_t{2'000'000'000},
                            static_cast<int64_t>(2'000'000 + random() % 80'000'000)));
    }
    ++state.batches;
    auto health = fb::CreateAgentHealth(builder, state.samples_taken, 0, state.samples_taken / 500,
                                        0, state.samples_taken * 9000, state.batches, 24u << 20);
    auto executor_id = builder.CreateString(std::to_string(executor));
    auto host = builder.CreateString("ip-10-0-" + std::to_string(executor / 250) + "-" +
                                     std::to_string(executor % 250) + ".ec2.internal");
    auto mode = builder.CreateString("cpu");
    auto strings_vector = builder.CreateVector(string_offsets);
    auto stacks_vector = builder.CreateVector(stack_offsets);
    auto samples_vector = builder.CreateVector(sample_offsets);
    auto tasks_vector = builder.CreateVector(task_offsets);
    auto pauses_vector = builder.CreateVector(pause_offsets);
    auto batch =
        fb::CreateBatch(builder, 1, executor_id, host, 20000 + executor, start_ns,
                        start_ns + 10'000'000'000, kIntervalNs, mode, strings_vector, stacks_vector,
                        samples_vector, tasks_vector, pauses_vector, health);
    fb::FinishBatchBuffer(builder, batch);
    return std::vector<uint8_t>(builder.GetBufferPointer(),
                                builder.GetBufferPointer() + builder.GetSize());
  }

 private:
  static constexpr size_t flamegraph_categories_ = 10;
  const Config& config_;
  FrameNames& names_;
  std::vector<uint32_t> chosen_;
  std::vector<bool> taken_;
  std::vector<uint32_t> local_index_;
};

// The batch copied into 8-byte aligned memory, as the JNI side's buffer is (malloc'd).
class AlignedCopy {
 public:
  std::span<const uint8_t> CopyFrom(const std::vector<uint8_t>& bytes) {
    words_.resize((bytes.size() + 7) / 8);
    std::memcpy(words_.data(), bytes.data(), bytes.size());
    return {reinterpret_cast<const uint8_t*>(words_.data()), bytes.size()};
  }

 private:
  std::vector<uint64_t> words_;
};

bool VerifyOnly(std::span<const uint8_t> bytes) {
  flatbuffers::Verifier::Options options;
  options.max_tables = 4u << 20;  // AggregatorOptions::max_tables_per_batch
  flatbuffers::Verifier verifier(bytes.data(), bytes.size(), options);
  return fb::VerifyBatchBuffer(verifier);
}

std::unique_ptr<DriverAggregator> StartOrExit(AggregatorOptions options) {
  auto started = DriverAggregator::Start(std::move(options));
  if (!started.ok()) {
    std::fprintf(stderr, "cannot start the aggregator: %s\n", started.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(started).value();
}

double Percentile(std::vector<uint64_t> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t index = static_cast<size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return static_cast<double>(values[index]);
}

double Mean(const std::vector<uint64_t>& values) {
  if (values.empty()) return 0;
  double sum = 0;
  for (uint64_t v : values) sum += static_cast<double>(v);
  return sum / static_cast<double>(values.size());
}

double Ms(double ns) { return ns / 1e6; }

// The value of one series in a rendered registry ("?" when absent).
std::string MetricValue(const std::string& text, const std::string& series) {
  std::string line_start = "\n" + series + " ";
  size_t at = text.find(line_start);
  if (at == std::string::npos) return "?";
  at += line_start.size();
  return text.substr(at, text.find('\n', at) - at);
}

// A whole-number field of a one-line JSON object (StatusJson), 0 when absent.
uint64_t JsonUint(const std::string& json, const std::string& key) {
  size_t at = json.find("\"" + key + "\":");
  if (at == std::string::npos) return 0;
  return std::strtoull(json.c_str() + at + key.size() + 3, nullptr, 10);
}

// One GET /metrics on loopback; the response size, or 0 on failure.
size_t ScrapeOnce(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  size_t received = 0;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) {
    const char request[] = "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    if (::write(fd, request, sizeof(request) - 1) == static_cast<ssize_t>(sizeof(request) - 1)) {
      char buffer[65536];
      ssize_t n;
      while ((n = ::read(fd, buffer, sizeof(buffer))) > 0) received += static_cast<size_t>(n);
    }
  }
  ::close(fd);
  return received;
}

// ---------------------------------------------------------------------------------------------
// Phases.

struct Universes {
  explicit Universes(const Config& config) : branch_percent(config.branch_percent) {}
  int branch_percent;
  FrameNames names;
  std::unordered_map<int, std::vector<StageStack>> by_stage;
  const std::vector<StageStack>& For(int stage_id, int size) {
    auto it = by_stage.find(stage_id);
    if (it == by_stage.end()) {
      if (by_stage.size() > 4) by_stage.clear();  // stages are fed in order; keep few
      it = by_stage.emplace(stage_id, StageUniverse(names, stage_id, size, branch_percent)).first;
    }
    return it->second;
  }
};

// Writes the stage's flame graph and prints its cost; Ingest waits for the lock meanwhile.
void ReportFlameGraph(DriverAggregator& aggregator, int stage_id, const char* what) {
  uint64_t cpu0 = ThreadCpuNs();
  uint64_t wall0 = WallNs();
  auto path = aggregator.WriteStageFlameGraph(stage_id, 0);
  uint64_t cpu = ThreadCpuNs() - cpu0;
  uint64_t wall = WallNs() - wall0;
  if (!path.ok()) {
    std::fprintf(stderr, "flame graph: %s\n", path.status().ToString().c_str());
    std::exit(1);
  }
  std::error_code error;
  auto size = std::filesystem::file_size(*path, error);
  std::printf(
      "flame graph of %s (stage %d): %.1f ms CPU, %.1f ms wall, %.2f MiB HTML; Ingest "
      "waits for the aggregator's lock during all of it\n",
      what, stage_id, Ms(static_cast<double>(cpu)), Ms(static_cast<double>(wall)),
      static_cast<double>(size) / 1048576.0);
  std::filesystem::remove(*path, error);
}

void RunMemoryPhase(const Config& config, const std::string& output_dir) {
  std::printf("\n== memory: %d stages x %d batches, max_stages=%d, max_nodes_per_stage=%d ==\n",
              config.memory_stages, config.memory_batches_per_stage, config.memory_max_stages,
              config.max_nodes_per_stage);
  Universes universes(config);
  std::vector<ExecutorState> executors(static_cast<size_t>(config.executors));
  BatchFactory factory(config, universes.names);
  {
    // How big the trees are without the cap: one batch's stacks, and a stage's whole universe.
    const auto& universe = universes.For(0, config.stage_universe);
    ExecutorState scratch_state;
    auto bytes = factory.Build(0, 0, universe, scratch_state, 1);
    const fb::Batch* batch = fb::GetBatch(bytes.data());
    sparkprof::flamegraph::ProfileModel one_batch(sparkprof::flamegraph::WeightUnit::kNanoseconds);
    std::vector<std::string_view> path;
    for (const fb::Stack* stack : *batch->stacks()) {
      path.clear();
      for (uint32_t frame : *stack->frames())
        path.push_back(batch->strings()->Get(frame)->string_view());
      one_batch.AddStack(path, sparkprof::flamegraph::Category::kCompute, 1);
    }
    sparkprof::flamegraph::ProfileModel whole(sparkprof::flamegraph::WeightUnit::kNanoseconds);
    for (const StageStack& stack : universe) {
      path.clear();
      for (uint32_t frame : stack.frames) path.push_back(universes.names.Name(frame));
      whole.AddStack(path, sparkprof::flamegraph::Category::kCompute, 1);
    }
    std::printf(
        "uncapped call tree: %zu nodes for one batch (%d stacks, %u distinct frames), "
        "%zu for a stage's %d stacks\n",
        one_batch.node_count(), config.stacks_per_batch, batch->strings()->size(),
        whole.node_count(), config.stage_universe);
  }
  double rss_start = ProcStatusMib("VmRSS");
  AggregatorOptions options;
  options.output_dir = output_dir;
  options.max_profile_file_bytes = 0;  // memory only; the profile phase measures the file
  options.max_batches_per_second = 1'000'000'000;
  options.max_stages = static_cast<size_t>(config.memory_max_stages);
  options.max_nodes_per_stage = static_cast<size_t>(config.max_nodes_per_stage);
  auto aggregator = StartOrExit(options);
  std::printf("RSS before the aggregator: %.1f MiB (bench's own tables)\n", rss_start);
  std::printf("%8s %10s %12s %12s %14s\n", "stages", "batches", "RSS MiB", "HWM MiB",
              "folded stacks");
  uint64_t batches = 0;
  uint64_t ingest_ns = 0;
  int report_every = std::max(1, config.memory_stages / 10);
  AlignedCopy copy;
  double last_rss = 0;
  for (int stage = 0; stage < config.memory_stages; ++stage) {
    const auto& universe = universes.For(stage, config.stage_universe);
    for (int b = 0; b < config.memory_batches_per_stage; ++b) {
      int executor = static_cast<int>(batches % static_cast<uint64_t>(config.executors));
      auto bytes = factory.Build(executor, stage, universe,
                                 executors[static_cast<size_t>(executor)], batches * 7919 + 1);
      auto span = copy.CopyFrom(bytes);
      uint64_t t0 = ThreadCpuNs();
      IngestOutcome outcome = aggregator->Ingest(span);
      ingest_ns += ThreadCpuNs() - t0;
      if (outcome != IngestOutcome::kAccepted) {
        std::fprintf(stderr, "batch refused: %s\n", sparkprof::driver::IngestOutcomeName(outcome));
        std::exit(1);
      }
      ++batches;
    }
    if ((stage + 1) % report_every == 0 || stage + 1 == config.memory_stages) {
      std::string text = aggregator->registry().Render();
      last_rss = ProcStatusMib("VmRSS");
      std::printf("%8d %10llu %12.1f %12.1f %14s\n", stage + 1,
                  static_cast<unsigned long long>(batches), last_rss, ProcStatusMib("VmHWM"),
                  MetricValue(text, "sparkprof_driver_stacks_folded_total").c_str());
    }
  }
  size_t kept = std::min(config.memory_stages, config.memory_max_stages);
  double per_stage = (last_rss - rss_start) / static_cast<double>(kept);
  std::printf("ingest CPU: %.2f ms/batch over %llu batches (trees growing to the cap)\n",
              Ms(static_cast<double>(ingest_ns) / static_cast<double>(batches)),
              static_cast<unsigned long long>(batches));
  std::printf(
      "stages kept: %zu; (RSS - start) / stages kept = %.1f MiB per stage = %.0f bytes "
      "per node at the %d-node cap\n",
      kept, per_stage, per_stage * 1048576.0 / config.max_nodes_per_stage,
      config.max_nodes_per_stage);
  std::printf("bound at the plugin defaults (256 stages x 200000 nodes) at this cost: %.0f MiB\n",
              per_stage / config.max_nodes_per_stage * 200000.0 * 256);

  // The last stage's tree is full: the largest tree the driver renders.
  ReportFlameGraph(*aggregator, config.memory_stages - 1, "a stage at the node cap");
}

void RunIngestPhase(const Config& config, const std::string& output_dir) {
  std::printf(
      "\n== ingest: %d stages x %d batches (%d executors, %d distinct stacks per batch, "
      "stage universe %d) ==\n",
      config.ingest_stages, config.ingest_batches_per_stage, config.executors,
      config.stacks_per_batch, config.stage_universe);
  Universes universes(config);
  std::vector<ExecutorState> executors(static_cast<size_t>(config.executors));
  BatchFactory factory(config, universes.names);
  AggregatorOptions options;
  options.prometheus_bind_address = "127.0.0.1:0";
  options.output_dir = output_dir;                 // for the flame graph at the end
  options.max_profile_file_bytes = 0;              // the profile phase measures the file
  options.max_batches_per_second = 1'000'000'000;  // the bench feeds faster than real time
  auto aggregator = StartOrExit(options);

  std::vector<uint64_t> ingest_ns, verify_ns, memcpy_ns, build_ns, cold_ns, warm_ns;
  uint64_t bytes_total = 0;
  uint64_t sample_entries = 0;
  AlignedCopy copy;
  std::vector<uint8_t> memcpy_target;
  uint64_t sequence = 0;
  for (int stage = 0; stage < config.ingest_stages; ++stage) {
    const auto& universe = universes.For(1000 + stage, config.stage_universe);
    for (int b = 0; b < config.ingest_batches_per_stage; ++b) {
      int executor = b % config.executors;
      uint64_t t0 = ThreadCpuNs();
      auto bytes = factory.Build(executor, 1000 + stage, universe,
                                 executors[static_cast<size_t>(executor)], ++sequence * 104729);
      uint64_t t1 = ThreadCpuNs();
      memcpy_target.resize(bytes.size());
      std::memcpy(memcpy_target.data(), bytes.data(), bytes.size());
      uint64_t t2 = ThreadCpuNs();
      auto span = copy.CopyFrom(bytes);
      uint64_t t3 = ThreadCpuNs();
      bool verified = VerifyOnly(span);
      uint64_t t4 = ThreadCpuNs();
      IngestOutcome outcome = aggregator->Ingest(span);
      uint64_t t5 = ThreadCpuNs();
      if (!verified || outcome != IngestOutcome::kAccepted) {
        std::fprintf(stderr, "batch refused: verified=%d outcome=%s\n", verified,
                     sparkprof::driver::IngestOutcomeName(outcome));
        std::exit(1);
      }
      build_ns.push_back(t1 - t0);
      memcpy_ns.push_back(t2 - t1);
      verify_ns.push_back(t4 - t3);
      ingest_ns.push_back(t5 - t4);
      (b < config.ingest_batches_per_stage / 10 ? cold_ns : warm_ns).push_back(t5 - t4);
      bytes_total += bytes.size();
      sample_entries += fb::GetBatch(span.data())->samples()->size();
      if (b == 0) {
        const fb::Batch* batch = fb::GetBatch(span.data());
        uint64_t frames_total = 0;
        for (const fb::Stack* stack : *batch->stacks()) frames_total += stack->frames()->size();
        std::printf(
            "batch: %.2f MiB, %u strings, %u stacks (%.1f frames mean), %u samples, "
            "%u task times\n",
            static_cast<double>(bytes.size()) / 1048576.0, batch->strings()->size(),
            batch->stacks()->size(), static_cast<double>(frames_total) / batch->stacks()->size(),
            batch->samples()->size(), batch->task_times()->size());
      }
    }
  }
  double mean_ingest = Mean(ingest_ns);
  std::printf("%-34s %10s %10s %10s\n", "CPU per batch (ms)", "mean", "p50", "p99");
  auto row = [](const char* what, const std::vector<uint64_t>& v) {
    std::printf("%-34s %10.3f %10.3f %10.3f\n", what, Ms(Mean(v)), Ms(Percentile(v, 0.5)),
                Ms(Percentile(v, 0.99)));
  };
  row("Ingest (all)", ingest_ns);
  row("Ingest, first 10% of each stage", cold_ns);
  row("Ingest, rest (warm stage tree)", warm_ns);
  row("baseline: Verifier alone", verify_ns);
  row("baseline: memcpy of the batch", memcpy_ns);
  row("(not timed in Ingest: building it)", build_ns);
  std::printf("ratios of means: Ingest / Verifier = %.1f, Ingest / memcpy = %.1f\n",
              mean_ingest / Mean(verify_ns), mean_ingest / Mean(memcpy_ns));
  double per_second = 1e9 / mean_ingest;
  std::printf(
      "one core sustains %.0f batches/s (%.0f MiB/s) vs 100 batches/s needed: "
      "%.1fx headroom, %.1f%% of a core at 100/s\n",
      per_second, per_second * static_cast<double>(bytes_total) / ingest_ns.size() / 1048576.0,
      per_second / 100.0, 100.0 * 100.0 / per_second);

  std::string text;
  uint64_t r0 = ThreadCpuNs();
  for (int i = 0; i < config.scrapes; ++i) text = aggregator->registry().Render();
  uint64_t render_ns = (ThreadCpuNs() - r0) / static_cast<uint64_t>(config.scrapes);
  std::vector<uint64_t> http_ns;
  size_t response = 0;
  for (int i = 0; i < std::min(config.scrapes, 50); ++i) {
    uint64_t w0 = WallNs();
    response = ScrapeOnce(aggregator->port());
    http_ns.push_back(WallNs() - w0);
  }
  std::printf(
      "scrape: registry render %.1f us CPU (%zu bytes); GET /metrics on loopback %.2f ms "
      "wall p50 (%zu bytes with headers)\n",
      static_cast<double>(render_ns) / 1e3, text.size(), Ms(Percentile(http_ns, 0.5)), response);
  std::printf("accepted %s batches, %s bytes; executors reporting %s\n",
              MetricValue(text, "sparkprof_driver_batches_total{outcome=\"accepted\"}").c_str(),
              MetricValue(text, "sparkprof_driver_batch_bytes_total").c_str(),
              MetricValue(text, "spark_agent_reporting_executors").c_str());
  double folded =
      std::strtod(MetricValue(text, "sparkprof_driver_stacks_folded_total").c_str(), nullptr);
  std::printf("stack samples folded into [overflow] by the node cap: %.0f of %llu (%.1f%%)\n",
              folded, static_cast<unsigned long long>(sample_entries),
              100.0 * folded / static_cast<double>(sample_entries));
  ReportFlameGraph(*aggregator, 1000 + config.ingest_stages - 1, "the last stage");

  // What Spark's dispatcher thread pays now (receive -> JNI -> Enqueue: the copy into the ingest
  // queue), and the ingest thread folding the same batches behind it.
  const int queued_batches = std::min(config.ingest_batches_per_stage, 200);
  const auto& universe = universes.For(3000, config.stage_universe);
  std::vector<std::vector<uint8_t>> batches;
  for (int b = 0; b < queued_batches; ++b) {
    batches.push_back(factory.Build(b % config.executors, 3000, universe,
                                    executors[static_cast<size_t>(b % config.executors)],
                                    ++sequence * 104729));
  }
  std::vector<uint64_t> enqueue_ns;
  int dropped = 0;
  uint64_t w0 = WallNs();
  for (const auto& bytes : batches) {
    uint64_t t0 = ThreadCpuNs();
    IngestOutcome outcome = aggregator->Enqueue(bytes.size(), [&](uint8_t* destination) {
      std::memcpy(destination, bytes.data(), bytes.size());
      return true;
    });
    enqueue_ns.push_back(ThreadCpuNs() - t0);
    if (outcome != IngestOutcome::kAccepted) ++dropped;
  }
  bool drained = aggregator->DrainIngestQueue(std::chrono::seconds(120));
  uint64_t wall = WallNs() - w0;
  std::printf(
      "dispatcher thread (Enqueue: copy into the ingest queue): %.3f ms CPU mean, %.3f p99 per "
      "batch; %d batches queued back to back, %d dropped (queue full), all folded %s after "
      "%.1f ms wall (%.2f ms per batch)\n",
      Ms(Mean(enqueue_ns)), Ms(Percentile(enqueue_ns, 0.99)), queued_batches, dropped,
      drained ? "and drained" : "NOT drained", Ms(static_cast<double>(wall)),
      Ms(static_cast<double>(wall) / queued_batches));
}

void RunProfilePhase(const Config& config, const std::string& output_dir) {
  uint64_t cap = static_cast<uint64_t>(config.profile_cap_mib) << 20;
  std::printf("\n== profile file: max_profile_file_bytes=%d MiB, output in %s ==\n",
              config.profile_cap_mib, output_dir.c_str());
  Universes universes(config);
  std::vector<ExecutorState> executors(static_cast<size_t>(config.executors));
  BatchFactory factory(config, universes.names);
  AggregatorOptions options;
  options.output_dir = output_dir;
  options.max_profile_file_bytes = cap;
  options.max_batches_per_second = 1'000'000'000;
  auto aggregator = StartOrExit(options);
  const auto& universe = universes.For(2000, config.stage_universe);
  std::vector<uint64_t> writing_cpu, writing_wall, capped_cpu;
  AlignedCopy copy;
  uint64_t batch_bytes = 0;
  int after_cap = 0;
  uint64_t sequence = 0;
  while (after_cap < config.profile_batches_after_cap) {
    int executor = static_cast<int>(sequence % static_cast<uint64_t>(config.executors));
    auto bytes = factory.Build(executor, 2000, universe, executors[static_cast<size_t>(executor)],
                               ++sequence * 15485863);
    batch_bytes = bytes.size();
    auto span = copy.CopyFrom(bytes);
    uint64_t skipped_before = JsonUint(aggregator->StatusJson(), "profile_file_batches_skipped");
    uint64_t c0 = ThreadCpuNs();
    uint64_t w0 = WallNs();
    aggregator->Ingest(span);
    uint64_t c = ThreadCpuNs() - c0;
    uint64_t w = WallNs() - w0;
    // This batch was not written when the skipped count grew.
    bool capped =
        JsonUint(aggregator->StatusJson(), "profile_file_batches_skipped") > skipped_before;
    if (capped) {
      capped_cpu.push_back(c);
      ++after_cap;
    } else {
      writing_cpu.push_back(c);
      writing_wall.push_back(w);
      if (writing_cpu.size() * batch_bytes > cap + (uint64_t{64} << 20)) {
        std::fprintf(stderr, "profile file passed its cap without skipping: %s\n",
                     aggregator->StatusJson().c_str());
        std::exit(1);
      }
    }
  }
  std::printf(
      "%zu batches written before the cap (%.2f MiB each): %.1f s of a 1,000-executor "
      "cluster at 100 batches/s\n",
      writing_cpu.size(), static_cast<double>(batch_bytes) / 1048576.0,
      static_cast<double>(writing_cpu.size()) / 100.0);
  std::printf(
      "Ingest while appending to profile.sparkprof: %.3f ms CPU mean, %.3f ms wall p50; "
      "after the cap: %.3f ms CPU mean\n",
      Ms(Mean(writing_cpu)), Ms(Percentile(writing_wall, 0.5)), Ms(Mean(capped_cpu)));
  std::printf("status: %s\n", aggregator->StatusJson().c_str());
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  if (!ParseArgs(argc, argv, config)) {
    std::fprintf(stderr, "usage: driver_ingest_bench [key=value ...] (see the Config struct)\n");
    return 2;
  }
  std::string output_dir = config.output_dir.empty()
                               ? (std::filesystem::temp_directory_path() /
                                  ("sparkprof_ingest_bench_" + std::to_string(::getpid())))
                                     .string()
                               : config.output_dir;
  bool all = config.mode == "all";
  if (!all && config.mode != "memory" && config.mode != "ingest" && config.mode != "profile") {
    std::fprintf(stderr, "mode must be all, memory, ingest or profile\n");
    return 2;
  }
  // Memory first, while the process is small, so RSS growth is the aggregator's.
  if (all || config.mode == "memory") RunMemoryPhase(config, output_dir);
  if (all || config.mode == "ingest") RunIngestPhase(config, output_dir);
  if (all || config.mode == "profile") RunProfilePhase(config, output_dir);
  if (config.output_dir.empty()) {
    std::error_code error;
    std::filesystem::remove_all(output_dir, error);
  }
  return 0;
}
