#include "flamegraph/python_worker_layout.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "flamegraph/html_renderer.h"
#include "flamegraph/model_test_util.h"

namespace sparkprof::flamegraph {
namespace {

using Frames = std::vector<std::string_view>;

constexpr uint64_t kMs = 1'000'000;  // nanoseconds

// A PySpark stage: the task thread computed 500 ms and waited 1 s on its worker in the socket
// read; the worker's subtree under that read holds 1.5 s (1.2 s on CPU, 0.3 s off CPU).
ProfileModel PySparkStage() {
  ProfileModel model(WeightUnit::kNanoseconds);
  model.AddStack(Frames{"Executor.run", "Iterator.next"}, Category::kCompute, 500 * kMs);
  model.AddStack(Frames{"Executor.run", "PythonRunner.read", "SocketInputStream.read"},
                 Category::kPythonWait, 1000 * kMs);
  model.AddStack(Frames{"Executor.run", "PythonRunner.read", "SocketInputStream.read",
                        "[python worker]", "udf (app.py:3)"},
                 Category::kPython, 1200 * kMs);
  model.AddStack(Frames{"Executor.run", "PythonRunner.read", "SocketInputStream.read",
                        "[python worker]", "udf (app.py:3)", "fetch (app.py:9)"},
                 Category::kPythonOffCpu, 300 * kMs);
  return model;
}

TEST(PythonWorkerLayoutTest, WorkerSubtreeIsDrawnWithinTheWaitItOverlaps) {
  ProfileModel model = PySparkStage();
  DrawnWidths drawn = ComputeDrawnWidths(model);
  NodeId read = FindPath(model, {"Executor.run", "PythonRunner.read", "SocketInputStream.read"});
  NodeId worker = FindPath(
      model, {"Executor.run", "PythonRunner.read", "SocketInputStream.read", "[python worker]"});
  NodeId udf = FindPath(model, {"Executor.run", "PythonRunner.read", "SocketInputStream.read",
                                "[python worker]", "udf (app.py:3)"});
  NodeId fetch = FindPath(model, {"Executor.run", "PythonRunner.read", "SocketInputStream.read",
                                  "[python worker]", "udf (app.py:3)", "fetch (app.py:9)"});
  ASSERT_NE(fetch, kNoNode);

  // The frame that waited is as wide as its wait, not wait + worker; so are those above it.
  EXPECT_DOUBLE_EQ(drawn.width[read], 1000.0 * kMs);
  EXPECT_DOUBLE_EQ(drawn.width[FindPath(model, {"Executor.run"})], 1500.0 * kMs);
  EXPECT_DOUBLE_EQ(drawn.width[kRootNode], 1500.0 * kMs);
  // The subtree fills the wait, to scale (1 s / 1.5 s), and never more.
  EXPECT_DOUBLE_EQ(drawn.width[worker], 1000.0 * kMs);
  EXPECT_DOUBLE_EQ(drawn.width[udf], 1000.0 * kMs);
  EXPECT_DOUBLE_EQ(drawn.width[fetch], 200.0 * kMs);
  for (NodeId id : {worker, udf, fetch}) EXPECT_LE(drawn.width[id], drawn.width[read]);
  ASSERT_EQ(drawn.python_workers.size(), 1u);
  EXPECT_EQ(drawn.python_workers[0].node, worker);
  EXPECT_EQ(drawn.python_workers[0].wait, 1000 * kMs);
  EXPECT_EQ(drawn.python_workers[0].time, 1500 * kMs);
  EXPECT_TRUE(drawn.python_workers[0].within_wait);

  // The model keeps the real weights: the worker's 1.5 s, and the frame's wait + worker.
  EXPECT_EQ(model.node(worker).total, 1500 * kMs);
  EXPECT_EQ(model.node(read).total, 2500 * kMs);
}

// The page: tooltips and the legend read "nodes" and "categoryTotals" (real: 1.5 s), the layout
// reads "drawn" (the read, Executor.run and root less the worker; the subtree scaled).
TEST(PythonWorkerLayoutTest, AWorkerShorterThanItsWaitIsNotStretched) {
  // The worker computed 200 ms of a 1 s wait (it waited for its input the rest).
  ProfileModel model(WeightUnit::kNanoseconds);
  model.AddStack(Frames{"Executor.run", "PythonRunner.read"}, Category::kPythonWait, 1000 * kMs);
  model.AddStack(Frames{"Executor.run", "PythonRunner.read", "[python worker]", "udf (app.py:3)"},
                 Category::kPython, 200 * kMs);
  DrawnWidths drawn = ComputeDrawnWidths(model);
  EXPECT_DOUBLE_EQ(drawn.width[FindPath(model, {"Executor.run", "PythonRunner.read"})],
                   1000.0 * kMs);
  EXPECT_DOUBLE_EQ(
      drawn.width[FindPath(model, {"Executor.run", "PythonRunner.read", "[python worker]"})],
      200.0 * kMs);
}

TEST(PythonWorkerLayoutTest, PageCarriesRealTimesAndDrawnWidths) {
  ProfileModel model = PySparkStage();
  std::string html;
  RenderHtml(model, {}, nullptr, html);
  // Depth first, children alphabetical: root 0, Executor.run 1, Iterator.next 2,
  // PythonRunner.read 3, SocketInputStream.read 4, [python worker] 5, udf 6, fetch 7.
  EXPECT_NE(html.find("\"nodes\":[0,12,3000000000,0,1,1,12,3000000000,0,2,2,0,500000000,500000000,"
                      "0,3,12,2500000000,0,1,4,12,2500000000,1000000000,1,5,19,1500000000,0,1,"
                      "6,19,1500000000,1200000000,1,7,20,300000000,300000000,0]"),
            std::string::npos)
      << html.substr(html.find("\"nodes\""), 400);
  EXPECT_NE(html.find("\"drawn\":[0,1500000000,1,1500000000,3,1000000000,4,1000000000,"
                      "5,1000000000,6,1000000000,7,200000000]"),
            std::string::npos);
  EXPECT_NE(html.find("\"pythonWorkers\":[5,1000000000,1]"), std::string::npos);
  // The legend's python total is the real 1.2 s (python) and 0.3 s (python_off_cpu).
  EXPECT_NE(html.find(",1200000000,300000000]"), std::string::npos);
}

// A worker subtree under a frame with no python_wait of its own is drawn beside, at its width.
TEST(PythonWorkerLayoutTest, WithoutAWaitTheSubtreeIsDrawnBesideAtItsRealWidth) {
  ProfileModel model(WeightUnit::kNanoseconds);
  model.AddStack(Frames{"Executor.run"}, Category::kCompute, 400 * kMs);
  model.AddStack(Frames{"Executor.run", "[python worker]", "udf (app.py:3)"}, Category::kPython,
                 600 * kMs);
  DrawnWidths drawn = ComputeDrawnWidths(model);
  NodeId worker = FindPath(model, {"Executor.run", "[python worker]"});
  EXPECT_DOUBLE_EQ(drawn.width[worker], 600.0 * kMs);
  EXPECT_DOUBLE_EQ(drawn.width[FindPath(model, {"Executor.run"})], 1000.0 * kMs);
  ASSERT_EQ(drawn.python_workers.size(), 1u);
  EXPECT_FALSE(drawn.python_workers[0].within_wait);

  std::string html;
  RenderHtml(model, {}, nullptr, html);
  EXPECT_NE(html.find("\"drawn\":[]"), std::string::npos);
  EXPECT_NE(html.find("\"pythonWorkers\":[2,0,0]"), std::string::npos);
}

// A profile without Python workers renders as before: no drawn widths at all.
TEST(PythonWorkerLayoutTest, ProfileWithoutWorkersIsDrawnAtItsTotals) {
  ProfileModel model;
  model.AddStack(Frames{"a", "b"}, Category::kPythonWait, 3);
  std::string html;
  RenderHtml(model, {}, nullptr, html);
  EXPECT_EQ(html.find("\"drawn\""), std::string::npos);
  EXPECT_EQ(html.find("\"pythonWorkers\""), std::string::npos);
}

}  // namespace
}  // namespace sparkprof::flamegraph
