#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "flamegraph/collapsed_reader.h"
#include "flamegraph/collapsed_writer.h"
#include "flamegraph/profile_loader.h"
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

// Input arriving in pieces (a file read in chunks) reads exactly as in one piece, wherever the
// pieces split a line, a '\r\n' or a frame; including a last line without a line break and a
// line past the length limit that spans pieces.
TEST(CollapsedTest, PiecesOfAnySizeReadLikeTheWhole) {
  std::string text = "b;c 1\r\na 2\n\n# comment\nb;c;dd 3\n[category=gc] 7\nbad line\n" +
                     std::string(40, 'x') + " 1\nb;c 4";
  CollapsedReadOptions options;
  options.max_line_bytes = 30;
  ProfileModel whole;
  ReadReport whole_report;
  ASSERT_TRUE(ReadCollapsed(text, options, whole, whole_report).ok());
  std::string expected;
  WriteCollapsed(whole, {}, expected);
  EXPECT_EQ(expected, "[category=gc] 7\na 2\nb;c 5\nb;c;dd 3\n");
  for (size_t piece = 1; piece <= 7; ++piece) {
    ProfileModel model;
    ReadReport report;
    CollapsedReader reader(options, model, report);
    for (size_t start = 0; start < text.size(); start += piece) {
      reader.Feed(std::string_view(text).substr(start, piece));
    }
    ASSERT_TRUE(reader.Finish().ok());
    std::string out;
    WriteCollapsed(model, {}, out);
    EXPECT_EQ(out, expected) << "pieces of " << piece;
    EXPECT_EQ(report.messages, whole_report.messages) << "pieces of " << piece;
  }
  ASSERT_EQ(whole_report.messages.size(), 2u);
  EXPECT_NE(whole_report.messages[1].find(":8: line of 42 bytes"), std::string::npos)
      << whole_report.messages[1];
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
  // Lines are read as they come: messages are in line order.
  EXPECT_NE(report.messages.front().find("stacks.txt:2: expected"), std::string::npos);
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

// Limits (docs/limits.md), each at the limit and one past it.
TEST(CollapsedTest, LineFrameAndTreeNodeLimitsAtAndPastTheLimit) {
  CollapsedReadOptions options;
  options.max_frames_per_stack = 3;
  options.max_tree_nodes = 4;  // the root and three frames
  options.max_line_bytes = 9;
  ProfileModel model;
  ReadReport report;
  ASSERT_TRUE(ReadCollapsed("a;b;c 1\n"      // 3 frames, 4 nodes: at both limits
                            "a;b;c;d 1\n"    // 9 bytes (at the limit), 4 frames: one past
                            "a;b;cd 1\n"     // a 5th node: one past
                            "a;b;c 2\n"      // known stack: still counted at the node limit
                            "ab;c;def 1\n",  // 10 bytes: one past
                            options, model, report)
                  .ok());
  EXPECT_EQ(model.total_weight(), 3u);
  EXPECT_EQ(model.node_count(), 4u);
  EXPECT_EQ(report.problem_count, 3u);
  auto has = [&](std::string_view needle) {
    for (const std::string& message : report.messages) {
      if (message.find(needle) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(has("deeper than the limit of 3"));
  EXPECT_TRUE(has("limit of 4 nodes"));
  EXPECT_TRUE(has("longer than the limit of 9"));
}

TEST(CollapsedTest, ProblemMessagesKeptAtAndPastTheLimit) {
  std::string text = "ok 1\n";
  for (size_t i = 0; i < ReadReport::kMaxKeptMessages + 1; ++i) text += "bad\n";
  ProfileModel model;
  ReadReport report;
  ASSERT_TRUE(ReadCollapsed(text, {}, model, report).ok());
  EXPECT_EQ(report.problem_count, ReadReport::kMaxKeptMessages + 1);  // all counted
  EXPECT_EQ(report.messages.size(), ReadReport::kMaxKeptMessages);    // the first kept
}

TEST(ProfileLoaderTest, FileSizeLimitAtAndPastIt) {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("sparkprof_loader_" + std::to_string(::getpid()));
  const std::string text = "main;work 10\n";
  std::ofstream(path, std::ios::binary) << text;
  LoadOptions options;
  options.max_file_bytes = text.size();
  Result<LoadedProfile> at = LoadProfileFromFile(path.string(), options);
  EXPECT_TRUE(at.ok()) << at.status().ToString();
  options.max_file_bytes = text.size() - 1;
  Result<LoadedProfile> past = LoadProfileFromFile(path.string(), options);
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.status().code(), StatusCode::kTooLarge);
  std::filesystem::remove(path);
}

// The CLI's path: a file bigger than one read (1 MiB), lines across read boundaries, the
// Spark rules matched once per frame give what the whole-stack classifier gives.
TEST(ProfileLoaderTest, BigFileStreamsAndPerFrameRulesMatchTheWholeStackClassifier) {
  if (!SparkFrameClassifier()) GTEST_SKIP() << "built without the agent's frame classifier";
  std::string text;
  const char* leaves[] = {"com/esotericsoftware/kryo/Kryo.writeObject",
                          "org/apache/hadoop/fs/s3a/S3AInputStream.read",
                          "org/apache/spark/shuffle/sort/UnsortedShuffleWriter.write",
                          "java/io/FileOutputStream.writeBytes", "scala/collection/Iterator.next"};
  for (int i = 0; i < 30000; ++i) {
    text += "java/lang/Thread.run;org/apache/spark/executor/Executor$TaskRunner.run;f" +
            std::to_string(i % 977) + ";" + leaves[i % 5] + " " + std::to_string(1 + i % 3) + "\n";
  }
  ASSERT_GT(text.size(), size_t{2} << 20);
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("sparkprof_stream_" + std::to_string(::getpid()));
  std::ofstream(path, std::ios::binary) << text;
  LoadOptions options;
  options.per_frame_classifier = SparkPerFrameClassifier();
  Result<LoadedProfile> streamed = LoadProfileFromFile(path.string(), options);
  std::filesystem::remove(path);
  ASSERT_TRUE(streamed.ok()) << streamed.status().ToString();
  EXPECT_EQ(streamed->report.problem_count, 0u);
  CollapsedReadOptions whole_options;
  whole_options.classifier = SparkFrameClassifier();
  ProfileModel whole;
  ReadReport report;
  ASSERT_TRUE(ReadCollapsed(text, whole_options, whole, report).ok());
  EXPECT_EQ(streamed->model.category_totals(), whole.category_totals());
  EXPECT_GT(whole.category_totals()[CategoryIndex(Category::kSerialization)], 0u);
  std::string streamed_text;
  std::string whole_text;
  WriteCollapsed(streamed->model, {}, streamed_text);
  WriteCollapsed(whole, {}, whole_text);
  EXPECT_EQ(streamed_text, whole_text);
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

// A first frame that would make the line a comment ('#' after blanks), as a stack read from an
// unknown category's line can have, is written behind its category: read back, nothing is lost
// (found by fuzz_collapsed_reader).
TEST(CollapsedTest, FirstFrameThatLooksLikeACommentKeepsItsWeight) {
  ProfileModel model;
  model.AddStack(std::vector<std::string_view>{"#x", "y"}, Category::kOther, 2);
  model.AddStack(std::vector<std::string_view>{"  #z"}, Category::kOther, 3);
  model.AddStack(std::vector<std::string_view>{"a#b"}, Category::kOther, 4);
  std::string out;
  WriteCollapsed(model, {}, out);
  EXPECT_EQ(out, "[category=other];  #z 3\n[category=other];#x;y 2\na#b 4\n");
  ProfileModel again;
  ReadReport report;
  ASSERT_TRUE(ReadCollapsed(out, {}, again, report).ok());
  EXPECT_EQ(again.total_weight(), 9u);
  std::string twice;
  WriteCollapsed(again, {}, twice);
  EXPECT_EQ(twice, out);
}

}  // namespace
}  // namespace sparkprof::flamegraph
