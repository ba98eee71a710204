// Flame graph scale bench: 1M samples over 100k unique stacks (synthetic, Spark-like frame names)
// read from collapsed text (with the Spark frame rules, as the CLI), pruned and rendered to HTML.
// Baseline measured in the same run: writing the same model back out as collapsed text (the
// cheapest output there is).
//
// Usage: flamegraph_bench [unique_stacks=100000] [samples=1000000]
//                         [callgraph|independent|java35] [out.html] [input.collapsed]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "flamegraph/collapsed_reader.h"
#include "flamegraph/collapsed_writer.h"
#include "flamegraph/html_renderer.h"
#include "flamegraph/spark_classifier.h"

namespace fg = sparkprof::flamegraph;

namespace {

// Process CPU time: the build machine is shared, so wall time also measures the neighbours.
double CpuSeconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

// Two shapes of synthetic profile, both with Spark-like frame names:
//  - "callgraph": stacks are random walks over a fixed call graph (each method calls 1-4 others,
//    chosen with a skew), so stacks share prefixes the way real JVM stacks do;
//  - "independent": every level picks its frame independently of its caller, so almost every
//    frame of every stack is a new tree node (a worst case for the tree builder);
//  - "java35": issue 15's profile: 35-frame stacks (an executor's 8 common outer frames, then a
//    walk over a wide call graph that leaves most stacks alone after a few levels), shorter
//    names (~27 bytes), lines in random order as async-profiler writes them: ~97 MB for 100k.
std::string FrameName(uint64_t id) {
  static const char* packages[] = {"org/apache/spark/sql/execution/",
                                   "org/apache/spark/scheduler/",
                                   "scala/collection/",
                                   "com/esotericsoftware/kryo/",
                                   "org/apache/hadoop/fs/s3a/",
                                   "java/util/concurrent/",
                                   "org/apache/parquet/hadoop/",
                                   "java/io/"};
  return std::string(packages[id % 8]) + "Class" + std::to_string(id % 997) + "$Inner.method" +
         std::to_string(id);
}

uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}

std::string ShortFrameName(uint64_t id) {
  static const char* packages[] = {"org/apache/spark/", "scala/collection/", "java/util/",
                                   "java/io/",          "java/nio/",         "sun/nio/ch/"};
  return std::string(packages[id % 6]) + "C" + std::to_string(id % 997) + ".m" + std::to_string(id);
}

