#include "flamegraph/profile_model.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "flamegraph/model_test_util.h"

namespace sparkprof::flamegraph {
namespace {

using Frames = std::vector<std::string_view>;

TEST(ProfileModelTest, TotalsAndSelfFollowTheStacks) {
  ProfileModel model;
  model.AddStack(Frames{"main", "a", "b"}, Category::kCompute, 3);
  model.AddStack(Frames{"main", "a"}, Category::kCompute, 2);
  model.AddStack(Frames{"main", "c"}, Category::kSerialization, 5);
  EXPECT_EQ(model.total_weight(), 10u);
  EXPECT_EQ(model.node(FindPath(model, {"main"})).total, 10u);
  EXPECT_EQ(model.node(FindPath(model, {"main"})).self, 0u);
  EXPECT_EQ(model.node(FindPath(model, {"main", "a"})).total, 5u);
  EXPECT_EQ(model.node(FindPath(model, {"main", "a"})).self, 2u);
  EXPECT_EQ(model.node(FindPath(model, {"main", "a", "b"})).depth, 3u);
  EXPECT_EQ(model.category_totals()[CategoryIndex(Category::kCompute)], 5u);
  EXPECT_EQ(model.category_totals()[CategoryIndex(Category::kSerialization)], 5u);
  EXPECT_EQ(model.node_count(), 5u);  // root, main, a, b, c
}

TEST(ProfileModelTest, SameStackTwiceMergesIntoOneNodeAndSplitsSelfByCategory) {
  ProfileModel model;
  model.AddStack(Frames{"x", "y"}, Category::kCompute, 1);
  model.AddStack(Frames{"x", "z"}, Category::kCompute, 1);  // breaks the shared-prefix cache
  model.AddStack(Frames{"x", "y"}, Category::kGc, 4);
  model.AddStack(Frames{"x", "y"}, Category::kCompute, 2);
  NodeId y = FindPath(model, {"x", "y"});
  EXPECT_EQ(model.node(y).total, 7u);
  EXPECT_EQ(model.node_count(), 4u);
  CategoryWeights self{};
  model.ForEachSelfWeight(y, [&](Category c, uint64_t w) { self[CategoryIndex(c)] += w; });
  EXPECT_EQ(self[CategoryIndex(Category::kCompute)], 3u);
  EXPECT_EQ(self[CategoryIndex(Category::kGc)], 4u);
  std::vector<Category> dominant = model.DominantCategories();
  EXPECT_EQ(dominant[y], Category::kGc);
  EXPECT_EQ(dominant[FindPath(model, {"x", "z"})], Category::kCompute);
}

TEST(ProfileModelTest, FindOrInsertPathRespectsTheNodeCapButAlwaysFindsKnownStacks) {
  ProfileModel model;
  std::vector<FrameId> abc = {model.InternFrame("a"), model.InternFrame("b"),
                              model.InternFrame("c")};
  std::vector<FrameId> abd = {abc[0], abc[1], model.InternFrame("d")};
  std::vector<FrameId> xyz = {model.InternFrame("x"), model.InternFrame("y"),
                              model.InternFrame("z")};
  NodeId leaf = model.FindOrInsertPath(abc, /*max_nodes=*/4);  // root + 3
  ASSERT_NE(leaf, kNoNode);
  EXPECT_EQ(model.node_count(), 4u);
  // Full: a new stack is refused and creates nothing, even its shared prefix is not extended.
  EXPECT_EQ(model.FindOrInsertPath(abd, 4), kNoNode);
  EXPECT_EQ(model.FindOrInsertPath(xyz, 4), kNoNode);
  EXPECT_EQ(model.node_count(), 4u);
  // ...but a stack (or prefix) already in the tree is found, after a refusal as well.
  EXPECT_EQ(model.FindOrInsertPath(abc, 4), leaf);
  EXPECT_EQ(model.FindOrInsertPath(std::span(abc).first(2), 4), model.node(leaf).parent);
  NodeId abd_leaf = model.FindOrInsertPath(abd, 5);
  EXPECT_EQ(abd_leaf, 4u);
  EXPECT_EQ(model.node(abd_leaf).parent, model.node(leaf).parent);
  model.AddWeight(leaf, Category::kSerialization, 7);
  model.AddWeight(leaf, Category::kSerialization, 0);
  EXPECT_EQ(model.total_weight(), 7u);
  EXPECT_EQ(model.node(leaf).self, 7u);
  EXPECT_EQ(model.node(model.node(leaf).parent).total, 7u);
  EXPECT_EQ(model.category_totals()[CategoryIndex(Category::kSerialization)], 7u);
  EXPECT_EQ(model.FindOrInsertPath({}, 0), kRootNode);
}

TEST(ProfileModelTest, MergeAddsStacksFromAModelWithItsOwnStrings) {
  ProfileModel first;
  first.AddStack(Frames{"main", "a"}, Category::kCompute, 2);
  ProfileModel second;
  second.AddStack(Frames{"other"}, Category::kSpill, 1);
  second.AddStack(Frames{"main", "a"}, Category::kCompute, 3);
  second.AddStack(Frames{"main", "b"}, Category::kS3aWrite, 4);
  first.Merge(second);
  EXPECT_EQ(first.total_weight(), 10u);
  EXPECT_EQ(first.node(FindPath(first, {"main", "a"})).total, 5u);
  EXPECT_EQ(first.node(FindPath(first, {"main", "b"})).total, 4u);
  EXPECT_EQ(first.category_totals()[CategoryIndex(Category::kS3aWrite)], 4u);
  EXPECT_EQ(first.category_totals()[CategoryIndex(Category::kSpill)], 1u);
}

TEST(ProfileModelTest, PruningMergesNarrowSubtreesIntoOneMarkedNode) {
  ProfileModel model;
  model.AddStack(Frames{"main", "wide", "deep"}, Category::kCompute, 90);
  model.AddStack(Frames{"main", "narrow", "narrower"}, Category::kSpill, 6);
  model.AddStack(Frames{"main", "narrow"}, Category::kCompute, 3);
  model.AddStack(Frames{"main", "tiny"}, Category::kCompute, 1);
  model.AddStack(Frames{"main", "wide", "speck"}, Category::kCompute, 2);
  ProfileModel pruned = model.Pruned(10);
  EXPECT_EQ(pruned.total_weight(), 102u);
  EXPECT_EQ(pruned.node(FindPath(pruned, {"main"})).total, 102u);
  EXPECT_NE(FindPath(pruned, {"main", "wide", "deep"}), kNoNode);
  EXPECT_EQ(FindPath(pruned, {"main", "narrow"}), kNoNode);
  EXPECT_EQ(FindPath(pruned, {"main", "tiny"}), kNoNode);
  // narrow, narrower and tiny (10 samples) are wide enough together to draw: one marker holds
  // them, with their categories; speck alone (2) stays a gap in "wide".
  NodeId marker = FindPath(pruned, {"main", "[3 frames below 9.8% merged]"});
  ASSERT_NE(marker, kNoNode);
  EXPECT_TRUE(pruned.IsMergedMarker(marker));
  EXPECT_FALSE(pruned.IsMergedMarker(FindPath(pruned, {"main"})));
  EXPECT_EQ(pruned.node(marker).total, 10u);
  EXPECT_EQ(pruned.node(marker).self, 10u);
  std::vector<uint64_t> marker_weights(kCategoryCount);
  pruned.ForEachSelfWeight(marker, [&](Category category, uint64_t weight) {
    marker_weights[CategoryIndex(category)] += weight;
  });
  EXPECT_EQ(marker_weights[CategoryIndex(Category::kSpill)], 6u);
  EXPECT_EQ(marker_weights[CategoryIndex(Category::kCompute)], 4u);
  EXPECT_EQ(pruned.node(FindPath(pruned, {"main", "wide"})).total, 92u);
  EXPECT_EQ(FindPath(pruned, {"main", "wide", "speck"}), kNoNode);
  EXPECT_EQ(pruned.pruned_node_count(), 4u);
  EXPECT_EQ(pruned.node_count(), 5u);
  // Strings are shared, not copied.
  EXPECT_EQ(&pruned.strings(), &model.strings());
  // Every kept node still has a parent with a smaller id.
  for (NodeId node = 1; node < pruned.node_count(); ++node) {
    EXPECT_LT(pruned.node(node).parent, node);
  }
}

// A profile of many distinct, individually narrow stacks (async-profiler output of a busy
// executor) must never prune to an empty picture.
TEST(ProfileModelTest, PruningEverythingLeavesAMarkerWithAllTheWeight) {
  ProfileModel model;
  for (int i = 0; i < 2000; ++i) {
    std::string frame = "f" + std::to_string(i);
    model.AddStack(Frames{frame, "leaf"}, Category::kCompute, 1);
  }
  ProfileModel pruned = model.Pruned(2);  // 0.1% of 2000
  ASSERT_EQ(pruned.node_count(), 2u);
  NodeId marker = pruned.node(kRootNode).first_child;
  EXPECT_TRUE(pruned.IsMergedMarker(marker));
  EXPECT_EQ(pruned.FrameName(pruned.node(marker).frame), "[4000 frames below 0.1% merged]");
  EXPECT_EQ(pruned.node(marker).total, 2000u);
  EXPECT_EQ(pruned.pruned_node_count(), 4000u);
  // The rvalue form gives the same graph.
  ProfileModel moved = std::move(model).Pruned(2);
  EXPECT_EQ(moved.node_count(), 2u);
  EXPECT_EQ(moved.node(moved.node(kRootNode).first_child).total, 2000u);
}

TEST(ProfileModelTest, FilterByCategoryKeepsOnlyThatCategory) {
  ProfileModel model;
  model.AddStack(Frames{"main", "ser"}, Category::kSerialization, 6);
  model.AddStack(Frames{"main", "cpu"}, Category::kCompute, 4);
  ProfileModel only = model.FilteredByCategory(Category::kSerialization);
  EXPECT_EQ(only.total_weight(), 6u);
  EXPECT_EQ(FindPath(only, {"main", "cpu"}), kNoNode);
  EXPECT_EQ(only.category_totals()[CategoryIndex(Category::kCompute)], 0u);
}

TEST(ProfileModelTest, WeightsSaturateInsteadOfWrapping) {
  ProfileModel model;
  model.AddStack(Frames{"a"}, Category::kCompute, UINT64_MAX - 1);
  model.AddStack(Frames{"a"}, Category::kCompute, 5);
  EXPECT_EQ(model.total_weight(), UINT64_MAX);
}

TEST(ProfileModelTest, EmptyStackCountsAtTheRoot) {
  ProfileModel model;
  model.AddStack(Frames{}, Category::kGc, 7);
  EXPECT_EQ(model.total_weight(), 7u);
  EXPECT_EQ(model.node(kRootNode).self, 7u);
}

TEST(ProfileModelTest, ForEachStackVisitsInAlphabeticalOrder) {
  ProfileModel model;
  model.AddStack(Frames{"b"}, Category::kOther, 1);
  model.AddStack(Frames{"a", "z"}, Category::kOther, 1);
  model.AddStack(Frames{"a", "c"}, Category::kOther, 1);
  std::vector<std::string> seen;
  model.ForEachStack([&](std::span<const FrameId> frames, Category, uint64_t) {
    std::string path;
    for (FrameId f : frames) path += std::string(model.FrameName(f)) + ";";
    seen.push_back(path);
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"a;c;", "a;z;", "b;"}));
}

// A node's weights in several categories come out in category order, whatever order they were
// added in (reading a written profile adds them in the written order: the text must not flip
// from one generation to the next; found by fuzz_collapsed_reader).
TEST(ProfileModelTest, ForEachStackVisitsANodesCategoriesInCategoryOrder) {
  auto order = [](std::vector<Category> added) {
    ProfileModel model;
    for (Category category : added) {
      model.AddStack(Frames{}, category, 1);
      model.AddStack(Frames{"a"}, category, 2);
    }
    std::vector<std::pair<size_t, Category>> seen;
    model.ForEachStack([&](std::span<const FrameId> frames, Category category, uint64_t) {
      seen.push_back({frames.size(), category});
    });
    return seen;
  };
  const auto forward = order({Category::kOther, Category::kGc, Category::kShuffleRead});
  EXPECT_EQ(forward, order({Category::kShuffleRead, Category::kGc, Category::kOther}));
  ASSERT_EQ(forward.size(), 6u);
  for (size_t i = 1; i < forward.size(); ++i) {
    if (forward[i].first == forward[i - 1].first) {
      EXPECT_LT(CategoryIndex(forward[i - 1].second), CategoryIndex(forward[i].second));
    }
  }
}

TEST(StringTableTest, InternsOnceAndKeepsLongStrings) {
  StringTable table;
  std::string long_name(100000, 'x');
  StringId a = table.Intern("alpha");
  StringId b = table.Intern(long_name);
  StringId c = table.Intern("beta");
  EXPECT_EQ(table.Intern("alpha"), a);
  EXPECT_EQ(table.Get(b), long_name);
  EXPECT_EQ(table.Get(c), "beta");
  EXPECT_FALSE(table.Find("gamma").has_value());
  EXPECT_EQ(table.size(), 3u);
}

}  // namespace
}  // namespace sparkprof::flamegraph
