// Sample ring bench (issue 31): the agent's own SampleRing (native-agent/sample_ring.h) against
// boost::lockfree::spsc_queue with a compile-time capacity, in the same run, for the way the
// agent uses a ring: a thread's signal handler puts one sample at a time, the drain thread takes
// them all a few milliseconds later.
//
//   * SampleRing: TryReserve() a slot, the stack walk writes straight into it, Commit();
//     the drain Peek()s the record in place and Pop()s it.
//   * spsc_queue<FixedRecord<Depth>, capacity<Slots>>: its push() copy-constructs a T, so the
//     walk writes into a record on the handler's stack and push() copies the whole record
//     (sizeof(T), whatever the walk found); the drain reads it in place through front() and pop()s.
//
// The "walk" is an out-of-line function that writes `frames` frames (AsyncGetCallTrace is an
// out-of-line call into libjvm too); the drain reads every frame a record holds, as it does to
// resolve them. One round: `batch` puts, then every record taken. Put and take are timed
// separately with CLOCK_MONOTONIC around each batch (the clock reads are in both numbers alike).
// Each configuration runs `repeats` times, the two rings interleaved; the median is printed.
//
// Usage: sample_ring_bench [rounds=N] [batch=N] [repeats=N]
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <boost/lockfree/spsc_queue.hpp>

#include "native-agent/sample_ring.h"

