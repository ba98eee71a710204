#include "flamegraph/diff.h"

#include <gtest/gtest.h>

#include <vector>

#include "flamegraph/model_test_util.h"

namespace sparkprof::flamegraph {
namespace {

using Frames = std::vector<std::string_view>;

TEST(DiffTest, BeforeTotalsMatchByCallPathAndDeltasAreNormalised) {
  ProfileModel before;
  before.AddStack(Frames{"main", "kryo"}, Category::kSerialization, 60);
  before.AddStack(Frames{"main", "compute"}, Category::kCompute, 40);
  before.AddStack(Frames{"main", "gone"}, Category::kCompute, 100);
  ProfileModel after;  // twice the samples overall, its own string ids
  after.AddStack(Frames{"new"}, Category::kCompute, 50);
  after.AddStack(Frames{"main", "compute"}, Category::kCompute, 300);
  after.AddStack(Frames{"main", "kryo"}, Category::kSerialization, 50);

  DiffProfile diff = ComputeDiff(before, after);
  EXPECT_EQ(diff.before_grand_total, 200u);
  EXPECT_EQ(diff.after_grand_total, 400u);
  NodeId kryo = FindPath(after, {"main", "kryo"});
  NodeId compute = FindPath(after, {"main", "compute"});
  NodeId fresh = FindPath(after, {"new"});
  EXPECT_EQ(diff.before_totals[kryo], 60u);
  EXPECT_EQ(diff.before_totals[compute], 40u);
  EXPECT_EQ(diff.before_totals[fresh], 0u);
  EXPECT_EQ(diff.before_totals[FindPath(after, {"main"})], 200u);
  // kryo: 50/400 - 60/200 = 0.125 - 0.3
  EXPECT_DOUBLE_EQ(diff.NormalizedDelta(after, kryo), 0.125 - 0.3);
  // compute: 300/400 - 40/200 = 0.75 - 0.2
  EXPECT_DOUBLE_EQ(diff.NormalizedDelta(after, compute), 0.55);
  EXPECT_DOUBLE_EQ(diff.NormalizedDelta(after, fresh), 0.125);
  EXPECT_DOUBLE_EQ(diff.NormalizedDelta(after, kRootNode), 0.0);
  // "main;gone" vanished.
  EXPECT_EQ(diff.before_only_weight, 100u);
}

TEST(DiffTest, IdenticalProfilesHaveNoChange) {
  ProfileModel a;
  a.AddStack(Frames{"x", "y"}, Category::kCompute, 3);
  ProfileModel b;
  b.AddStack(Frames{"x", "y"}, Category::kCompute, 30);
  DiffProfile diff = ComputeDiff(a, b);
  for (NodeId node = 0; node < b.node_count(); ++node) {
    EXPECT_DOUBLE_EQ(diff.NormalizedDelta(b, node), 0.0);
  }
  EXPECT_EQ(diff.before_only_weight, 0u);
}

TEST(DiffTest, EmptyBeforeProfile) {
  ProfileModel empty;
  ProfileModel b;
  b.AddStack(Frames{"x"}, Category::kCompute, 3);
  DiffProfile diff = ComputeDiff(empty, b);
  EXPECT_DOUBLE_EQ(diff.NormalizedDelta(b, FindPath(b, {"x"})), 1.0);
}

// The merged marker of a pruned `after` is compared with the narrow rest of `before` under the
// same parent, not drawn as new.
TEST(DiffTest, MergedMarkerIsComparedWithTheNarrowRestOfBefore) {
  ProfileModel before;
  before.AddStack(Frames{"main", "hot"}, Category::kCompute, 60);
  before.AddStack(Frames{"main", "n1"}, Category::kCompute, 30);
  before.AddStack(Frames{"main"}, Category::kCompute, 10);
  ProfileModel after;
  after.AddStack(Frames{"main", "hot"}, Category::kCompute, 60);
  after.AddStack(Frames{"main", "n1"}, Category::kCompute, 4);
  after.AddStack(Frames{"main", "n2"}, Category::kCompute, 4);
  after.AddStack(Frames{"main"}, Category::kCompute, 10);
  ProfileModel pruned = after.Pruned(5);
  NodeId marker = FindPath(pruned, {"main", "[2 frames below 6.4% merged]"});
  ASSERT_NE(marker, kNoNode);
  DiffProfile diff = ComputeDiff(before, pruned);
  EXPECT_EQ(diff.before_totals[marker], 30u);  // 100 - hot 60 - main's own 10
  EXPECT_EQ(diff.before_totals[FindPath(pruned, {"main", "hot"})], 60u);
}

}  // namespace
}  // namespace sparkprof::flamegraph