std::string MakeCollapsed(size_t unique_stacks, uint64_t samples, const std::string& shape) {
  constexpr uint64_t kMethods = 20000;
  const bool independent = shape == "independent";
  const bool java35 = shape == "java35";
  std::mt19937_64 random(42);
  std::uniform_real_distribution<double> uniform(0, 1);
  std::unordered_set<std::string> seen;
  std::vector<std::string> stacks;
  while (stacks.size() < unique_stacks) {
    if (java35) {
      std::string stack =
          "java/lang/Thread.run;java/util/concurrent/ThreadPoolExecutor$Worker.run;"
          "java/util/concurrent/ThreadPoolExecutor.runWorker;"
          "org/apache/spark/executor/Executor$TaskRunner.run;org/apache/spark/util/Utils$."
          "tryWithSafeFinally;org/apache/spark/scheduler/Task.run;"
          "org/apache/spark/scheduler/ResultTask.runTask;org/apache/spark/rdd/RDD.iterator";
      uint64_t frame = 1;
      for (size_t level = 8; level < 35; ++level) {
        // Few callees near the task's entry, many further in: stacks part after a few levels.
        uint64_t fanout = level < 10 ? 2 + Mix(frame) % 3 : 200;
        auto callee = static_cast<uint64_t>(std::pow(uniform(random), 2.0) * fanout);
        frame = Mix(frame * 31 + callee + 7) % kMethods;
        stack += ';';
        stack += ShortFrameName(frame);
      }
      if (seen.insert(stack).second) stacks.push_back(std::move(stack));
      continue;
    }
    size_t depth = 12 + random() % 37;
    std::string stack = "java/lang/Thread.run;org/apache/spark/executor/Executor$TaskRunner.run";
    uint64_t frame = 1;
    for (size_t level = 2; level < depth; ++level) {
      double skew = std::pow(uniform(random), 3.0);
      if (independent) {
        size_t pool = std::min<size_t>(2 + level * level, 400);
        frame = static_cast<uint64_t>(skew * pool) + 1000 * level;
      } else {
        uint64_t fanout = 1 + Mix(frame) % 4;
        uint64_t callee = static_cast<uint64_t>(skew * fanout);
        frame = Mix(frame * 31 + callee + 7) % kMethods;
      }
      stack += ';';
      stack += FrameName(frame);
    }
    if (seen.insert(stack).second) stacks.push_back(std::move(stack));
  }
  // Zipf-like weights summing to `samples`, at least 1 each.
  std::vector<double> share(stacks.size());
  double sum = 0;
  for (size_t i = 0; i < stacks.size(); ++i) sum += share[i] = 1.0 / std::pow(i + 1.0, 0.6);
  std::vector<std::string> lines;
  uint64_t written = 0;
  for (size_t i = 0; i < stacks.size(); ++i) {
    uint64_t weight = std::max<uint64_t>(1, static_cast<uint64_t>(share[i] / sum * samples));
    if (i + 1 == stacks.size() && written + weight < samples) weight = samples - written;
    written += weight;
    lines.push_back(stacks[i] + ' ' + std::to_string(weight) + '\n');
  }
  if (java35) std::shuffle(lines.begin(), lines.end(), random);
  std::string text;
  for (const std::string& line : lines) text += line;
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  size_t unique_stacks = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100000;
  uint64_t samples = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1000000;
  std::string shape = argc > 3 ? argv[3] : "callgraph";
  std::string input = MakeCollapsed(unique_stacks, samples, shape);

  constexpr int kRuns = 5;
  fg::CollapsedReadOptions read_options;
  read_options.per_frame_classifier = fg::SparkPerFrameClassifier();  // as the CLI reads
  double best_read = 1e9, best_render = 1e9, best_baseline = 1e9;
  std::string html;
  std::string collapsed;
  size_t nodes = 0, kept_nodes = 0;
  uint64_t total = 0;
  for (int run = 0; run < kRuns; ++run) {
    double start = CpuSeconds();
    fg::ProfileModel model;
    fg::ReadReport report;
    if (!fg::ReadCollapsed(input, read_options, model, report).ok()) return 1;
    best_read = std::min(best_read, CpuSeconds() - start);

    start = CpuSeconds();
    // The CLI's default --min-width: 0.1 px of a 1200 px graph.
    auto min_total = static_cast<uint64_t>(std::ceil(model.total_weight() / 12000.0));
    fg::ProfileModel pruned = model.Pruned(min_total);
    html.clear();
    fg::RenderHtml(pruned, {}, nullptr, html);
    best_render = std::min(best_render, CpuSeconds() - start);

    start = CpuSeconds();
    collapsed.clear();
    fg::WriteCollapsed(model, {}, collapsed);
    best_baseline = std::min(best_baseline, CpuSeconds() - start);
    nodes = model.node_count();
    kept_nodes = pruned.node_count();
    total = model.total_weight();
  }
  if (argc > 4) {
    FILE* out = std::fopen(argv[4], "wb");
    if (out) {
      std::fwrite(html.data(), 1, html.size(), out);
      std::fclose(out);
    }
  }
  if (argc > 5) {
    FILE* out = std::fopen(argv[5], "wb");
    if (out) {
      std::fwrite(input.data(), 1, input.size(), out);
      std::fclose(out);
    }
  }
  std::printf("shape: %s\n", shape.c_str());
  std::printf("input: %zu unique stacks, %llu samples, %.1f MB collapsed text, %zu tree nodes\n",
              unique_stacks, static_cast<unsigned long long>(total), input.size() / 1e6, nodes);
  std::printf("read collapsed -> model:        %7.3f s  (%.0f MB/s)\n", best_read,
              input.size() / 1e6 / best_read);
  std::printf("prune + render HTML:            %7.3f s  (%zu nodes kept)\n", best_render,
              kept_nodes);
  std::printf("read + prune + render (total):  %7.3f s  (target < 1 s)\n", best_read + best_render);
  std::printf("HTML size:                      %7.2f MB (target < 10 MB)\n", html.size() / 1e6);
  std::printf("baseline: model -> collapsed:   %7.3f s, %.2f MB\n", best_baseline,
              collapsed.size() / 1e6);
  std::printf("ratio HTML render / baseline:   time %.2fx, size %.3fx\n",
              best_render / best_baseline, static_cast<double>(html.size()) / collapsed.size());
  std::printf("(process CPU seconds, best of %d runs each)\n", kRuns);
  return 0;
}
