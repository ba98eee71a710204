#include "native-agent/monitor_waits.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "native-agent/batch_encoder.h"
#include "schema/profile_generated.h"

namespace sparkprof::agent {
namespace {

const void* Method(uintptr_t id) { return reinterpret_cast<const void*>(id); }

TEST(MonitorWaitTableTest, RowsAddUpAndTakeGivesDeltasOnce) {
  MonitorWaitTable table(MonitorWaitConfig{});
  const int32_t klass = table.InternClass("com.acme.Shared");
  EXPECT_EQ(table.InternClass("com.acme.Shared"), klass);
  const int32_t waiter = table.InternStack({Method(1), Method(2)});
  EXPECT_EQ(table.InternStack({Method(1), Method(2)}), waiter);
  EXPECT_EQ(table.InternStack({}), MonitorWaitTable::kNone);
  const int32_t holder = table.InternStack({Method(1), Method(3)});
  const int32_t thread = table.InternThread("Executor task launch worker for task N.N");
  const TaskTag tag{4, 1, 99};
  MonitorWaitTable::Counters* plain =
      table.FindRow(tag, klass, waiter, MonitorWaitTable::kNone, MonitorWaitTable::kNone);
  MonitorWaitTable::Counters* looked = table.FindRow(tag, klass, waiter, holder, thread);
  ASSERT_NE(plain, nullptr);
  ASSERT_NE(looked, nullptr);
  EXPECT_NE(plain, looked);
  // The task attempt is not part of the key: another task of the stage shares the row.
  EXPECT_EQ(table.FindRow(TaskTag{4, 1, 100}, klass, waiter, MonitorWaitTable::kNone,
                          MonitorWaitTable::kNone),
            plain);
  plain->Add(1'000);
  plain->Add(2'000);
  looked->Add(500);

  std::vector<MonitorWaitDelta> deltas = table.TakeDeltas();
  ASSERT_EQ(deltas.size(), 2u);
  EXPECT_EQ(deltas[0].stage_id, 4);
  EXPECT_EQ(deltas[0].stage_attempt, 1);
  EXPECT_EQ(deltas[0].monitor_class, "com.acme.Shared");
  EXPECT_EQ(deltas[0].waits, 2u);
  EXPECT_EQ(deltas[0].wait_ns, 3'000u);
  ASSERT_NE(deltas[0].waiter, nullptr);
  EXPECT_EQ(*deltas[0].waiter, (std::vector<const void*>{Method(1), Method(2)}));
  EXPECT_EQ(deltas[0].holder, nullptr);
  EXPECT_EQ(deltas[0].holder_thread, "");
  ASSERT_NE(deltas[1].holder, nullptr);
  EXPECT_EQ(deltas[1].holder->back(), Method(3));
  EXPECT_EQ(deltas[1].holder_thread, "Executor task launch worker for task N.N");

  EXPECT_TRUE(table.TakeDeltas().empty());  // nothing new
  plain->Add(10);
  deltas = table.TakeDeltas();
  ASSERT_EQ(deltas.size(), 1u);
  EXPECT_EQ(deltas[0].waits, 1u);
  EXPECT_EQ(deltas[0].wait_ns, 10u);
}

TEST(MonitorWaitTableTest, BoundedKeysStacksAndNames) {
  MonitorWaitConfig config;
  config.max_keys = 2;
  config.max_stacks = 1;
  config.max_classes = 1;
  MonitorWaitTable table(config);
  EXPECT_EQ(table.InternClass("A"), 0);
  EXPECT_EQ(table.InternClass("B"), MonitorWaitTable::kNone);
  EXPECT_EQ(table.InternStack({Method(1)}), 0);
  EXPECT_EQ(table.InternStack({Method(2)}), MonitorWaitTable::kNone);
  const TaskTag tag{1, 0, 1};
  EXPECT_NE(table.FindRow(tag, 0, 0, -1, -1), nullptr);
  EXPECT_NE(table.FindRow(TaskTag{2, 0, 1}, 0, 0, -1, -1), nullptr);
  EXPECT_EQ(table.FindRow(TaskTag{3, 0, 1}, 0, 0, -1, -1), nullptr);
  table.DropWait();
  EXPECT_EQ(table.dropped_waits(), 1u);
  EXPECT_EQ(table.rows(), 2u);
  EXPECT_GT(table.memory_bytes(), 0u);
}

TEST(MonitorWaitTableTest, ThreadsAddWhileTheDrainTakes) {
  MonitorWaitTable table(MonitorWaitConfig{});
  const int32_t klass = table.InternClass("java.lang.Object");
  constexpr int kThreads = 4;
  constexpr int kWaits = 20'000;
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&table, klass, t] {
      for (int i = 0; i < kWaits; ++i) {
        const int32_t stack = table.InternStack({Method(1), Method(100 + (i % 7))});
        table.FindRow(TaskTag{t % 2, 0, t}, klass, stack, -1, -1)->Add(3);
      }
    });
  }
  uint64_t waits = 0;
  uint64_t wait_ns = 0;
  auto take = [&] {
    for (const MonitorWaitDelta& delta : table.TakeDeltas()) {
      waits += delta.waits;
      wait_ns += delta.wait_ns;
    }
  };
  for (int i = 0; i < 50; ++i) take();
  for (std::thread& thread : threads) thread.join();
  take();
  EXPECT_EQ(waits, uint64_t{kThreads} * kWaits);
  EXPECT_EQ(wait_ns, 3 * uint64_t{kThreads} * kWaits);
}

TEST(MonitorWaitEncodingTest, RowsGoIntoTheBatchWithTheirStacksAndNames) {
  StringTable strings;
  const uint32_t shared = strings.Intern("com.acme.Shared");
  const uint32_t main = strings.Intern("Main.main");
  const uint32_t work = strings.Intern("com.acme.Job.work");
  const uint32_t score = strings.Intern("com.acme.Shared.score");
  const uint32_t holder_thread = strings.Intern("Executor task launch worker");
  strings.Intern("never.Used");
  Profile empty(100, strings.Intern("[overflow]"));
  std::vector<MonitorWaitRow> rows(2);
  rows[0].stage_id = 3;
  rows[0].stage_attempt = 0;
  rows[0].monitor_class = shared;
  rows[0].waiter = {main, work};
  rows[0].waits = 7;
  rows[0].wait_ns = 70'000;
  rows[1] = rows[0];
  rows[1].holder = {main, work, score};
  rows[1].holder_thread = holder_thread;
  rows[1].waits = 1;
  rows[1].wait_ns = 9;
  BatchHeader header{"1", "host", 5, 1, 2, 10'000'000, "cpu+wall"};
  std::vector<uint8_t> bytes =
      EncodeBatch(header, empty, strings, {}, HealthSnapshot{}, {}, nullptr, nullptr, rows);
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  ASSERT_TRUE(schema::VerifyBatchBuffer(verifier));
  const schema::Batch* batch = schema::GetBatch(bytes.data());
  ASSERT_NE(batch->monitor_waits(), nullptr);
  ASSERT_EQ(batch->monitor_waits()->size(), 2u);
  EXPECT_EQ(batch->strings()->size(), 5u);  // the unused string is left out
  EXPECT_EQ(batch->stacks()->size(), 2u);   // the waiter stack written once
  const schema::MonitorWait* plain = batch->monitor_waits()->Get(0);
  const schema::MonitorWait* looked = batch->monitor_waits()->Get(1);
  EXPECT_EQ(plain->stage_id(), 3);
  EXPECT_EQ(batch->strings()->Get(plain->monitor_class())->str(), "com.acme.Shared");
  EXPECT_EQ(plain->holder_stack(), -1);
  EXPECT_EQ(plain->holder_thread(), -1);
  EXPECT_EQ(plain->waits(), 7u);
  EXPECT_EQ(plain->wait_ns(), 70'000u);
  EXPECT_EQ(looked->waiter_stack(), plain->waiter_stack());
  const schema::Stack* holder = batch->stacks()->Get(static_cast<uint32_t>(looked->holder_stack()));
  ASSERT_EQ(holder->frames()->size(), 3u);
  EXPECT_EQ(batch->strings()->Get(holder->frames()->Get(2))->str(), "com.acme.Shared.score");
  EXPECT_EQ(batch->strings()->Get(static_cast<uint32_t>(looked->holder_thread()))->str(),
            "Executor task launch worker");
}

}  // namespace
}  // namespace sparkprof::agent
