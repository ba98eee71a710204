// `--fix broadcast`: the sort-merge joins of a run that a broadcast hash join could replace, read
// from the SQL plans (analyzer/model/sql_plans.h), with the stages that ran each part.
//
// A join qualifies when it is a SortMergeJoin or ShuffledHashJoin with a shuffle exchange below
// each input, the smaller input's "data size" (rows as Spark holds them in memory: what the
// broadcast would hold) is at most `max_small_bytes` and at most 1/8 of the other's, and the join
// type can broadcast that side (the same test as the broadcast-join-missed rule).
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/model/application_model.h"

namespace sparkprof::whatif {

struct BroadcastCandidate {
  int64_t execution_id = -1;
  int32_t join_node = -1;
  int64_t small_bytes = 0;
  int64_t large_bytes = 0;
  int64_t sort_ms = 0;                    // "sort time" of the Sorts between join and exchanges
  std::vector<int32_t> large_map_stages;  // wrote the large side's shuffle
  std::vector<int32_t> small_map_stages;  // wrote the small side's shuffle
  std::vector<int32_t> join_stages;       // read both shuffles and joined
};

// Joins the largest broadcast considered fits in: 256 MiB (what the rule also allows).
inline constexpr int64_t kMaxBroadcastBytes = 256ll << 20;

std::vector<BroadcastCandidate> FindBroadcastCandidates(const model::ApplicationModel& model,
                                                        int64_t max_small_bytes);

}  // namespace sparkprof::whatif
