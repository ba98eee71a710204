#include "driver-aggregator/stage_call_tree.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace sparkprof::driver {
namespace {

using flamegraph::FrameId;
using flamegraph::NodeId;
using flamegraph::ProfileModel;

// Every (stack as names, category, self weight) of a model, to compare two models.
std::map<std::tuple<std::string, int>, uint64_t> Stacks(const ProfileModel& model) {
  std::map<std::tuple<std::string, int>, uint64_t> out;
  model.ForEachStack([&](std::span<const FrameId> frames, Category category, uint64_t weight) {
    std::string name;
    for (FrameId frame : frames) name += std::string(model.FrameName(frame)) + ";";
    out[{name, CategoryIndex(category)}] += weight;
  });
  return out;
}

std::vector<FrameId> Intern(StageCallTree& tree, const std::vector<std::string>& names) {
  std::vector<FrameId> ids;
  for (const auto& name : names) ids.push_back(tree.InternFrame(name));
  return ids;
}

TEST(StageCallTreeTest, AKnownStackIsTheSameNodeAndWeightsMatchAPlainModel) {
  std::mt19937 random(7);
  std::vector<std::vector<std::string>> stacks;
  for (int s = 0; s < 400; ++s) {
    std::vector<std::string> stack = {"Thread.run", "Task.run"};
    size_t depth = 1 + random() % 60;
    for (size_t d = 0; d < depth; ++d) stack.push_back("f" + std::to_string(random() % 12));
    stacks.push_back(stack);
  }
  stacks.push_back({});  // the root itself
  StageCallTree tree(1'000'000);
  ProfileModel reference(flamegraph::WeightUnit::kNanoseconds);
  std::map<size_t, NodeId> first_node;
  for (int round = 0; round < 5; ++round) {
    for (size_t s = 0; s < stacks.size(); ++s) {
      NodeId node = tree.FindOrInsert(Intern(tree, stacks[s]));
      ASSERT_NE(node, flamegraph::kNoNode);
      auto [it, inserted] = first_node.emplace(s, node);
      EXPECT_EQ(it->second, node) << "stack " << s << " round " << round;
      auto category = static_cast<Category>((s + round) % kCategoryCount);
      uint64_t weight = 1000 + s * 7 + round;
      tree.AddWeight(node, category, weight);
      std::vector<std::string_view> names(stacks[s].begin(), stacks[s].end());
      reference.AddStack(names, category, weight);
    }
  }
  // Equal stacks are one entry (duplicates in the random set included).
  EXPECT_LE(tree.known_stacks(), stacks.size());
  const ProfileModel& model = tree.model();
  EXPECT_EQ(model.total_weight(), reference.total_weight());
  EXPECT_EQ(model.node_count(), reference.node_count());
  EXPECT_EQ(Stacks(model), Stacks(reference));
  EXPECT_EQ(model.category_totals(), reference.category_totals());
}

TEST(StageCallTreeTest, StacksDifferingOnlyInOrderOrDepthAreDifferentNodes) {
  StageCallTree tree(1000);
  std::vector<FrameId> ab = Intern(tree, {"a", "b"});
  std::vector<FrameId> ba = Intern(tree, {"b", "a"});
  std::vector<FrameId> aba = Intern(tree, {"a", "b", "a"});
  std::vector<FrameId> a = Intern(tree, {"a"});
  std::vector<NodeId> nodes = {tree.FindOrInsert(ab), tree.FindOrInsert(ba), tree.FindOrInsert(aba),
                               tree.FindOrInsert(a)};
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (size_t j = i + 1; j < nodes.size(); ++j) EXPECT_NE(nodes[i], nodes[j]);
  }
  EXPECT_EQ(tree.model().PathTo(nodes[2]), aba);
  EXPECT_EQ(tree.FindOrInsert(ab), nodes[0]);
}

