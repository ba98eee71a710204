#include "driver-aggregator/stage_call_tree.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <random>

namespace sparkprof::driver {
namespace {

using flamegraph::FrameId;
using flamegraph::NodeId;

struct HashSeeds {
  uint64_t low;
  uint64_t high;
};

// Per process, so which stacks collide cannot be known in advance.
const HashSeeds& Seeds() {
  static const HashSeeds seeds = [] {
    uint64_t entropy =
        static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    try {
      std::random_device device;
      entropy ^= (static_cast<uint64_t>(device()) << 32) | device();
    } catch (...) {
      // No entropy source in this sandbox: the clock and an address stand in.
      entropy ^= reinterpret_cast<uintptr_t>(&entropy);
    }
    std::mt19937_64 generator(entropy);
    return HashSeeds{generator(), generator()};
  }();
  return seeds;
}

// MurmurHash3's 64-bit finaliser: every input bit reaches every output bit.
uint64_t Finalise(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

// Eight lanes over the frame ids, two ids to a word: the words of each group of four go to the
// lane pairs (a, b), (c, d), (e, f), (g, h) in turn, and each word into both lanes of its pair
// with different operations, so the low and high halves of the result are independent functions
// of every word; eight short multiply chains (the hash is bound by their latency, not by the
// multiplier). Finalised together with the depth. `high` is never 0 (0 marks an empty slot).
void HashStack(std::span<const FrameId> frames, uint64_t& low, uint64_t& high) {
  constexpr uint64_t kMultiplierA = 0x9e3779b97f4a7c15ull;
  constexpr uint64_t kMultiplierB = 0xd6e8feb86659fd93ull;
  constexpr uint64_t kMultiplierC = 0xbf58476d1ce4e5b9ull;
  constexpr uint64_t kMultiplierD = 0x94d049bb133111ebull;
  const HashSeeds& seeds = Seeds();
  uint64_t a = seeds.low;
  uint64_t b = seeds.high;
  uint64_t c = ~seeds.low;
  uint64_t d = ~seeds.high;
  uint64_t e = std::rotl(seeds.low, 32);
  uint64_t f = std::rotl(seeds.high, 32);
  uint64_t g = ~e;
  uint64_t h = ~f;
  const FrameId* frame = frames.data();
  size_t left = frames.size();
  auto word = [](const FrameId* pair) { return pair[0] | (static_cast<uint64_t>(pair[1]) << 32); };
  for (; left >= 8; left -= 8, frame += 8) {
    uint64_t first = word(frame);
    uint64_t second = word(frame + 2);
    uint64_t third = word(frame + 4);
    uint64_t fourth = word(frame + 6);
    a = std::rotl((a ^ first) * kMultiplierA, 27);
    b = std::rotl((b + first) * kMultiplierB, 31);
    c = std::rotl((c ^ second) * kMultiplierC, 29);
    d = std::rotl((d + second) * kMultiplierD, 23);
    e = std::rotl((e ^ third) * kMultiplierA, 25);
    f = std::rotl((f + third) * kMultiplierB, 33);
    g = std::rotl((g ^ fourth) * kMultiplierC, 21);
    h = std::rotl((h + fourth) * kMultiplierD, 35);
  }
  for (; left >= 4; left -= 4, frame += 4) {
    uint64_t first = word(frame);
    uint64_t second = word(frame + 2);
    a = std::rotl((a ^ first) * kMultiplierA, 27);
    b = std::rotl((b + first) * kMultiplierB, 31);
    c = std::rotl((c ^ second) * kMultiplierC, 29);
    d = std::rotl((d + second) * kMultiplierD, 23);
  }
  for (; left > 0; --left, ++frame) {
    a = std::rotl((a ^ *frame) * kMultiplierA, 27);
    b = std::rotl((b + *frame) * kMultiplierB, 31);
  }
  low = Finalise(a ^ std::rotl(c, 13) ^ std::rotl(e, 29) ^ std::rotl(g, 41) ^ frames.size());
  high =
      Finalise(b + std::rotl(d, 7) + std::rotl(f, 19) + std::rotl(h, 37) + std::rotl(low, 17)) | 1;
}

// Slot of a (node, category) key in the weight sums: one multiply, the product's top bits.
size_t PendingSlotOf(uint64_t key, size_t capacity) {
  return static_cast<size_t>((key * 0x9e3779b97f4a7c15ull) >> (64 - std::countr_zero(capacity)));
}

}  // namespace

StageCallTree::StageCallTree(size_t max_nodes) : max_nodes_(max_nodes) {}

void StageCallTree::GrowStacks() {
  std::vector<StackSlot> old = std::move(stacks_);
  size_t capacity = old.empty() ? 256 : old.size() * 2;
  stacks_.assign(capacity, StackSlot{});
  size_t mask = capacity - 1;
  for (const StackSlot& slot : old) {
    if (slot.hash_high == 0) continue;
    size_t i = slot.hash_low & mask;
    while (stacks_[i].hash_high != 0) i = (i + 1) & mask;
    stacks_[i] = slot;
  }
}

StageCallTree::StackKey StageCallTree::KeyOf(std::span<const FrameId> frames) {
  StackKey key;
  HashStack(frames, key.low, key.high);
  key.leaf = frames.empty() ? 0 : frames.back();
  return key;
}

bool StageCallTree::Find(const StackKey& key, NodeId& node) const {
  if (stacks_.empty()) return false;
  size_t mask = stacks_.size() - 1;
  for (size_t i = key.low & mask; stacks_[i].hash_high != 0; i = (i + 1) & mask) {
    const StackSlot& slot = stacks_[i];
    if (slot.hash_low == key.low && slot.hash_high == key.high && slot.leaf == key.leaf) {
      node = slot.node;
      return true;
    }
  }
  return false;
}

NodeId StageCallTree::FindOrInsert(std::span<const FrameId> frames, const StackKey& key) {
  if ((stack_count_ + 1) * 4 > stacks_.size() * 3) GrowStacks();
  size_t mask = stacks_.size() - 1;
  size_t i = key.low & mask;
  for (; stacks_[i].hash_high != 0; i = (i + 1) & mask) {
    StackSlot& slot = stacks_[i];
    if (slot.hash_low == key.low && slot.hash_high == key.high && slot.leaf == key.leaf) {
      return slot.node;
    }
  }
  NodeId node = model_.FindOrInsertPath(frames, max_nodes_);
  if (node == flamegraph::kNoNode) {
    // A stack that did not fit never will: every node added since takes room, and at most as
    // much of what the stack misses. Folded stacks are remembered up to a quarter of the node
    // cap (a full tree fed ever new stacks must not grow this table without bound); past it they
    // take the slow path.
    if (folded_count_ >= max_nodes_ / 4) return node;
    ++folded_count_;
  }
  stacks_[i] = StackSlot{key.low, key.high, node, key.leaf};
  ++stack_count_;
  return node;
}

NodeId StageCallTree::OverflowNode() {
  if (overflow_node_ == flamegraph::kNoNode) {
    FrameId overflow = model_.InternFrame(kOverflowFrame);
    overflow_node_ = model_.FindOrInsertPath(std::span(&overflow, 1));
  }
  return overflow_node_;
}

void StageCallTree::GrowPending() {
  std::vector<PendingSlot> old = std::move(pending_);
  size_t capacity = old.empty() ? 256 : old.size() * 2;
  pending_.assign(capacity, PendingSlot{});
  size_t mask = capacity - 1;
  for (const PendingSlot& slot : old) {
    if (slot.key == 0) continue;
    size_t i = PendingSlotOf(slot.key, capacity);
    while (pending_[i].key != 0) i = (i + 1) & mask;
    pending_[i] = slot;
  }
}

void StageCallTree::AddWeight(NodeId node, Category category, uint64_t weight) {
  if (weight == 0) return;
  if (pending_count_ >= kMaxPendingWeights) FlushPending();
  if ((pending_count_ + 1) * 4 > pending_.size() * 3) GrowPending();
  uint64_t key = static_cast<uint64_t>(node) * kCategoryCount +
                 static_cast<uint64_t>(CategoryIndex(category)) + 1;
  size_t mask = pending_.size() - 1;
  for (size_t i = PendingSlotOf(key, pending_.size());; i = (i + 1) & mask) {
    PendingSlot& slot = pending_[i];
    if (slot.key == key) {
      slot.weight = flamegraph::SaturatingAdd(slot.weight, weight);
      return;
    }
    if (slot.key == 0) {
      slot = PendingSlot{key, weight};
      ++pending_count_;
      return;
    }
  }
}

void StageCallTree::FlushPending() {
  for (const PendingSlot& slot : pending_) {
    if (slot.key == 0) continue;
    uint64_t value = slot.key - 1;
    model_.AddWeight(static_cast<NodeId>(value / kCategoryCount),
                     static_cast<Category>(value % kCategoryCount), slot.weight);
  }
  // Released, not kept: a stage is mostly read once, when it completes.
  std::vector<PendingSlot>().swap(pending_);
  pending_count_ = 0;
}

const flamegraph::ProfileModel& StageCallTree::model() {
  if (pending_count_ > 0) FlushPending();
  return model_;
}

}  // namespace sparkprof::driver
