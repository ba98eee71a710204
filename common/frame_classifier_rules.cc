// THE classifier rule table: every frame rule, thread-name rule and wait rule lives here, nowhere
// else.
// Sources: reference/spark-facts.md section 7 (Spark 3.5/4.0, Parquet 1.13/1.15, ORC 1.9/2.1,
// Hadoop S3A 3.3 and trunk, AWS SDK v1/v2). Each rule is exercised by frame_classifier_test.cc
// with a real class and method name.
//
// Choosing rules: prefer the frames that do the work (they are inner) over the entry points that
// also pull upstream iterators (e.g. SortShuffleWriter.write pulls the whole map-side pipeline,
// so it is not a rule; ExternalSorter.writePartitionedMapOutput is). Frames shared by several
// kinds of work are weak.
#include "common/frame_classifier.h"

#include <array>
#include <cstddef>

namespace sparkprof::classifier {
namespace {

using enum Category;
using enum Strength;

// "package." -> "package.*", the class_pattern of every class under a package.
template <const std::string_view& kPackage>
struct PackageGlob {
  static constexpr auto kChars = [] {
    std::array<char, kPackage.size() + 1> chars{};
    for (size_t i = 0; i < kPackage.size(); ++i) chars[i] = kPackage[i];
    chars[kPackage.size()] = '*';
    return chars;
  }();
  static constexpr std::string_view kValue{kChars.data(), kChars.size()};
};

constexpr FrameRule kFrameRules[] = {
    // --- compute: Janino whole-stage codegen, so a scan or write outside it does not swallow it.
    {"org.apache.spark.sql.catalyst.expressions.GeneratedClass*", "", kCompute, kStrong},

    // --- serialization: JDK object streams, Spark serializers, Kryo.
    {"java.io.ObjectOutputStream*", "", kSerialization, kStrong},
    {"java.io.ObjectInputStream*", "", kSerialization, kStrong},
    {"org.apache.spark.serializer.JavaSerializationStream", "", kSerialization, kStrong},
    {"org.apache.spark.serializer.JavaDeserializationStream", "", kSerialization, kStrong},
    {"org.apache.spark.serializer.JavaSerializerInstance",
     "serialize|deserialize|serializeStream|deserializeStream", kSerialization, kStrong},
    {"org.apache.spark.serializer.KryoSerializationStream", "", kSerialization, kStrong},
    {"org.apache.spark.serializer.KryoDeserializationStream", "", kSerialization, kStrong},
    {"org.apache.spark.serializer.KryoSerializerInstance", "serialize|deserialize", kSerialization,
     kStrong},
    {"com.esotericsoftware.kryo.*", "", kSerialization, kStrong},
    {"org.apache.spark.sql.execution.UnsafeRowSerializerInstance*", "", kSerialization, kStrong},
    {"org.apache.spark.sql.catalyst.expressions.UnsafeRow", "writeToStream", kSerialization,
     kStrong},
    {"org.apache.spark.serializer.SerializationStream", "writeAll", kSerialization, kStrong},
    {"org.apache.spark.serializer.DeserializationStream*", "", kSerialization, kWeak},
    {"org.apache.spark.serializer.SerializerManager",
     "dataSerializeStream|dataDeserializeStream|wrapStream|wrapForCompression", kSerialization,
     kStrong},

    // --- spill / memory pressure.
    {"org.apache.spark.util.collection.unsafe.sort.UnsafeExternalSorter", "spill|merge", kSpill,
     kStrong},
    {"org.apache.spark.util.collection.unsafe.sort.UnsafeSorterSpillWriter", "", kSpill, kStrong},
    {"org.apache.spark.util.collection.ExternalSorter",
     "maybeSpillCollection|spill|spillMemoryIteratorToDisk|merge", kSpill, kStrong},
    {"org.apache.spark.util.collection.Spillable", "maybeSpill|spill|forceSpill", kSpill, kStrong},
    {"org.apache.spark.util.collection.ExternalAppendOnlyMap", "spill|spillMemoryIteratorToDisk",
     kSpill, kStrong},
    {"org.apache.spark.memory.TaskMemoryManager", "trySpillAndAcquire", kSpill, kStrong},
    {"org.apache.spark.shuffle.sort.ShuffleExternalSorter", "spill|writeSortedFile", kSpill,
     kStrong},

    // --- shuffle write.
    {"org.apache.spark.shuffle.sort.UnsafeShuffleWriter",
     "insertRecordIntoSorter|closeAndWriteOutput|mergeSpills|mergeSpillsWithFileStream|"
     "mergeSpillsWithTransferTo|forceSorterToSpill",
     kShuffleWrite, kStrong},
    {"org.apache.spark.shuffle.sort.BypassMergeSortShuffleWriter",
     "writePartitionedData|writePartitionedDataWithChannel|writePartitionedDataWithStream",
     kShuffleWrite, kStrong},
    {"org.apache.spark.shuffle.sort.ShuffleExternalSorter", "insertRecord", kShuffleWrite, kStrong},
    {"org.apache.spark.util.collection.ExternalSorter", "writePartitionedMapOutput", kShuffleWrite,
     kStrong},
    // Also used by spill writers: weak, so an enclosing spill frame wins.
    {"org.apache.spark.storage.DiskBlockObjectWriter", "", kShuffleWrite, kWeak},

    // --- shuffle read.
    {"org.apache.spark.storage.ShuffleBlockFetcherIterator", "", kShuffleRead, kStrong},
    {"org.apache.spark.shuffle.BlockStoreShuffleReader", "read", kShuffleRead, kWeak},

    // --- S3A write (Hadoop S3A, committers, AWS SDK v1 and v2).
    {"org.apache.hadoop.fs.s3a.S3ABlockOutputStream*", "", kS3aWrite, kStrong},
    {"org.apache.hadoop.fs.s3a.S3ADataBlocks*", "", kS3aWrite, kStrong},
    {"org.apache.hadoop.fs.s3a.WriteOperationHelper", "", kS3aWrite, kStrong},
    {"org.apache.hadoop.fs.s3a.commit.*", "", kS3aWrite, kStrong},
    {"org.apache.hadoop.fs.s3a.S3AFileSystem",
     "putObjectDirect|uploadPart|executePut|finishedWrite|deleteUnnecessaryFakeDirectories|"
     "createFakeDirectory|innerCreateFile|create|innerRename|copyFile|deleteObjects|removeKeys",
     kS3aWrite, kStrong},
    {"com.amazonaws.services.s3.AmazonS3Client",
     "putObject|uploadPart|initiateMultipartUpload|completeMultipartUpload|copyObject|deleteObject|"
     "deleteObjects",
     kS3aWrite, kStrong},
    {"com.amazonaws.services.s3.transfer.*", "", kS3aWrite, kStrong},
    {"software.amazon.awssdk.services.s3.DefaultS3Client",
     "putObject|uploadPart|createMultipartUpload|completeMultipartUpload|copyObject|deleteObject|"
     "deleteObjects",
     kS3aWrite, kStrong},
    {"org.apache.hadoop.mapreduce.lib.output.committer.manifest.*", "", kS3aWrite, kWeak},

    // --- S3A read.
    {"org.apache.hadoop.fs.s3a.S3AInputStream", "", kS3aRead, kStrong},
    {"org.apache.hadoop.fs.s3a.S3AFileSystem",
     "getObject|getObjectMetadata|s3GetFileStatus|innerGetFileStatus|listObjects|"
     "continueListObjects|innerListStatus|innerListFiles|executeOpen|open",
     kS3aRead, kStrong},
    {"com.amazonaws.services.s3.AmazonS3Client",
     "getObject|getObjectMetadata|listObjects|listObjectsV2", kS3aRead, kStrong},
    {"software.amazon.awssdk.services.s3.DefaultS3Client", "getObject|headObject|listObjectsV2",
     kS3aRead, kStrong},

    // --- file_io: Parquet, ORC, Spark's file sources and commit protocols.
    {"org.apache.parquet.*", "", kFileIo, kStrong},
    {"org.apache.spark.sql.execution.datasources.parquet.*", "", kFileIo, kStrong},
    {"org.apache.orc.*", "", kFileIo, kStrong},
    {"org.apache.spark.sql.execution.datasources.orc.*", "", kFileIo, kStrong},
    {"org.apache.spark.sql.execution.datasources.FileScanRDD$$anon$1",
     "hasNext|next|nextIterator|readCurrentFile", kFileIo, kStrong},
    {"org.apache.spark.sql.execution.datasources.SingleDirectoryDataWriter", "write", kFileIo,
     kStrong},
    {"org.apache.spark.sql.execution.datasources.DynamicPartitionDataSingleWriter", "write",
     kFileIo, kStrong},
    {"org.apache.spark.sql.execution.datasources.DynamicPartitionDataConcurrentWriter", "write",
     kFileIo, kStrong},
    {"org.apache.spark.sql.execution.datasources.BaseDynamicPartitionDataWriter", "writeRecord",
     kFileIo, kStrong},
    {"org.apache.spark.internal.io.HadoopMapReduceCommitProtocol",
     "setupTask|commitTask|commitJob|newTaskTempFile", kFileIo, kStrong},
    {"org.apache.spark.mapred.SparkHadoopMapRedUtil$", "commitTask", kFileIo, kStrong},
    {"org.apache.spark.internal.io.cloud.*", "", kFileIo, kStrong},

    // --- file_io fallback: the JDK's file primitives, when nothing above names the work (an
    // application writing or reading files itself). Under a shuffle, spill or Parquet frame
    // those win.
    {"java.io.FileOutputStream", "write|writeBytes", kFileIo, kFallback},
    {"java.io.FileInputStream", "read|readBytes", kFileIo, kFallback},
    {"java.io.RandomAccessFile", "read|readBytes|write|writeBytes", kFileIo, kFallback},
    {"java.io.FileDescriptor", "sync", kFileIo, kFallback},
    {"sun.nio.ch.FileChannelImpl", "read|write|transferTo|transferFrom|force", kFileIo, kFallback},
};

constexpr ThreadNameRule kThreadNameRules[] = {
    // Async multipart uploads run on these pools, not on the task thread.
    {"s3a-transfer-", kS3aWrite},
    // Netty client threads of the block transfer service fetch remote shuffle blocks.
    {"shuffle-client", kShuffleRead},
};

// --- Wait primitives: the innermost frames of a thread that waits (JDK 17, 21 and 25; JDK 8/11's
// socket read for Spark 3.5 on them), with the category of a wait nothing encloses by name.
// Natives are innermost where they exist (Object.wait0, Thread.sleepNanos0 on JDK 21+).
constexpr uint8_t kNetworkBit = PrimitiveBit(WaitPrimitive::kNetwork);
constexpr uint8_t kFileBit = PrimitiveBit(WaitPrimitive::kFile);
constexpr uint8_t kParkBit = PrimitiveBit(WaitPrimitive::kPark);
constexpr uint8_t kMonitorWaitBit = PrimitiveBit(WaitPrimitive::kMonitorWait);

constexpr WaitPrimitiveRule kWaitPrimitiveRules[] = {
    // Sockets: NioSocketImpl (JDK 13+) parks in Net.poll for a blocking read with a timeout, or
    // reads in SocketDispatcher.read0; selectors (Spark 4's Python reader, Hadoop's
    // SocketIOWithTimeout) wait in EPoll.wait.
    {"sun.nio.ch.Net", "poll|pollConnect|connect0|accept", WaitPrimitive::kNetwork, kIoWait},
    {"sun.nio.ch.NioSocketImpl", "park|timedRead|timedAccept|timedFinishConnect",
     WaitPrimitive::kNetwork, kIoWait},
    {"sun.nio.ch.SocketDispatcher", "read0|readv0", WaitPrimitive::kNetwork, kIoWait},
    {"sun.nio.ch.EPoll", "wait", WaitPrimitive::kNetwork, kIoWait},
    {"sun.nio.ch.EPollSelectorImpl", "doSelect", WaitPrimitive::kNetwork, kIoWait},
    {"java.net.SocketInputStream", "socketRead0", WaitPrimitive::kNetwork, kIoWait},
    // Files (local disk, NFS, FUSE mounts of object stores).
    {"java.io.FileInputStream", "readBytes|read0", WaitPrimitive::kFile, kIoWait},
    {"java.io.FileOutputStream", "writeBytes|write", WaitPrimitive::kFile, kIoWait},
    {"java.io.RandomAccessFile", "readBytes|readBytes0|read0|writeBytes|writeBytes0|write0",
     WaitPrimitive::kFile, kIoWait},
    {"java.io.FileDescriptor", "sync|sync0", WaitPrimitive::kFile, kIoWait},
    {"sun.nio.ch.FileDispatcherImpl", "read0|pread0|readv0|write0|pwrite0|writev0|force0",
     WaitPrimitive::kFile, kIoWait},
    {"sun.nio.ch.UnixFileDispatcherImpl", "read0|pread0|readv0|write0|pwrite0|writev0|force0",
     WaitPrimitive::kFile, kIoWait},
    // Parks: java.util.concurrent's locks, queues, latches and futures all wait here.
    {"jdk.internal.misc.Unsafe", "park", WaitPrimitive::kPark, kOffCpuOther},
    {"java.util.concurrent.locks.LockSupport", "park|parkNanos|parkUntil", WaitPrimitive::kPark,
     kOffCpuOther},
    // Monitors: Object.wait (a thread blocked *entering* a monitor has no frame of its own; see
    // CombineWaitMatches).
    {"java.lang.Object", "wait|wait0", WaitPrimitive::kMonitorWait, kLockWait},
    {"java.lang.Thread", "sleep|sleep0|sleepNanos|sleepNanos0", WaitPrimitive::kSleep, kSleep},
};

// --- Enclosing frames that name what the wait under them waited for. Spark 3.5 and 4.x, Hadoop
// 3.3 (S3A, HDFS), AWS SDK v1 and v2.
constexpr WaitRule kWaitRules[] = {
    // A task thread reading its Python worker's output: BasePythonRunner$ReaderIterator.hasNext
    // -> PythonRunner$$anon$3.read -> DataInputStream over the worker's socket (3.5: a Socket;
    // 4.x: BasePythonRunner$ReaderInputStream's Selector), and the Arrow runners' readers.
    {PackageGlob<kPySparkRunnerPackage>::kValue, "", kNetworkBit, kPythonWait, kStrong},
    {PackageGlob<kPySparkSqlPackage>::kValue, "", kNetworkBit, kPythonWait, kStrong},
    // Remote and local shuffle blocks not yet fetched: next() takes from its results queue.
    {"org.apache.spark.storage.ShuffleBlockFetcherIterator", "next", kParkBit, kShuffleFetchWait,
     kStrong},
    // Storage and network I/O named by its client: Hadoop's file systems (S3A, HDFS, ABFS, GCS
    // connectors), the AWS SDKs, Spark's JDBC source and writer.
    {"org.apache.hadoop.*", "", kNetworkBit | kFileBit | kParkBit | kMonitorWaitBit, kIoWait,
     kStrong},
    {"com.amazonaws.*", "", kNetworkBit | kParkBit, kIoWait, kStrong},
    {"software.amazon.awssdk.*", "", kNetworkBit | kParkBit, kIoWait, kStrong},
    {"org.apache.spark.sql.execution.datasources.jdbc.*", "", kNetworkBit, kIoWait, kStrong},
    // Locks, queues, latches and futures nothing above names.
    {"java.util.concurrent.*", "", kParkBit, kLockWait, kWeak},
};

}  // namespace

std::span<const FrameRule> FrameRules() { return kFrameRules; }
std::span<const ThreadNameRule> ThreadNameRules() { return kThreadNameRules; }
std::span<const WaitPrimitiveRule> WaitPrimitiveRules() { return kWaitPrimitiveRules; }
std::span<const WaitRule> WaitRules() { return kWaitRules; }

}  // namespace sparkprof::classifier