TEST(StageCallTreeTest, FindInStepsAgreesWithFindOrInsert) {
  StageCallTree tree(6);  // root + 5 nodes
  std::vector<FrameId> abc = Intern(tree, {"a", "b", "c"});
  std::vector<FrameId> xyz = Intern(tree, {"x", "y", "z"});
  NodeId node = 0;
  tree.Prefetch(StageCallTree::KeyOf(abc));  // harmless on an empty table
  EXPECT_FALSE(tree.Find(StageCallTree::KeyOf(abc), node));
  NodeId known = tree.FindOrInsert(abc, StageCallTree::KeyOf(abc));
  ASSERT_NE(known, flamegraph::kNoNode);
  tree.Prefetch(StageCallTree::KeyOf(abc));
  ASSERT_TRUE(tree.Find(StageCallTree::KeyOf(abc), node));
  EXPECT_EQ(node, known);
  EXPECT_EQ(tree.FindOrInsert(abc), known);
  // A stack that folded is known as folded: found, with no node.
  EXPECT_EQ(tree.FindOrInsert(xyz), flamegraph::kNoNode);
  ASSERT_TRUE(tree.Find(StageCallTree::KeyOf(xyz), node));
  EXPECT_EQ(node, flamegraph::kNoNode);
  // Prefixes and reorderings are other stacks.
  EXPECT_FALSE(tree.Find(StageCallTree::KeyOf(std::span(abc).first(2)), node));
  std::vector<FrameId> cba(abc.rbegin(), abc.rend());
  EXPECT_FALSE(tree.Find(StageCallTree::KeyOf(cba), node));
}

TEST(StageCallTreeTest, AFullTreeRefusesNewStacksButFindsKnownOnes) {
  StageCallTree tree(6);  // root + 5 nodes
  NodeId known = tree.FindOrInsert(Intern(tree, {"a", "b", "c"}));
  ASSERT_NE(known, flamegraph::kNoNode);
  EXPECT_EQ(tree.FindOrInsert(Intern(tree, {"x", "y", "z"})), flamegraph::kNoNode);
  EXPECT_NE(tree.FindOrInsert(Intern(tree, {"a", "d"})), flamegraph::kNoNode);  // one node fits
  EXPECT_EQ(tree.FindOrInsert(Intern(tree, {"x", "y", "z"})), flamegraph::kNoNode);  // remembered
  EXPECT_EQ(tree.FindOrInsert(Intern(tree, {"a", "b", "c"})), known);
  EXPECT_EQ(tree.node_count(), 5u);
  // The overflow node is made past the cap, once.
  NodeId overflow = tree.OverflowNode();
  EXPECT_EQ(tree.OverflowNode(), overflow);
  tree.AddWeight(overflow, Category::kOther, 5);
  EXPECT_EQ(tree.model().FrameName(tree.model().node(overflow).frame), kOverflowFrame);
  EXPECT_EQ(tree.model().total_weight(), 5u);
}

TEST(StageCallTreeTest, FoldedStacksAreRememberedOnlyUpToAQuarterOfTheCap) {
  StageCallTree tree(8);
  ASSERT_NE(tree.FindOrInsert(Intern(tree, {"a", "b", "c", "d", "e", "f", "g"})),
            flamegraph::kNoNode);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(tree.FindOrInsert(Intern(tree, {"new" + std::to_string(i)})), flamegraph::kNoNode);
  }
  EXPECT_EQ(tree.known_stacks(), 1u + 8 / 4);
}

TEST(StageCallTreeTest, WeightSumsPastTheirTableAreAddedAndNothingIsLost) {
  StageCallTree tree(1'000'000);
  std::vector<NodeId> nodes;
  for (size_t i = 0; i < StageCallTree::kMaxPendingWeights / 4 + 10; ++i) {
    nodes.push_back(tree.FindOrInsert(Intern(tree, {"root", "leaf" + std::to_string(i)})));
  }
  uint64_t expected = 0;
  for (int category = 0; category < 5; ++category) {  // 5x the nodes: past the table's size
    for (NodeId node : nodes) {
      tree.AddWeight(node, static_cast<Category>(category), 3);
      expected += 3;
    }
  }
  tree.AddWeight(nodes[0], Category::kCompute, 0);           // nothing
  tree.AddWeight(nodes[0], Category::kCompute, UINT64_MAX);  // saturates, never wraps
  const ProfileModel& model = tree.model();
  EXPECT_EQ(model.total_weight(), UINT64_MAX);
  EXPECT_EQ(model.node(nodes[1]).total, 15u);
  uint64_t sum = 0;
  for (size_t i = 1; i < nodes.size(); ++i) sum += model.node(nodes[i]).total;
  EXPECT_EQ(sum, expected - 15);
  // Reading again adds nothing twice.
  EXPECT_EQ(tree.model().node(nodes[1]).total, 15u);
}

}  // namespace
}  // namespace sparkprof::driver
