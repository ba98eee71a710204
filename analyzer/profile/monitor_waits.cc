#include "analyzer/profile/monitor_waits.h"

#include <algorithm>
#include <climits>
#include <tuple>

#include "analyzer/profile/stage_profiles.h"

namespace sparkprof::profile {
namespace {

using flamegraph::SaturatingAdd;

// The order of each kept list: most weight first, then by name (reports do not depend on the
// order rows came in).
auto Rank(const MonitorWaiterSite& site) {
  return std::make_tuple(UINT64_MAX - site.wait_ns, UINT64_MAX - site.waits,
                         std::string_view(site.frame), std::string_view(site.application_frame));
}
auto Rank(const MonitorHolderSite& site) {
  return std::make_tuple(UINT64_MAX - site.looks, std::string_view(site.frame),
                         std::string_view(site.application_frame));
}
auto Rank(const MonitorHolderThread& thread) {
  return std::make_tuple(UINT64_MAX - thread.looks, std::string_view(thread.thread));
}
auto Rank(const MonitorTime& monitor) {
  return std::make_tuple(UINT64_MAX - monitor.wait_ns, UINT64_MAX - monitor.waits,
                         std::string_view(monitor.monitor_class));
}

template <typename T>
void SortAndCut(std::vector<T>& items, size_t keep) {
  std::sort(items.begin(), items.end(), [](const T& a, const T& b) { return Rank(a) < Rank(b); });
  if (items.size() > keep) items.resize(keep);
}

// Whether two entries of a kept list are the same site, thread or class; adding one to another.
bool Same(const MonitorWaiterSite& a, const MonitorWaiterSite& b) {
  return a.frame == b.frame && a.application_frame == b.application_frame;
}
bool Same(const MonitorHolderSite& a, const MonitorHolderSite& b) {
  return a.frame == b.frame && a.application_frame == b.application_frame;
}
bool Same(const MonitorHolderThread& a, const MonitorHolderThread& b) {
  return a.thread == b.thread;
}
bool Same(const MonitorTime& a, const MonitorTime& b) { return a.monitor_class == b.monitor_class; }
void AddTo(MonitorWaiterSite& into, const MonitorWaiterSite& from) {
  into.waits = SaturatingAdd(into.waits, from.waits);
  into.wait_ns = SaturatingAdd(into.wait_ns, from.wait_ns);
}
void AddTo(MonitorHolderSite& into, const MonitorHolderSite& from) {
  into.looks = SaturatingAdd(into.looks, from.looks);
}
void AddTo(MonitorHolderThread& into, const MonitorHolderThread& from) {
  into.looks = SaturatingAdd(into.looks, from.looks);
}
void AddTo(MonitorTime& into, const MonitorTime& from);

// Adds each entry of `from` to its match in `into` (appended when none); lists are short.
template <typename T>
void MergeList(std::vector<T>& into, const std::vector<T>& from, size_t keep) {
  for (const T& item : from) {
    auto match = std::find_if(into.begin(), into.end(), [&](const T& x) { return Same(x, item); });
    if (match == into.end()) {
      into.push_back(item);
    } else {
      AddTo(*match, item);
    }
  }
  SortAndCut(into, keep);
}

void AddTo(MonitorTime& into, const MonitorTime& from) {
  into.waits = SaturatingAdd(into.waits, from.waits);
  into.wait_ns = SaturatingAdd(into.wait_ns, from.wait_ns);
  into.holder_looks = SaturatingAdd(into.holder_looks, from.holder_looks);
  MergeList(into.waiters, from.waiters, kMonitorSites);
  MergeList(into.holders, from.holders, kMonitorSites);
  MergeList(into.holder_threads, from.holder_threads, kMonitorSites);
}

// One class's sums over its keys, by interned name ids, before the lists are cut.
struct ClassSums {
  MonitorTime time;
  std::map<std::pair<uint32_t, uint32_t>, MonitorWaiterSite> waiters;
  std::map<std::pair<uint32_t, uint32_t>, MonitorHolderSite> holders;
  std::map<uint32_t, MonitorHolderThread> threads;
};

template <typename Map>
auto ValuesOf(const Map& map) {
  std::vector<typename Map::mapped_type> values;
  values.reserve(map.size());
  for (const auto& [key, value] : map) values.push_back(value);
  return values;
}

// An array class as the JVM names it ("[I", "[[Ljava.lang.String;") as Java code writes it
// ("int[]", "java.lang.String[][]"); any other name as it is.
std::string ReadableClassName(std::string_view name) {
  size_t dimensions = 0;
  while (dimensions < name.size() && name[dimensions] == '[') ++dimensions;
  if (dimensions == 0) return std::string(name);
  const std::string_view element = name.substr(dimensions);
  std::string readable;
  if (element.size() > 2 && element.front() == 'L' && element.back() == ';') {
    readable = std::string(element.substr(1, element.size() - 2));
  } else if (element.size() == 1) {
    constexpr std::string_view kCodes = "BCDFIJSZ";
    constexpr std::string_view kPrimitives[] = {"byte", "char", "double", "float",
                                                "int",  "long", "short",  "boolean"};
    const size_t code = kCodes.find(element.front());
    if (code == std::string_view::npos) return std::string(name);
    readable = std::string(kPrimitives[code]);
  } else {
    return std::string(name);
  }
  for (size_t i = 0; i < dimensions; ++i) readable += "[]";
  return readable;
}

}  // namespace

void StageMonitors::Merge(const StageMonitors& other) {
  waits = SaturatingAdd(waits, other.waits);
  wait_ns = SaturatingAdd(wait_ns, other.wait_ns);
  holder_looks = SaturatingAdd(holder_looks, other.holder_looks);
  MergeList(classes, other.classes, kMonitorClassesPerStage);
}

void MonitorWaitTable::Receive(void* context, const flamegraph::MonitorWaitRow& row) {
  static_cast<MonitorWaitTable*>(context)->Add(row);
}

size_t MonitorWaitTable::KeyHash::operator()(const Key& key) const {
  uint64_t hash = (static_cast<uint64_t>(static_cast<uint32_t>(key.stage_id)) << 32) |
                  static_cast<uint32_t>(key.stage_attempt);
  for (uint32_t id : {key.monitor_class, key.waiter_site, key.waiter_application, key.holder_site,
                      key.holder_application, key.holder_thread}) {
    hash = (hash ^ id) * 0x9E3779B97F4A7C15ULL;
  }
  return std::hash<uint64_t>()(hash);
}

uint32_t MonitorWaitTable::NameId(std::string_view name, bool add) {
  const std::string cut(name.substr(0, std::min(name.size(), kMaxMonitorNameBytes)));
  if (auto found = name_ids_.find(cut); found != name_ids_.end()) return found->second;
  if (!add) return UINT32_MAX;
  const auto id = static_cast<uint32_t>(names_.size());
  names_.push_back(cut);
  name_ids_.emplace(cut, id);
  return id;
}

void MonitorWaitTable::Add(const flamegraph::MonitorWaitRow& row) {
  if (row.waits == 0 && row.wait_ns == 0) return;
  const StackSite waiter = SiteOfStack(row.waiter_frames);
  const StackSite holder = SiteOfStack(row.holder_frames);
  const std::string monitor_class = ReadableClassName(row.monitor_class);
  const std::string_view names[] = {monitor_class,
                                    waiter.frame,
                                    waiter.application_frame,
                                    holder.frame,
                                    holder.application_frame,
                                    row.holder_thread};
  // Names are added only for a key that is kept: past the limit, nothing grows.
  uint32_t ids[std::size(names)];
  bool known = true;
  for (size_t i = 0; i < std::size(names); ++i) {
    ids[i] = NameId(names[i], false);
    known = known && ids[i] != UINT32_MAX;
  }
  Key key{row.stage_id, row.stage_attempt, ids[0], ids[1], ids[2], ids[3], ids[4], ids[5]};
  auto found = known ? keys_.find(key) : keys_.end();
  if (found == keys_.end()) {
    if (keys_.size() >= max_keys_) {
      ++rows_left_out_;
      wait_ns_left_out_ = SaturatingAdd(wait_ns_left_out_, row.wait_ns);
      return;
    }
    for (size_t i = 0; i < std::size(names); ++i) ids[i] = NameId(names[i], true);
    key = Key{row.stage_id, row.stage_attempt, ids[0], ids[1], ids[2], ids[3], ids[4], ids[5]};
    found = keys_.emplace(key, Sums{}).first;
  }
  Sums& sums = found->second;
  sums.waits = SaturatingAdd(sums.waits, row.waits);
  sums.wait_ns = SaturatingAdd(sums.wait_ns, row.wait_ns);
  if (row.holder_looked) sums.looks = SaturatingAdd(sums.looks, row.waits);
}

std::map<std::pair<int32_t, int32_t>, StageMonitors> MonitorWaitTable::Finish() const {
  std::map<std::pair<int32_t, int32_t>, std::map<uint32_t, ClassSums>> by_stage;
  for (const auto& [key, sums] : keys_) {
    ClassSums& monitor = by_stage[{key.stage_id, key.stage_attempt}][key.monitor_class];
    MonitorTime& time = monitor.time;
    time.waits = SaturatingAdd(time.waits, sums.waits);
    time.wait_ns = SaturatingAdd(time.wait_ns, sums.wait_ns);
    time.holder_looks = SaturatingAdd(time.holder_looks, sums.looks);
    if (key.waiter_site != 0) {
      MonitorWaiterSite& site = monitor.waiters[{key.waiter_site, key.waiter_application}];
      AddTo(site, {"", "", sums.waits, sums.wait_ns});
    }
    if (key.holder_site != 0 && sums.looks > 0) {
      MonitorHolderSite& site = monitor.holders[{key.holder_site, key.holder_application}];
      AddTo(site, {"", "", sums.looks});
    }
    if (key.holder_thread != 0 && sums.looks > 0) {
      AddTo(monitor.threads[key.holder_thread], {"", sums.looks});
    }
  }
  std::map<std::pair<int32_t, int32_t>, StageMonitors> stages;
  for (auto& [stage_key, classes] : by_stage) {
    StageMonitors& stage = stages[stage_key];
    for (auto& [class_id, monitor] : classes) {
      MonitorTime time = std::move(monitor.time);
      time.monitor_class = names_[class_id];
      for (auto& [ids, site] : monitor.waiters) {
        site.frame = names_[ids.first];
        site.application_frame = names_[ids.second];
      }
      for (auto& [ids, site] : monitor.holders) {
        site.frame = names_[ids.first];
        site.application_frame = names_[ids.second];
      }
      for (auto& [id, thread] : monitor.threads) thread.thread = names_[id];
      time.waiters = ValuesOf(monitor.waiters);
      time.holders = ValuesOf(monitor.holders);
      time.holder_threads = ValuesOf(monitor.threads);
      SortAndCut(time.waiters, kMonitorSites);
      SortAndCut(time.holders, kMonitorSites);
      SortAndCut(time.holder_threads, kMonitorSites);
      stage.waits = SaturatingAdd(stage.waits, time.waits);
      stage.wait_ns = SaturatingAdd(stage.wait_ns, time.wait_ns);
      stage.holder_looks = SaturatingAdd(stage.holder_looks, time.holder_looks);
      stage.classes.push_back(std::move(time));
    }
    SortAndCut(stage.classes, kMonitorClassesPerStage);
  }
  return stages;
}

}  // namespace sparkprof::profile
