#include "native-agent/batch_encoder.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

#include "native-agent/executor_id.h"
#include "schema/profile_generated.h"

namespace sparkprof::agent {
namespace {

class FixedResolver : public MethodNameResolver {
 public:
  std::string Resolve(const void* id) override {
    return reinterpret_cast<uintptr_t>(id) == 1 ? "Main.main"
                                                : "java.io.ObjectOutputStream.writeObject";
  }
};

TEST(BatchEncoderTest, EncodesAVerifiableBatchWithOnlyUsedStrings) {
  ThreadRegistry registry;
  FixedResolver resolver;
  GcMonitor gc;
  TaskTimeline timeline;
  Drain drain(DrainConfig{}, registry, resolver, gc, timeline);
  ThreadState* state = registry.Add(std::make_unique<ThreadState>(1, 8, 4));
  state->name = "Executor task launch worker for task 1.0 in stage 3.0 (TID 11)";
  SampleRecord* record = state->ring.TryReserve();
  record->tag = TaskTag{3, 0, 11};
  record->weight_ns = 10'000'000;
  record->partial_walk_error = 0;
  record->frames[0] = RawFrame{0, reinterpret_cast<const void*>(uintptr_t{2})};
  record->frames[1] = RawFrame{0, reinterpret_cast<const void*>(uintptr_t{1})};
  record->num_frames = 2;
  state->ring.Commit();
  drain.RunCycle();

  BatchHeader header{"exec-1", "host-a", 123, 1, 2, 10'000'000, "cpu"};
  HealthSnapshot health;
  health.samples_taken = 5;
  std::vector<GcPause> pauses = {{1000, 5, 777}};
  std::vector<uint8_t> bytes =
      EncodeBatch(header, drain.pending(), drain.strings(), pauses, health);
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  ASSERT_TRUE(schema::VerifyBatchBuffer(verifier));
  const schema::Batch* batch = schema::GetBatch(bytes.data());
  EXPECT_EQ(batch->executor_id()->str(), "exec-1");
  EXPECT_EQ(batch->mode()->str(), "cpu");
  EXPECT_EQ(batch->strings()->size(), 3u);  // two frames and one thread name: no unused strings
  ASSERT_EQ(batch->samples()->size(), 1u);
  const schema::StackSample* sample = batch->samples()->Get(0);
  EXPECT_EQ(sample->task_attempt_id(), 11);
  EXPECT_EQ(sample->stage_id(), 3);
  EXPECT_EQ(sample->category(), schema::Category::serialization);
  EXPECT_EQ(sample->weight_ns(), 10'000'000u);
  const schema::Stack* stack = batch->stacks()->Get(sample->stack());
  ASSERT_EQ(stack->frames()->size(), 2u);
  EXPECT_EQ(batch->strings()->Get(stack->frames()->Get(0))->str(), "Main.main");
  EXPECT_EQ(batch->strings()->Get(sample->thread())->str(),
            "Executor task launch worker for task N.N in stage N.N (TID N)");
  ASSERT_EQ(batch->gc_pauses()->size(), 1u);
  EXPECT_EQ(batch->gc_pauses()->Get(0)->duration_ns(), 777);
  EXPECT_EQ(batch->health()->samples_taken(), 5u);
  ASSERT_GE(batch->task_times()->size(), 1u);
}

std::string EncodedExecutorId(const ExecutorId& executor_id) {
  BatchHeader header;
  header.executor_id = executor_id.Get();
  StringTable strings;
  Profile empty(/*max_stacks=*/100, /*overflow_frame_id=*/0);
  std::vector<uint8_t> bytes = EncodeBatch(header, empty, strings, {}, HealthSnapshot{});
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  if (!schema::VerifyBatchBuffer(verifier)) return "<invalid batch>";
  return schema::GetBatch(bytes.data())->executor_id()->str();
}

TEST(ExecutorIdTest, DriverUntilThePluginNamesTheExecutor) {
  ExecutorId executor_id("");
  EXPECT_EQ(EncodedExecutorId(executor_id), "driver");
  ASSERT_TRUE(executor_id.Set("7").ok());
  EXPECT_EQ(EncodedExecutorId(executor_id), "7");
}

TEST(ExecutorIdTest, TheAgentOptionWinsOverThePlugin) {
  ExecutorId executor_id("from-option");
  Status refused = executor_id.Set("7");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("executor=from-option"), std::string::npos) << refused.message();
  EXPECT_EQ(EncodedExecutorId(executor_id), "from-option");
}

TEST(ExecutorIdTest, RefusedIdsKeepThePreviousOne) {
  ExecutorId executor_id("");
  ASSERT_TRUE(executor_id.Set("3").ok());
  EXPECT_FALSE(executor_id.Set("").ok());
  EXPECT_FALSE(executor_id.Set(std::string(kMaxExecutorIdBytes + 1, '4')).ok());
  EXPECT_FALSE(executor_id.Set("4\n").ok());
  EXPECT_FALSE(executor_id.Set("\xC0\x80").ok());
  EXPECT_EQ(executor_id.Get(), "3");
  ASSERT_TRUE(executor_id.Set(std::string(kMaxExecutorIdBytes, '5')).ok());
  EXPECT_EQ(EncodedExecutorId(executor_id), std::string(kMaxExecutorIdBytes, '5'));
}

// The plugin's init (JNI) may set the id while the drain thread encodes: every batch must carry
// one whole id that was set, never a mix. Long ids make a torn copy likely if it could happen.
TEST(ExecutorIdTest, ConcurrentSetWhileEncodingNeverTearsTheId) {
  ExecutorId executor_id("");
  std::vector<std::string> ids = {"driver"};
  for (char fill : {'a', 'b', 'c', 'd'}) ids.push_back(std::string(kMaxExecutorIdBytes, fill));
  ids.push_back("7");
  const std::set<std::string> allowed(ids.begin(), ids.end());
  std::atomic<bool> done{false};
  std::thread setter([&] {
    for (int round = 0; round < 20'000; ++round) {
      if (!executor_id.Set(ids[1 + round % (ids.size() - 1)]).ok()) break;
    }
    done.store(true);
  });
  int batches = 0;
  int unexpected = 0;
  while (!done.load() || batches < 100) {
    if (allowed.count(EncodedExecutorId(executor_id)) == 0) ++unexpected;
    ++batches;
  }
  setter.join();
  EXPECT_EQ(unexpected, 0) << "of " << batches << " batches";
  EXPECT_EQ(EncodedExecutorId(executor_id), ids.back());  // the last set wins
}

}  // namespace
}  // namespace sparkprof::agent
