// Every rule in frame_classifier_rules.cc is exercised here with real class and method names
// (reference/spark-facts.md section 7); a rule without a test frame fails RulesAreAllCovered.
#include "native-agent/frame_classifier.h"

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

TEST(FrameClassifierTest, CategoryNamesMatchTheSchema) {
  EXPECT_EQ(CategoryName(Category::kCompute), "compute");
  EXPECT_EQ(CategoryName(Category::kS3aWrite), "s3a_write");
  EXPECT_EQ(CategoryName(Category::kFileIo), "file_io");
  EXPECT_EQ(CategoryName(Category::kOther), "other");
}

}  // namespace
}  // namespace sparkprof::classifier
