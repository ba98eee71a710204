#include "common/radix_sort.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace sparkprof {
namespace {

struct Item {
  uint64_t key = 0;
  int position = 0;  // where it was before sorting: equal keys must keep this order
  std::string payload;
};

std::vector<Item> RandomItems(size_t count, uint64_t key_mask, uint32_t seed) {
  std::mt19937_64 random(seed);
  std::vector<Item> items(count);
  for (size_t i = 0; i < count; ++i) {
    items[i].key = random() & key_mask;
    items[i].position = static_cast<int>(i);
    items[i].payload = std::to_string(i);
  }
  return items;
}

// Keys of every width (one pass, several, all 64 bits; many equal keys), against std::stable_sort.
TEST(RadixSortTest, SortsLikeAStableSortForEveryKeyWidth) {
  for (uint64_t mask : {uint64_t{0}, uint64_t{1}, uint64_t{0x7ff}, uint64_t{0x800},
                        uint64_t{0xfffff}, uint64_t{0x3fffffffff}, ~uint64_t{0}}) {
    for (size_t count : {0, 1, 2, 3, 100, 5000}) {
      std::vector<Item> items = RandomItems(count, mask, static_cast<uint32_t>(count + mask));
      std::vector<Item> expected = items;
      std::stable_sort(expected.begin(), expected.end(),
                       [](const Item& a, const Item& b) { return a.key < b.key; });
      RadixSortByKey(items, [](const Item& item) { return item.key; });
      ASSERT_EQ(items.size(), expected.size());
      for (size_t i = 0; i < items.size(); ++i) {
        ASSERT_EQ(items[i].key, expected[i].key) << "mask " << mask << " count " << count;
        ASSERT_EQ(items[i].position, expected[i].position) << "mask " << mask << " at " << i;
        ASSERT_EQ(items[i].payload, expected[i].payload);
      }
    }
  }
}

TEST(RadixSortTest, KeysCanBeComputedFromSeveralFields) {
  // The phase breakdown's use: time and an order packed into one key, time first.
  struct Change {
    int64_t time_ms;
    int order;
  };
  std::vector<Change> changes = {{5, 1}, {3, 2}, {5, 0}, {0, 1}, {3, 0}, {5, 1}};
  RadixSortByKey(changes, [](const Change& c) {
    return static_cast<uint64_t>(c.time_ms) << 2 | static_cast<uint64_t>(c.order);
  });
  const std::vector<std::pair<int64_t, int>> expected = {{0, 1}, {3, 0}, {3, 2},
                                                         {5, 0}, {5, 1}, {5, 1}};
  ASSERT_EQ(changes.size(), expected.size());
  for (size_t i = 0; i < changes.size(); ++i) {
    EXPECT_EQ(changes[i].time_ms, expected[i].first) << i;
    EXPECT_EQ(changes[i].order, expected[i].second) << i;
  }
}

}  // namespace
}  // namespace sparkprof
