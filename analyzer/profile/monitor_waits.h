// The monitors task threads waited to enter (the agent's Batch.monitor_waits: JVMTI contended
// monitor entry, timed exactly; issue 28, lock contention's monitor and its holders): per stage
// attempt and monitor class, the waits and their time, where the waiters waited and where the
// monitor's owner was when the agent looked.
//
// Definitions (docs/report-schema.md, `stages[].profile.monitors`):
//   * a stack's site is what StageProfile's `sites` call one (SiteOfStack): the innermost frame
//     outside the JDK, and the innermost application frame. For a waiter that is the method
//     holding the synchronized block, or the synchronized method (a JDK method, such as
//     Hashtable.get, gives way to its caller outside the JDK); for the owner, the code it ran
//     while it held the monitor.
//   * a look: one wait whose owner's stack the agent took as the wait began (at most about once a
//     second per JVM, docs/agent.md); a holder site's looks say how often the owner was seen
//     there, and its threads' looks which thread owned the monitor (the agent names the owner
//     only at a look).
//
// Class names of arrays read as Java writes them ("[I" is "int[]", "[Ljava.lang.Object;" is
// "java.lang.Object[]").
//
// Gathered while a profile is read, bounded: at most `max_keys` distinct (stage attempt, class,
// waiter site, holder site, owner's thread) keys over the application (docs/limits.md), each name
// cut at kMaxMonitorNameBytes; rows that would add a key past the limit are counted, never kept,
// and named as a problem by the caller.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "flamegraph/profile_file_reader.h"

namespace sparkprof::profile {

inline constexpr size_t kMonitorSites = 3;             // waiter and holder sites, owner threads
inline constexpr size_t kMonitorClassesPerStage = 10;  // classes kept per stage attempt
inline constexpr size_t kMaxMonitorNameBytes = 512;    // a class, frame or thread name is cut

struct MonitorWaiterSite {
  std::string frame;              // the site
  std::string application_frame;  // the innermost application frame ("" when none)
  uint64_t waits = 0;
  uint64_t wait_ns = 0;
};

struct MonitorHolderSite {
  std::string frame;
  std::string application_frame;
  uint64_t looks = 0;
};

struct MonitorHolderThread {
  std::string thread;  // the owner's (normalised) thread name
  uint64_t looks = 0;  // looks that found this thread the owner
};

struct MonitorTime {
  std::string monitor_class;  // the locked object's class ("java.lang.Class": a static method's)
  uint64_t waits = 0;
  uint64_t wait_ns = 0;
  uint64_t holder_looks = 0;                        // waits whose owner's stack was taken
  std::vector<MonitorWaiterSite> waiters;           // most wait first (kMonitorSites)
  std::vector<MonitorHolderSite> holders;           // most looks first (kMonitorSites)
  std::vector<MonitorHolderThread> holder_threads;  // most looks first (kMonitorSites)

  uint64_t mean_wait_ns() const { return waits > 0 ? wait_ns / waits : 0; }
};

// One stage attempt's monitors (or, through StageProfile::Combined, a stage's).
struct StageMonitors {
  uint64_t waits = 0;  // every class, those past kMonitorClassesPerStage included
  uint64_t wait_ns = 0;
  uint64_t holder_looks = 0;
  std::vector<MonitorTime> classes;  // most wait first (kMonitorClassesPerStage)

  bool empty() const { return waits == 0 && wait_ns == 0 && classes.empty(); }
  // Adds another attempt's monitors: classes by name, sites by frame, threads by name; the kept
  // lists are cut again to their bounds.
  void Merge(const StageMonitors& other);
};

class MonitorWaitTable {
 public:
  explicit MonitorWaitTable(size_t max_keys) : max_keys_(max_keys) {}

  // For ProfileFileReadOptions::monitor_waits (context: the table).
  static void Receive(void* context, const flamegraph::MonitorWaitRow& row);
  void Add(const flamegraph::MonitorWaitRow& row);

  // Per stage attempt (stage id, attempt; stage -1 for rows outside a task), its monitors.
  std::map<std::pair<int32_t, int32_t>, StageMonitors> Finish() const;

  size_t max_keys() const { return max_keys_; }
  uint64_t rows_left_out() const { return rows_left_out_; }
  uint64_t wait_ns_left_out() const { return wait_ns_left_out_; }

 private:
  struct Key {
    int32_t stage_id;
    int32_t stage_attempt;
    uint32_t monitor_class;  // ids into names_; 0 is ""
    uint32_t waiter_site;
    uint32_t waiter_application;
    uint32_t holder_site;
    uint32_t holder_application;
    uint32_t holder_thread;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& key) const;
  };
  struct Sums {
    uint64_t waits = 0;
    uint64_t wait_ns = 0;
    uint64_t looks = 0;
  };

  // The id of `name` cut at kMaxMonitorNameBytes; with `add` false, UINT32_MAX when not known.
  uint32_t NameId(std::string_view name, bool add);

  size_t max_keys_;
  std::vector<std::string> names_{""};
  std::unordered_map<std::string, uint32_t> name_ids_{{"", 0}};
  std::unordered_map<Key, Sums, KeyHash> keys_;
  uint64_t rows_left_out_ = 0;
  uint64_t wait_ns_left_out_ = 0;
};

}  // namespace sparkprof::profile
