#include "native-agent/batch_encoder.h"

#include <gtest/gtest.h>

#include "schema/profile_generated.h"

namespace sparkprof::agent {
namespace {

class FixedResolver : public MethodNameResolver {
 public:
  std::string Resolve(const void* id) override {
    return reinterpret_cast<uintptr_t>(id) == 1 ? "Main.main" : "java.io.ObjectOutputStream.writeObject";
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
  record->frames[0] = RawFrame{0, reinterpret_cast<const void*>(uintptr_t{2})};
  record->frames[1] = RawFrame{0, reinterpret_cast<const void*>(uintptr_t{1})};
  record->num_frames = 2;
  state->ring.Commit();
  drain.RunCycle();

  BatchHeader header{"exec-1", "host-a", 123, 1, 2, 10'000'000, "cpu"};
  HealthSnapshot health;
  health.samples_taken = 5;
  std::vector<GcPause> pauses = {{1000, 5, 777}};
  std::vector<uint8_t> bytes = EncodeBatch(header, drain.pending(), drain.strings(), pauses, health);
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

}  // namespace
}  // namespace sparkprof::agent
