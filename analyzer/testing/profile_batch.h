// Test helper: one saved-profile batch (size-prefixed flatbuffers `Batch`, as the driver writes
// *.sparkprof) built from frames by name -- stack samples and monitor-wait rows -- with the
// strings and stacks they name. Tests that link it link sparkprof::schema.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "schema/profile_generated.h"

namespace sparkprof::test_util {

struct MonitorWaitSpec {
  int32_t stage = 0;
  int32_t stage_attempt = 0;
  std::string monitor_class;
  std::vector<std::string> waiter;  // root first; empty: not taken (-1)
  std::vector<std::string> holder;  // root first; used only when holder_looked
  bool holder_looked = false;
  std::string holder_thread;  // "": unknown (-1)
  uint64_t waits = 0;
  uint64_t wait_ms = 0;
};

class ProfileBatchBuilder {
 public:
  explicit ProfileBatchBuilder(std::string mode = "cpu+wall", std::string executor = "1",
                               int64_t interval_ns = 10'000'000)
      : mode_(std::move(mode)), executor_(std::move(executor)), interval_ns_(interval_ns) {}

  // Task-tagged samples (task 1) of `ns` in one stack.
  ProfileBatchBuilder& Sample(int32_t stage, int32_t stage_attempt,
                              const std::vector<std::string>& frames, schema::Category category,
                              uint64_t ns) {
    samples_.push_back({stage, stage_attempt, StackOf(frames), category, ns});
    return *this;
  }
  ProfileBatchBuilder& MonitorWait(const MonitorWaitSpec& spec) {
    monitors_.push_back(spec);
    return *this;
  }

  std::string Bytes() {
    flatbuffers::FlatBufferBuilder builder;
    std::vector<flatbuffers::Offset<schema::MonitorWait>> monitor_rows;
    for (const MonitorWaitSpec& spec : monitors_) {
      const int32_t waiter = spec.waiter.empty() ? -1 : static_cast<int32_t>(StackOf(spec.waiter));
      const int32_t holder = spec.holder_looked ? static_cast<int32_t>(StackOf(spec.holder)) : -1;
      const int32_t thread =
          spec.holder_thread.empty() ? -1 : static_cast<int32_t>(StringOf(spec.holder_thread));
      monitor_rows.push_back(schema::CreateMonitorWait(
          builder, spec.stage, spec.stage_attempt, StringOf(spec.monitor_class), waiter, holder,
          thread, spec.waits, spec.wait_ms * 1'000'000));
    }
    std::vector<flatbuffers::Offset<schema::StackSample>> sample_rows;
    for (const SampleRow& row : samples_) {
      sample_rows.push_back(schema::CreateStackSample(
          builder, row.stack, row.stage, row.stage_attempt, 1, StringOf("Executor task launch"),
          row.category, row.ns / static_cast<uint64_t>(interval_ns_), row.ns));
    }
    std::vector<flatbuffers::Offset<schema::Stack>> stacks;
    for (const std::vector<uint32_t>& frames : stacks_) {
      stacks.push_back(schema::CreateStackDirect(builder, &frames));
    }
    std::vector<flatbuffers::Offset<flatbuffers::String>> strings;
    for (const std::string& text : strings_) strings.push_back(builder.CreateString(text));
    auto batch = schema::CreateBatchDirect(
        builder, 1, executor_.c_str(), "host", 1, 0, 1, interval_ns_, mode_.c_str(), &strings,
        &stacks, &sample_rows, nullptr, nullptr, 0, nullptr, 0, 0, &monitor_rows);
    schema::FinishSizePrefixedBatchBuffer(builder, batch);
    return std::string(reinterpret_cast<const char*>(builder.GetBufferPointer()),
                       builder.GetSize());
  }

 private:
  struct SampleRow {
    int32_t stage;
    int32_t stage_attempt;
    uint32_t stack;
    schema::Category category;
    uint64_t ns;
  };

  uint32_t StringOf(const std::string& text) {
    for (size_t i = 0; i < strings_.size(); ++i) {
      if (strings_[i] == text) return static_cast<uint32_t>(i);
    }
    strings_.push_back(text);
    return static_cast<uint32_t>(strings_.size() - 1);
  }
  uint32_t StackOf(const std::vector<std::string>& frames) {
    std::vector<uint32_t> indices;
    for (const std::string& frame : frames) indices.push_back(StringOf(frame));
    stacks_.push_back(std::move(indices));
    return static_cast<uint32_t>(stacks_.size() - 1);
  }

  std::string mode_;
  std::string executor_;
  int64_t interval_ns_;
  std::vector<std::string> strings_;
  std::vector<std::vector<uint32_t>> stacks_;
  std::vector<SampleRow> samples_;
  std::vector<MonitorWaitSpec> monitors_;
};

}  // namespace sparkprof::test_util
