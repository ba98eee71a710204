// Every rule in frame_classifier_rules.cc is exercised here with real class and method names
// (reference/spark-facts.md section 7); a rule without a test frame fails RulesAreAllCovered.
#include "common/frame_classifier.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace sparkprof::classifier {
namespace {

struct FrameCase {
  const char* frame;
  Category expected;
};

const FrameCase kRealFrames[] = {
    {"org.apache.spark.sql.catalyst.expressions.GeneratedClass$GeneratedIteratorForCodegenStage1."
     "processNext",
     Category::kCompute},
    // serialization
    {"java.io.ObjectOutputStream.writeObject", Category::kSerialization},
    {"java.io.ObjectOutputStream.writeOrdinaryObject", Category::kSerialization},
    {"java.io.ObjectOutputStream.defaultWriteFields", Category::kSerialization},
    {"java.io.ObjectOutputStream$BlockDataOutputStream.write", Category::kSerialization},
    {"java.io.ObjectInputStream.readObject", Category::kSerialization},
    {"org.apache.spark.serializer.JavaSerializationStream.writeObject", Category::kSerialization},
    {"org.apache.spark.serializer.JavaDeserializationStream.readObject", Category::kSerialization},
    {"org.apache.spark.serializer.JavaSerializerInstance.serialize", Category::kSerialization},
    {"org.apache.spark.serializer.JavaSerializerInstance.deserializeStream",
     Category::kSerialization},
    {"org.apache.spark.serializer.KryoSerializationStream.writeObject", Category::kSerialization},
    {"org.apache.spark.serializer.KryoDeserializationStream.readObject", Category::kSerialization},
    {"org.apache.spark.serializer.KryoSerializerInstance.deserialize", Category::kSerialization},
    {"com.esotericsoftware.kryo.Kryo.writeClassAndObject", Category::kSerialization},
    {"org.apache.spark.sql.execution.UnsafeRowSerializerInstance$$anon$1.writeValue",
     Category::kSerialization},
    {"org.apache.spark.sql.execution.UnsafeRowSerializerInstance$$anon$2.asKeyValueIterator",
     Category::kSerialization},
    {"org.apache.spark.sql.catalyst.expressions.UnsafeRow.writeToStream", Category::kSerialization},
    {"org.apache.spark.serializer.SerializationStream.writeAll", Category::kSerialization},
    {"org.apache.spark.serializer.DeserializationStream$$anon$1.getNext", Category::kSerialization},
    {"org.apache.spark.serializer.SerializerManager.wrapForCompression", Category::kSerialization},
    {"org.apache.spark.serializer.SerializerManager.dataSerializeStream", Category::kSerialization},
    // spill
    {"org.apache.spark.util.collection.unsafe.sort.UnsafeExternalSorter.spill", Category::kSpill},
    {"org.apache.spark.util.collection.unsafe.sort.UnsafeSorterSpillWriter.write",
     Category::kSpill},
    {"org.apache.spark.util.collection.ExternalSorter.spillMemoryIteratorToDisk", Category::kSpill},
    {"org.apache.spark.util.collection.ExternalSorter.maybeSpillCollection", Category::kSpill},
    {"org.apache.spark.util.collection.Spillable.maybeSpill", Category::kSpill},
    {"org.apache.spark.util.collection.ExternalAppendOnlyMap.spill", Category::kSpill},
    {"org.apache.spark.memory.TaskMemoryManager.trySpillAndAcquire", Category::kSpill},
    {"org.apache.spark.shuffle.sort.ShuffleExternalSorter.writeSortedFile", Category::kSpill},
    // shuffle write
    {"org.apache.spark.shuffle.sort.UnsafeShuffleWriter.insertRecordIntoSorter",
     Category::kShuffleWrite},
    {"org.apache.spark.shuffle.sort.UnsafeShuffleWriter.mergeSpillsWithTransferTo",
     Category::kShuffleWrite},
    {"org.apache.spark.shuffle.sort.BypassMergeSortShuffleWriter.writePartitionedDataWithChannel",
     Category::kShuffleWrite},
    {"org.apache.spark.shuffle.sort.ShuffleExternalSorter.insertRecord", Category::kShuffleWrite},
    {"org.apache.spark.util.collection.ExternalSorter.writePartitionedMapOutput",
     Category::kShuffleWrite},
    {"org.apache.spark.storage.DiskBlockObjectWriter.write", Category::kShuffleWrite},
    // shuffle read
    {"org.apache.spark.storage.ShuffleBlockFetcherIterator.next", Category::kShuffleRead},
    {"org.apache.spark.storage.ShuffleBlockFetcherIterator.fetchUpToMaxBytes",
     Category::kShuffleRead},
    {"org.apache.spark.shuffle.BlockStoreShuffleReader.read", Category::kShuffleRead},
    // S3A write
    {"org.apache.hadoop.fs.s3a.S3ABlockOutputStream.close", Category::kS3aWrite},
    {"org.apache.hadoop.fs.s3a.S3ABlockOutputStream$MultiPartUpload.uploadBlockAsync",
     Category::kS3aWrite},
    {"org.apache.hadoop.fs.s3a.S3ADataBlocks$DiskBlock.startUpload", Category::kS3aWrite},
    {"org.apache.hadoop.fs.s3a.WriteOperationHelper.completeMPUwithRetries", Category::kS3aWrite},
    {"org.apache.hadoop.fs.s3a.commit.magic.MagicS3GuardCommitter.commitTask", Category::kS3aWrite},
    {"org.apache.hadoop.fs.s3a.commit.impl.CommitOperations.commitOrFail", Category::kS3aWrite},
    {"org.apache.hadoop.fs.s3a.S3AFileSystem.putObjectDirect", Category::kS3aWrite},
    {"org.apache.hadoop.fs.s3a.S3AFileSystem.innerRename", Category::kS3aWrite},
    {"com.amazonaws.services.s3.AmazonS3Client.putObject", Category::kS3aWrite},
    {"com.amazonaws.services.s3.transfer.TransferManager.upload", Category::kS3aWrite},
    {"software.amazon.awssdk.services.s3.DefaultS3Client.uploadPart", Category::kS3aWrite},
    {"org.apache.hadoop.mapreduce.lib.output.committer.manifest.ManifestCommitter.commitTask",
     Category::kS3aWrite},
    // S3A read
    {"org.apache.hadoop.fs.s3a.S3AInputStream.read", Category::kS3aRead},
    {"org.apache.hadoop.fs.s3a.S3AInputStream.reopen", Category::kS3aRead},
    {"org.apache.hadoop.fs.s3a.S3AFileSystem.getObjectMetadata", Category::kS3aRead},
    {"org.apache.hadoop.fs.s3a.S3AFileSystem.innerListStatus", Category::kS3aRead},
    {"com.amazonaws.services.s3.AmazonS3Client.getObject", Category::kS3aRead},
    {"software.amazon.awssdk.services.s3.DefaultS3Client.getObject", Category::kS3aRead},
    // file_io
    {"org.apache.parquet.hadoop.InternalParquetRecordWriter.flushRowGroupToStore",
     Category::kFileIo},
    {"org.apache.parquet.hadoop.CodecFactory$HeapBytesCompressor.compress", Category::kFileIo},
    {"org.apache.spark.sql.execution.datasources.parquet.VectorizedParquetRecordReader.nextBatch",
     Category::kFileIo},
    {"org.apache.orc.impl.WriterImpl.flushStripe", Category::kFileIo},
    {"org.apache.spark.sql.execution.datasources.orc.OrcOutputWriter.write", Category::kFileIo},
    {"org.apache.spark.sql.execution.datasources.FileScanRDD$$anon$1.hasNext", Category::kFileIo},
    {"org.apache.spark.sql.execution.datasources.SingleDirectoryDataWriter.write",
     Category::kFileIo},
    {"org.apache.spark.sql.execution.datasources.DynamicPartitionDataSingleWriter.write",
     Category::kFileIo},
    {"org.apache.spark.sql.execution.datasources.DynamicPartitionDataConcurrentWriter.write",
     Category::kFileIo},
    {"org.apache.spark.sql.execution.datasources.BaseDynamicPartitionDataWriter.writeRecord",
     Category::kFileIo},
    {"org.apache.spark.internal.io.HadoopMapReduceCommitProtocol.commitTask", Category::kFileIo},
    {"org.apache.spark.mapred.SparkHadoopMapRedUtil$.commitTask", Category::kFileIo},
    {"org.apache.spark.internal.io.cloud.BindingParquetOutputCommitter.commitTask",
     Category::kFileIo},
    // file_io fallback (JDK primitives)
    {"java.io.FileOutputStream.writeBytes", Category::kFileIo},
    {"java.io.FileInputStream.readBytes", Category::kFileIo},
    {"java.io.RandomAccessFile.writeBytes", Category::kFileIo},
    {"java.io.FileDescriptor.sync", Category::kFileIo},
    {"sun.nio.ch.FileChannelImpl.transferTo", Category::kFileIo},
};

TEST(FrameClassifierTest, RealFramesGetTheirCategory) {
  for (const FrameCase& c : kRealFrames) {
    auto match = ClassifyFrame(c.frame);
    ASSERT_TRUE(match.has_value()) << c.frame;
    EXPECT_EQ(match->category, c.expected) << c.frame << " -> " << CategoryName(match->category);
  }
}

TEST(FrameClassifierTest, RulesAreAllCovered) {
  std::set<int> used;
  for (const FrameCase& c : kRealFrames) {
    if (auto match = ClassifyFrame(c.frame)) used.insert(match->rule_index);
  }
  for (size_t i = 0; i < FrameRules().size(); ++i) {
    EXPECT_TRUE(used.count(static_cast<int>(i)))
        << "rule " << i << " (" << FrameRules()[i].class_pattern << " " << FrameRules()[i].methods
        << ") has no test frame";
  }
}

TEST(FrameClassifierTest, EntryPointsThatPullUpstreamWorkAreNotRules) {
  EXPECT_FALSE(ClassifyFrame("org.apache.spark.shuffle.sort.SortShuffleWriter.write"));
  EXPECT_FALSE(
      ClassifyFrame("org.apache.spark.sql.execution.datasources.FileFormatWriter$.executeTask"));
  EXPECT_FALSE(ClassifyFrame("org.apache.spark.util.collection.ExternalSorter.insertAll"));
  EXPECT_FALSE(ClassifyFrame("java.util.HashMap.put"));
  EXPECT_FALSE(ClassifyFrame("org.apache.hadoop.fs.s3a.S3AFileSystem.getBucket"));
  EXPECT_FALSE(ClassifyFrame("noPackageNoDot"));
}

TEST(FrameClassifierTest, AcceptsJvmInternalSlashes) {
  auto match = ClassifyFrame("java/io/ObjectOutputStream.writeObject0");
  ASSERT_TRUE(match);
  EXPECT_EQ(match->category, Category::kSerialization);
}

TEST(FrameClassifierTest, InnermostStrongFrameWins) {
  std::vector<std::string_view> stack = {
      // innermost first
      "java.io.ObjectOutputStream.writeObject0",
      "java.io.ObjectOutputStream.writeObject",
      "org.apache.spark.serializer.JavaSerializationStream.writeObject",
      "org.apache.spark.storage.DiskBlockObjectWriter.write",
      "org.apache.spark.util.collection.ExternalSorter.writePartitionedMapOutput",
      "org.apache.spark.shuffle.sort.SortShuffleWriter.write",
      "org.apache.spark.executor.Executor$TaskRunner.run"};
  EXPECT_EQ(ClassifyStack(stack, "Executor task launch worker for task 1.0"),
            Category::kSerialization);
}

TEST(FrameClassifierTest, WeakFrameLosesToAnEnclosingStrongFrame) {
  std::vector<std::string_view> spill = {
      "java.io.FileOutputStream.writeBytes", "org.apache.spark.storage.DiskBlockObjectWriter.write",
      "org.apache.spark.util.collection.ExternalSorter.spillMemoryIteratorToDisk",
      "org.apache.spark.util.collection.ExternalSorter.spill"};
  EXPECT_EQ(ClassifyStack(spill, "worker"), Category::kSpill);
  std::vector<std::string_view> bypass = {
      "java.io.FileOutputStream.writeBytes", "org.apache.spark.storage.DiskBlockObjectWriter.write",
      "org.apache.spark.shuffle.sort.BypassMergeSortShuffleWriter.write"};
  EXPECT_EQ(ClassifyStack(bypass, "worker"), Category::kShuffleWrite);
}

TEST(FrameClassifierTest, JdkFileCallsAreFileIoOnlyWhenNothingElseNamesTheWork) {
  // An application writing files itself (e.g. in foreachPartition).
  std::vector<std::string_view> own_write = {"java.io.FileOutputStream.writeBytes",
                                             "java.io.FileOutputStream.write",
                                             "java.io.BufferedOutputStream.flushBuffer",
                                             "com.example.Exporter.writeRows",
                                             "org.apache.spark.rdd.RDD.$anonfun$foreachPartition$2",
                                             "org.apache.spark.executor.Executor$TaskRunner.run"};
  EXPECT_EQ(ClassifyStack(own_write, "Executor task launch worker for task 3.0"),
            Category::kFileIo);
  std::vector<std::string_view> channel = {"sun.nio.ch.FileChannelImpl.force",
                                           "com.example.Exporter.close"};
  EXPECT_EQ(ClassifyStack(channel, "worker"), Category::kFileIo);
  // The block writer (weak shuffle write) names the work: the JDK frame inside it does not win.
  std::vector<std::string_view> block_writer = {
      "java.io.FileOutputStream.writeBytes",
      "org.apache.spark.storage.DiskBlockObjectWriter.write"};
  EXPECT_EQ(ClassifyStack(block_writer, "worker"), Category::kShuffleWrite);
  // A helper pool's name wins over the fallback too.
  std::vector<std::string_view> buffer_to_disk = {"java.io.FileOutputStream.writeBytes",
                                                  "org.example.Buffer.spool"};
  EXPECT_EQ(ClassifyStack(buffer_to_disk, "s3a-transfer-bucket-bounded-pool1-t2"),
            Category::kS3aWrite);
  // Not the methods listed: a FileInputStream constructor is not I/O time.
  std::vector<std::string_view> open = {"java.io.FileInputStream.<init>"};
  EXPECT_EQ(ClassifyStack(open, "worker"), Category::kCompute);
}

TEST(FrameClassifierTest, CodegenInsideAWriteIsCompute) {
  std::vector<std::string_view> stack = {
      "java.lang.Math.sqrt",
      "org.apache.spark.sql.catalyst.expressions.GeneratedClass$GeneratedIteratorForCodegenStage2."
      "processNext",
      "org.apache.spark.sql.execution.datasources.FileFormatDataWriter.writeWithIterator",
      "org.apache.spark.sql.execution.datasources.FileFormatWriter$.executeTask"};
  EXPECT_EQ(ClassifyStack(stack, "worker"), Category::kCompute);
}

TEST(FrameClassifierTest, HelperThreadsAreClassifiedByName) {
  std::vector<std::string_view> stack = {"java.net.SocketOutputStream.socketWrite0",
                                         "org.apache.http.impl.io.SessionOutputBufferImpl.flush"};
  EXPECT_EQ(ClassifyStack(stack, "s3a-transfer-mybucket-bounded-pool1-t3"), Category::kS3aWrite);
  EXPECT_EQ(ClassifyStack(stack, "shuffle-client-4-1"), Category::kShuffleRead);
  EXPECT_EQ(ClassifyStack(stack, "main"), Category::kCompute);
  // A frame rule beats the thread rule.
  std::vector<std::string_view> read = {"org.apache.hadoop.fs.s3a.S3AInputStream.read"};
  EXPECT_EQ(ClassifyStack(read, "s3a-transfer-b-unbounded-pool2-t1"), Category::kS3aRead);
}

// --- Wait rules: real stacks (innermost first) of waiting task threads, Spark 3.5.9 / 4.2.0
// jars and JDK 17 / 25 (javap), plus the agent's own JVM test (tests/agent, case cpu_wall_waits).
struct WaitCase {
  std::vector<std::string_view> frames;
  Category expected;
};

const WaitCase kRealWaits[] = {
    // PySpark 3.5: the task thread reads its worker's output over a java.net.Socket with no read
    // timeout (JDK 17's NioSocketImpl reads in SocketDispatcher.read0: the frames the JVM test's
    // socket reader shows).
    {{"sun.nio.ch.SocketDispatcher.read0", "sun.nio.ch.SocketDispatcher.read",
      "sun.nio.ch.NioSocketImpl.tryRead", "sun.nio.ch.NioSocketImpl.implRead",
      "sun.nio.ch.NioSocketImpl.read", "sun.nio.ch.NioSocketImpl$1.read",
      "java.net.Socket$SocketInputStream.read", "java.io.BufferedInputStream.fill",
      "java.io.BufferedInputStream.read", "java.io.DataInputStream.readInt",
      "org.apache.spark.api.python.PythonRunner$$anon$3.read",
      "org.apache.spark.api.python.BasePythonRunner$ReaderIterator.hasNext",
      "scala.collection.Iterator$$anon$10.hasNext",
      "org.apache.spark.executor.Executor$TaskRunner.run"},
     Category::kPythonWait},
    // PySpark 4.x: BasePythonRunner$ReaderInputStream waits in its worker's Selector.
    {{"sun.nio.ch.EPoll.wait", "sun.nio.ch.EPollSelectorImpl.doSelect",
      "sun.nio.ch.SelectorImpl.lockAndDoSelect", "sun.nio.ch.SelectorImpl.select",
      "org.apache.spark.api.python.BasePythonRunner$ReaderInputStream.read",
      "java.io.BufferedInputStream.fill", "java.io.DataInputStream.readInt",
      "org.apache.spark.api.python.PythonRunner$$anon$3.read",
      "org.apache.spark.api.python.BasePythonRunner$ReaderIterator.hasNext"},
     Category::kPythonWait},
    // JDK 8/11's socket read under an Arrow UDF's output reader (Spark 3.5 runs on JDK 8/11 too).
    {{"java.net.SocketInputStream.socketRead0", "java.net.SocketInputStream.read",
      "java.io.BufferedInputStream.fill", "java.io.DataInputStream.readInt",
      "org.apache.spark.sql.execution.python.PythonArrowOutput$$anon$1.read"},
     Category::kPythonWait},
    // A socket read with a timeout (NioSocketImpl parks in Net.poll) outside Python.
    {{"sun.nio.ch.Net.poll", "sun.nio.ch.NioSocketImpl.park", "sun.nio.ch.NioSocketImpl.timedRead",
      "sun.nio.ch.NioSocketImpl.implRead", "sun.nio.ch.NioSocketImpl.read",
      "java.net.Socket$SocketInputStream.read", "com.example.Client.fetch"},
     Category::kIoWait},
    // Shuffle: next() takes from its results queue (LinkedBlockingQueue.take) -- the queue's
    // j.u.c frame is inner, the fetcher's strong rule wins.
    {{"jdk.internal.misc.Unsafe.park", "java.util.concurrent.locks.LockSupport.park",
      "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject.await",
      "java.util.concurrent.LinkedBlockingQueue.take",
      "org.apache.spark.storage.ShuffleBlockFetcherIterator.next",
      "org.apache.spark.storage.ShuffleBlockFetcherIterator.next",
      "scala.collection.Iterator$$anon$11.nextCur"},
     Category::kShuffleFetchWait},
    // HDFS: DFSInputStream reading a block over Hadoop's SocketIOWithTimeout selector.
    {{"sun.nio.ch.EPoll.wait", "sun.nio.ch.EPollSelectorImpl.doSelect",
      "sun.nio.ch.SelectorImpl.select",
      "org.apache.hadoop.net.SocketIOWithTimeout$SelectorPool.select",
      "org.apache.hadoop.net.SocketIOWithTimeout.doIO",
      "org.apache.hadoop.net.SocketInputStream.read",
      "org.apache.hadoop.hdfs.client.impl.BlockReaderRemote.read",
      "org.apache.hadoop.hdfs.DFSInputStream.read"},
     Category::kIoWait},
    // HDFS write: DFSOutputStream waits for acks in Object.wait.
    {{"java.lang.Object.wait", "org.apache.hadoop.hdfs.DFSOutputStream.waitForAckedSeqno",
      "org.apache.hadoop.hdfs.DFSOutputStream.flushOrSync"},
     Category::kIoWait},
    // S3A through the AWS SDK v1's Apache HTTP client (socket read on JDK 17).
    {{"sun.nio.ch.Net.poll", "sun.nio.ch.NioSocketImpl.park", "sun.nio.ch.NioSocketImpl.timedRead",
      "sun.nio.ch.NioSocketImpl.implRead", "sun.nio.ch.NioSocketImpl.read",
      "java.net.Socket$SocketInputStream.read", "sun.security.ssl.SSLSocketInputRecord.read",
      "com.amazonaws.http.AmazonHttpClient$RequestExecutor.execute"},
     Category::kIoWait},
    // AWS SDK v2 waiting on its async response future.
    {{"jdk.internal.misc.Unsafe.park", "java.util.concurrent.locks.LockSupport.park",
      "java.util.concurrent.CompletableFuture$Signaller.block",
      "java.util.concurrent.CompletableFuture.join",
      "software.amazon.awssdk.core.internal.http.pipeline.stages.AsyncRetryableStage.execute"},
     Category::kIoWait},
    // JDBC source: the driver's socket read under JDBCRDD's iterator.
    {{"sun.nio.ch.Net.poll", "sun.nio.ch.NioSocketImpl.park", "sun.nio.ch.NioSocketImpl.implRead",
      "org.postgresql.core.PGStream.receiveChar", "org.postgresql.jdbc.PgResultSet.next",
      "org.apache.spark.sql.execution.datasources.jdbc.JDBCRDD$$anon$1.getNext"},
     Category::kIoWait},
    // Local disk: a shuffle or spill file read, and a write that blocks (JDK 17 and 21+).
    {{"java.io.FileInputStream.readBytes", "java.io.FileInputStream.read",
      "org.apache.spark.network.util.LimitedInputStream.read"},
     Category::kIoWait},
    {{"java.io.FileOutputStream.writeBytes", "java.io.FileOutputStream.write"}, Category::kIoWait},
    {{"java.io.RandomAccessFile.readBytes", "java.io.RandomAccessFile.read"}, Category::kIoWait},
    {{"java.io.FileDescriptor.sync", "com.example.Journal.flush"}, Category::kIoWait},
    {{"sun.nio.ch.FileDispatcherImpl.pread0", "sun.nio.ch.IOUtil.read",
      "sun.nio.ch.FileChannelImpl.readInternal"},
     Category::kIoWait},
    {{"sun.nio.ch.UnixFileDispatcherImpl.pread0", "sun.nio.ch.IOUtil.read"}, Category::kIoWait},
    {{"sun.nio.ch.Net.pollConnect", "sun.nio.ch.NioSocketImpl.timedFinishConnect"},
     Category::kIoWait},
    // Locks: a contended ReentrantLock (the JVM test's park case), a latch, Object.wait.
    {{"jdk.internal.misc.Unsafe.park", "java.util.concurrent.locks.LockSupport.park",
      "java.util.concurrent.locks.AbstractQueuedSynchronizer.acquire",
      "java.util.concurrent.locks.ReentrantLock$Sync.lock",
      "java.util.concurrent.locks.ReentrantLock.lock", "AgentWorkloads.lambda$waits$2"},
     Category::kLockWait},
    {{"jdk.internal.misc.Unsafe.park", "java.util.concurrent.locks.LockSupport.parkNanos",
      "java.util.concurrent.CountDownLatch.await", "com.example.Batcher.flush"},
     Category::kLockWait},
    {{"java.lang.Object.wait0", "java.lang.Object.wait", "com.example.Pool.borrow"},
     Category::kLockWait},
    // A park nothing names (a bare LockSupport.park in application code).
    {{"jdk.internal.misc.Unsafe.park", "java.util.concurrent.locks.LockSupport.park",
      "com.example.Worker.idle"},
     Category::kOffCpuOther},
    // Sleeps: JDK 17 (Thread.sleep native) and 21+ (sleepNanos0), also under S3A's retry.
    {{"java.lang.Thread.sleep", "AgentWorkloads.lambda$waits$2"}, Category::kSleep},
    {{"java.lang.Thread.sleepNanos0", "java.lang.Thread.sleepNanos", "java.lang.Thread.sleep",
      "org.apache.hadoop.fs.s3a.Invoker.retryUntranslated"},
     Category::kSleep},
    // Off CPU with no wait frame: preempted code (cpu_starved takes the run delay part).
    {{"java.lang.Math.sqrt", "com.example.Model.score"}, Category::kOffCpuOther},
};

TEST(FrameClassifierTest, OffCpuTimeGoesToWhatTheThreadWaitedIn) {
  for (const WaitCase& c : kRealWaits) {
    EXPECT_EQ(ClassifyOffCpuStack(c.frames, /*blocked_in_jvm=*/false), c.expected)
        << c.frames.front() << " under " << c.frames.back() << " -> "
        << CategoryName(ClassifyOffCpuStack(c.frames, false));
  }
}

TEST(FrameClassifierTest, WaitRulesAreAllCovered) {
  std::set<int> primitives, enclosers;
  for (const WaitCase& c : kRealWaits) {
    for (std::string_view frame : c.frames) {
      WaitFrameMatch match = MatchWaitFrame(frame);
      if (match.primitive_rule >= 0) primitives.insert(match.primitive_rule);
      if (match.wait_rule >= 0) enclosers.insert(match.wait_rule);
    }
  }
  for (size_t i = 0; i < WaitPrimitiveRules().size(); ++i) {
    EXPECT_TRUE(primitives.count(static_cast<int>(i)))
        << "wait primitive " << WaitPrimitiveRules()[i].class_pattern << " has no test frame";
  }
  for (size_t i = 0; i < WaitRules().size(); ++i) {
    EXPECT_TRUE(enclosers.count(static_cast<int>(i)))
        << "wait rule " << WaitRules()[i].class_pattern << " has no test frame";
  }
}

TEST(FrameClassifierTest, ABlockedThreadWithoutAWaitFrameWaitsForAMonitor) {
  // synchronized (monitor) { ... } blocked: HotSpot says _thread_blocked, the innermost frame is
  // the method holding the synchronized block.
  std::vector<std::string_view> entering = {"AgentWorkloads.lambda$waits$2",
                                            "java.lang.Thread.run"};
  EXPECT_EQ(ClassifyOffCpuStack(entering, /*blocked_in_jvm=*/true), Category::kLockWait);
  EXPECT_EQ(ClassifyOffCpuStack(entering, /*blocked_in_jvm=*/false), Category::kOffCpuOther);
  // Parked and sleeping threads are blocked too: their frames decide.
  std::vector<std::string_view> sleeping = {"java.lang.Thread.sleep", "com.example.Poller.run"};
  EXPECT_EQ(ClassifyOffCpuStack(sleeping, /*blocked_in_jvm=*/true), Category::kSleep);
}

TEST(FrameClassifierTest, AWaitPrimitiveDeepInTheStackIsNotTheWait) {
  // A primitive below the innermost kWaitLeafFrames frames is code the thread called earlier.
  std::vector<std::string_view> frames(kWaitLeafFrames, "com.example.Model.score");
  frames.push_back("java.lang.Thread.sleep");
  EXPECT_EQ(ClassifyOffCpuStack(frames, false), Category::kOffCpuOther);
  EXPECT_EQ(ClassifyOffCpuStack({}, false), Category::kOffCpuOther);
}

TEST(FrameClassifierTest, EveryWaitCategoryIsOffCpu) {
  for (const WaitPrimitiveRule& rule : WaitPrimitiveRules()) EXPECT_TRUE(IsOffCpu(rule.category));
  for (const WaitRule& rule : WaitRules()) EXPECT_TRUE(IsOffCpu(rule.category));
}

TEST(FrameClassifierTest, CategoryNamesMatchTheSchema) {
  EXPECT_EQ(CategoryName(Category::kCompute), "compute");
  EXPECT_EQ(CategoryName(Category::kS3aWrite), "s3a_write");
  EXPECT_EQ(CategoryName(Category::kFileIo), "file_io");
  EXPECT_EQ(CategoryName(Category::kOther), "other");
}

}  // namespace
}  // namespace sparkprof::classifier