namespace {

using sparkprof::agent::RawFrame;
using sparkprof::agent::SampleRecord;
using sparkprof::agent::SampleRing;
using sparkprof::agent::TaskTag;

constexpr uint32_t kSlots = 32;  // the `ring` option's default

// SampleRecord with `Depth` frames fixed at compile time, as spsc_queue needs its T.
template <int Depth>
struct FixedRecord {
  TaskTag tag;
  int64_t weight_ns;
  int64_t off_cpu_ns;
  int64_t cpu_starved_ns;
  int32_t num_frames;
  int32_t partial_walk_error;
  int32_t jvm_thread_state;
  int32_t idle_before_us;
  RawFrame frames[Depth];
};
static_assert(offsetof(FixedRecord<64>, frames) == offsetof(SampleRecord, frames));

volatile uint64_t g_sink = 0;

// Stands in for AsyncGetCallTrace: writes `frames` frames (at most `depth`), returns the count.
__attribute__((noinline)) int Walk(RawFrame* out, int depth, int frames, uint64_t seed) {
  int n = frames < depth ? frames : depth;
  for (int f = 0; f < n; ++f) {
    out[f].bci_or_line = f;
    out[f].method_id = reinterpret_cast<const void*>(seed + static_cast<uint64_t>(f) * 8);
  }
  return n;
}

template <typename Record>
inline void FillHeader(Record* record, uint64_t seed) {
  record->tag = TaskTag{1, 0, static_cast<int64_t>(seed)};
  record->weight_ns = 10'000'000;
  record->off_cpu_ns = 0;
  record->cpu_starved_ns = 0;
  record->partial_walk_error = 0;
  record->jvm_thread_state = -1;
  record->idle_before_us = 0;
}

template <typename Record>
inline uint64_t Read(const Record& record) {
  uint64_t sum = static_cast<uint64_t>(record.tag.task_attempt_id) + record.weight_ns;
  for (int f = 0; f < record.num_frames; ++f)
    sum += reinterpret_cast<uintptr_t>(record.frames[f].method_id);
  return sum;
}

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

struct Timing {
  double put_ns = 0;   // per sample
  double take_ns = 0;  // per sample
};

// `rounds` x (`batch` x put(seed), then take_all() returning a checksum of what it read).
template <typename Put, typename TakeAll>
Timing Measure(int rounds, int batch, Put put, TakeAll take_all) {
  int64_t put_ns = 0, take_ns = 0;
  uint64_t seed = 0, sum = 0;
  for (int r = 0; r < rounds; ++r) {
    int64_t t0 = NowNs();
    for (int i = 0; i < batch; ++i) put(++seed);
    int64_t t1 = NowNs();
    sum += take_all();
    int64_t t2 = NowNs();
    put_ns += t1 - t0;
    take_ns += t2 - t1;
  }
  g_sink = g_sink + sum;
  double samples = static_cast<double>(rounds) * batch;
  return {static_cast<double>(put_ns) / samples, static_cast<double>(take_ns) / samples};
}

Timing RunOwnRing(int depth, int frames, int rounds, int batch) {
  SampleRing ring(kSlots, depth);
  return Measure(
      rounds, batch,
      [&](uint64_t seed) {
        SampleRecord* record = ring.TryReserve();
        if (record == nullptr) std::abort();
        FillHeader(record, seed);
        record->num_frames = Walk(record->frames, depth, frames, seed);
        ring.Commit();
      },
      [&] {
        uint64_t sum = 0;
        while (const SampleRecord* record = ring.Peek()) {
          sum += Read(*record);
          ring.Pop();
        }
        return sum;
      });
}

template <int Depth>
Timing RunBoostQueue(int frames, int rounds, int batch) {
  using Record = FixedRecord<Depth>;
  auto queue =
      std::make_unique<boost::lockfree::spsc_queue<Record, boost::lockfree::capacity<kSlots>>>();
  return Measure(
      rounds, batch,
      [&](uint64_t seed) {
        Record record;  // on the signal handler's stack
        FillHeader(&record, seed);
        record.num_frames = Walk(record.frames, Depth, frames, seed);
        if (!queue->push(record)) std::abort();
      },
      [&] {
        uint64_t sum = 0;
        while (queue->read_available() > 0) {
          sum += Read(queue->front());
          queue->pop();
        }
        return sum;
      });
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

template <int Depth>
void Compare(int frames, int rounds, int batch, int repeats) {
  std::vector<double> own_put, own_take, boost_put, boost_take;
  for (int i = 0; i < repeats; ++i) {
    Timing own = RunOwnRing(Depth, frames, rounds, batch);
    Timing boost = RunBoostQueue<Depth>(frames, rounds, batch);
    own_put.push_back(own.put_ns);
    own_take.push_back(own.take_ns);
    boost_put.push_back(boost.put_ns);
    boost_take.push_back(boost.take_ns);
  }
  using Queue = boost::lockfree::spsc_queue<FixedRecord<Depth>, boost::lockfree::capacity<kSlots>>;
  double own_put_ns = Median(own_put), own_take_ns = Median(own_take);
  double boost_put_ns = Median(boost_put), boost_take_ns = Median(boost_take);
  std::printf(
      "depth=%-4d frames=%-4d | put ns: own %6.1f boost %6.1f (%.2fx) | take ns: own %6.1f "
      "boost %6.1f (%.2fx) | put+take %.2fx | bytes/ring: own %zu boost %zu (%.2fx)\n",
      Depth, frames, own_put_ns, boost_put_ns, boost_put_ns / own_put_ns, own_take_ns,
      boost_take_ns, boost_take_ns / own_take_ns,
      (boost_put_ns + boost_take_ns) / (own_put_ns + own_take_ns),
      SampleRing::MemoryBytesFor(kSlots, Depth), sizeof(Queue),
      static_cast<double>(sizeof(Queue)) /
          static_cast<double>(SampleRing::MemoryBytesFor(kSlots, Depth)));
}

int Arg(int argc, char** argv, const char* name, int fallback) {
  std::string prefix = std::string(name) + "=";
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0)
      return static_cast<int>(std::strtol(argv[i] + prefix.size(), nullptr, 10));
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = Arg(argc, argv, "rounds", 200'000);
  int batch = Arg(argc, argv, "batch", 8);
  int repeats = Arg(argc, argv, "repeats", 5);
  if (batch < 1 || batch > static_cast<int>(kSlots) || rounds < 1 || repeats < 1) {
    std::fprintf(stderr, "usage: sample_ring_bench [rounds=N] [batch=1..%u] [repeats=N]\n", kSlots);
    return 2;
  }
  std::printf(
      "ring=%u slots, %d rounds of %d puts then take-all, median of %d (own = SampleRing, "
      "boost = spsc_queue<FixedRecord<depth>, capacity<%u>>)\n",
      kSlots, rounds, batch, repeats, kSlots);
  Compare<64>(20, rounds, batch, repeats);        // default depth, a typical Spark stack
  Compare<64>(64, rounds, batch, repeats);        // default depth, cut stacks
  Compare<256>(40, rounds, batch, repeats);       // deeper stacks asked for
  Compare<2048>(40, rounds / 4, batch, repeats);  // what a runtime depth= would force on T
  return 0;
}
