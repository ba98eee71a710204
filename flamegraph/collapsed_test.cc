#include <gtest/gtest.h>

#include <string>

#include "flamegraph/collapsed_reader.h"
#include "flamegraph/collapsed_writer.h"
#include "flamegraph/spark_classifier.h"

namespace sparkprof::flamegraph {
namespace {

std::string RoundTrip(std::string_view text, const CollapsedReadOptions& options = {}) {
  ProfileModel model;
  ReadReport report;
  EXPECT_TRUE(ReadCollapsed(text, options, model, report).ok());
  EXPECT_EQ(report.problem_count, 0u);
  std::string out;
  WriteCollapsed(model, {}, out);
  return out;
}

TEST(CollapsedTest, SortedMergedInputRoundTripsExactly) {
  std::string text =
      "[category=serialization];java/lang/Thread.run;com/esotericsoftware/kryo/Kryo.writeObject "
      "12\n"
      "java/lang/Thread.run;org/apache/spark/executor/Executor$TaskRunner.run 30\n"
      "java/lang/Thread.run;org/apache/spark/executor/Executor$TaskRunner.run;a b c 5\n"
      "main 1\n";
  EXPECT_EQ(RoundTrip(text), text);
}

TEST(CollapsedTest, UnsortedInputWithDuplicatesComesBackSortedAndMerged) {
  std::string text = "b;c 1\na 2\nb;c 3\r\n\n# comment\nb 4\n";
  EXPECT_EQ(RoundTrip(text), "a 2\nb 4\nb;c 4\n");
}

TEST(CollapsedTest, CategoryAnnotationAndClassifier) {
  CollapsedReadOptions options;
  options.classifier = [](std::span<const std::string_view> frames) {
    for (std::string_view frame : frames) {
      if (frame.find("S3AOutputStream") != std::string_view::npos) return Category::kS3aWrite;
    }
    return Category::kCompute;
  };
  ProfileModel model;
  ReadReport report;
  ASSERT_TRUE(ReadCollapsed("[category=gc] 7\n"
                            "run;org/apache/hadoop/fs/s3a/S3AOutputStream.write 5\n"
                            "run;compute 3\n"
                            "[category=spill];run;x 2\n",
                            options, model, report)
                  .ok());
  EXPECT_EQ(model.category_totals()[CategoryIndex(Category::kGc)], 7u);
  EXPECT_EQ(model.category_totals()[CategoryIndex(Category::kS3aWrite)], 5u);
  EXPECT_EQ(model.category_totals()[CategoryIndex(Category::kCompute)], 3u);
  EXPECT_EQ(model.category_totals()[CategoryIndex(Category::kSpill)], 2u);
  EXPECT_EQ(model.node(kRootNode).self, 7u);  // [category=gc] without frames
  // Without a classifier unannotated lines are "other".
  ProfileModel plain;
  ASSERT_TRUE(ReadCollapsed("a;b 4\n", {}, plain, report).ok());
  EXPECT_EQ(plain.category_totals()[CategoryIndex(Category::kOther)], 4u);
}

TEST(CollapsedTest, AgentClassifierCategorisesUnannotatedLines) {
  CollapsedReadOptions options;
  options.classifier = SparkFrameClassifier();
  if (!options.classifier) GTEST_SKIP() << "built without the agent's frame classifier";
  ProfileModel model;
  ReadReport report;
  ASSERT_TRUE(ReadCollapsed("java/lang/Thread.run;com/esotericsoftware/kryo/Kryo.writeObject 4\n"
                            "[category=gc];java/lang/Thread.run;x 2\n",
                            options, model, report)
                  .ok());
  EXPECT_EQ(model.category_totals()[CategoryIndex(Category::kSerialization)], 4u);
  EXPECT_EQ(model.category_totals()[CategoryIndex(Category::kGc)], 2u);  // annotation wins
}

TEST(CollapsedTest, BadLinesAreCountedWithTheirLineNumberAndSkipped) {
  CollapsedReadOptions options;
  options.source_name = "stacks.txt";
  options.max_frames_per_stack = 3;
  ProfileModel model;
  ReadReport report;
  ASSERT_TRUE(ReadCollapsed("good;stack 5\n"
                            "no-count-here\n"
                            "a;b -3\n"
                            "a;b 99999999999999999999999\n"
                            "[category=nonsense];a 2\n"
                            "a;b;c;d 1\n",
                            options, model, report)
                  .ok());
  EXPECT_EQ(report.problem_count, 5u);
  // Lines are read in sorted order, so messages need not come in line order.
  auto has = [&](std::string_view needle) {
    for (const std::string& message : report.messages) {
      if (message.find(needle) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(has("stacks.txt:2: expected"));
  EXPECT_TRUE(has("stacks.txt:3: count \"-3\""));
  EXPECT_TRUE(has("stacks.txt:4: count"));
  EXPECT_TRUE(has("stacks.txt:5: unknown category"));
  EXPECT_TRUE(has("stacks.txt:6: stack of 4 frames"));
  // The unknown-category line is still read (classified as other).
  EXPECT_EQ(model.total_weight(), 7u);
}

TEST(CollapsedTest, NothingReadableIsAnError) {
  ProfileModel model;
  ReadReport report;
  Status status = ReadCollapsed("\x89PNG\r\n\x1a\n garbage", {}, model, report);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kCorrupt);
  // Empty input is fine: an empty profile.
  EXPECT_TRUE(ReadCollapsed("", {}, model, report).ok());
}

TEST(CollapsedTest, WriterCleansFramesTheFormatCannotCarry) {
  ProfileModel model;
  std::vector<std::string_view> frames = {"a;b", "line\nbreak"};
  model.AddStack(frames, Category::kOther, 1);
  std::string out;
  WriteCollapsed(model, {}, out);
  EXPECT_EQ(out, "a:b;line_break 1\n");
  out.clear();
  CollapsedWriteOptions always;
  always.annotation = CategoryAnnotation::kAlways;
  WriteCollapsed(model, always, out);
  EXPECT_EQ(out, "[category=other];a:b;line_break 1\n");
}

}  // namespace
}  // namespace sparkprof::flamegraph
