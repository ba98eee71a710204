#include "native-agent/sample_ring.h"

#include <gtest/gtest.h>

#include <thread>

namespace sparkprof::agent {
namespace {

TEST(SampleRingTest, RoundsCapacityAndDropsWhenFull) {
  SampleRing ring(5, 4);
  EXPECT_EQ(ring.capacity(), 8u);
  for (int i = 0; i < 8; ++i) {
    SampleRecord* record = ring.TryReserve();
    ASSERT_NE(record, nullptr);
    record->num_frames = i;
    ring.Commit();
  }
  EXPECT_EQ(ring.TryReserve(), nullptr);
  EXPECT_EQ(ring.Size(), 8u);
  ASSERT_NE(ring.Peek(), nullptr);
  EXPECT_EQ(ring.Peek()->num_frames, 0);
  ring.Pop();
  EXPECT_NE(ring.TryReserve(), nullptr);
}

TEST(SampleRingTest, SlotsHoldDepthFramesWithoutOverlap) {
  SampleRing ring(4, 16);
  for (int r = 0; r < 4; ++r) {
    SampleRecord* record = ring.TryReserve();
    ASSERT_NE(record, nullptr);
    record->num_frames = 16;
    for (int f = 0; f < 16; ++f) {
      record->frames[f] = RawFrame{r * 100 + f, reinterpret_cast<const void*>(uintptr_t(r + 1))};
    }
    ring.Commit();
  }
  for (int r = 0; r < 4; ++r) {
    const SampleRecord* record = ring.Peek();
    ASSERT_NE(record, nullptr);
    for (int f = 0; f < 16; ++f) EXPECT_EQ(record->frames[f].bci_or_line, r * 100 + f);
    ring.Pop();
  }
  EXPECT_EQ(ring.Peek(), nullptr);
}

TEST(SampleRingTest, ProducerAndConsumerThreadsSeeEveryCommittedRecordInOrder) {
  SampleRing ring(64, 2);
  constexpr int kRecords = 200'000;
  std::thread producer([&] {
    for (int i = 0; i < kRecords;) {
      SampleRecord* record = ring.TryReserve();
      if (record == nullptr) continue;
      record->num_frames = i;
      record->frames[1].bci_or_line = i * 3;
      ring.Commit();
      ++i;
    }
  });
  int expected = 0;
  while (expected < kRecords) {
    const SampleRecord* record = ring.Peek();
    if (record == nullptr) continue;
    ASSERT_EQ(record->num_frames, expected);
    ASSERT_EQ(record->frames[1].bci_or_line, expected * 3);
    ring.Pop();
    ++expected;
  }
  producer.join();
}

}  // namespace
}  // namespace sparkprof::agent
