#include "driver-aggregator/python_driver_batch.h"

#include <cmath>
#include <optional>
#include <unordered_map>
#include <vector>

#include "flatbuffers/flatbuffers.h"
#include "native-agent/python_profile.h"
#include "schema/profile_generated.h"

namespace sparkprof::driver {
static_assert(kMaxPythonDriverFileBytes == agent::kMaxPythonProfileBytes);
namespace {

// Samples of one part of a stack: its share of the stack's samples by time, at least 1.
uint64_t SamplesOf(uint64_t part_ns, uint64_t total_ns, uint64_t samples) {
  if (total_ns == 0 || samples == 0) return 0;
  const auto share = static_cast<uint64_t>(std::llround(
      static_cast<double>(samples) * static_cast<double>(part_ns) / static_cast<double>(total_ns)));
  return share > 0 ? share : 1;
}

}  // namespace

Result<std::string> PythonDriverBatch(std::string_view file, int64_t start_epoch_ns,
                                      int64_t end_epoch_ns) {
  if (end_epoch_ns <= start_epoch_ns || start_epoch_ns <= 0) {
    return InvalidArgument("the Python driver's window [" + std::to_string(start_epoch_ns) + ", " +
                           std::to_string(end_epoch_ns) + ") ns is empty or inverted");
  }
  agent::PythonTaskProfile parsed;
  if (std::optional<std::string> error = agent::ParsePythonProfile(file, parsed)) {
    return InvalidArgument("the Python driver's samples: " + *error);
  }
  flatbuffers::FlatBufferBuilder builder(1024 + file.size());
  std::vector<flatbuffers::Offset<flatbuffers::String>> strings;
  std::unordered_map<std::string, uint32_t> index;
  auto intern = [&](std::string name) {
    auto [it, inserted] = index.try_emplace(std::move(name), static_cast<uint32_t>(strings.size()));
    if (inserted) strings.push_back(builder.CreateString(it->first));
    return it->second;
  };
  const uint32_t thread = intern(std::string(kPythonDriverThread));
  const uint32_t root = intern(std::string(kPythonDriverFrame));
  std::vector<flatbuffers::Offset<schema::Stack>> stacks;
  std::vector<flatbuffers::Offset<schema::StackSample>> samples;
  std::vector<uint32_t> frames;
  for (const agent::PythonStackRecord& record : parsed.stacks) {
    frames.assign(1, root);
    for (std::string_view frame : record.frames) {
      frames.push_back(intern(agent::SanitisePythonFrame(frame)));
    }
    const auto stack = static_cast<uint32_t>(stacks.size());
    stacks.push_back(schema::CreateStackDirect(builder, &frames));
    const uint64_t total = record.cpu_ns + record.off_cpu_ns;
    if (record.cpu_ns > 0) {
      samples.push_back(schema::CreateStackSample(
          builder, stack, -1, -1, -1, thread, schema::Category::python,
          SamplesOf(record.cpu_ns, total, record.samples), record.cpu_ns));
    }
    if (record.off_cpu_ns > 0) {
      samples.push_back(schema::CreateStackSample(
          builder, stack, -1, -1, -1, thread, schema::Category::python_off_cpu,
          SamplesOf(record.off_cpu_ns, total, record.samples), record.off_cpu_ns));
    }
  }
  auto batch = schema::CreateBatchDirect(
      builder, 1, "driver", "", static_cast<int32_t>(parsed.worker_pid), start_epoch_ns,
      end_epoch_ns, parsed.interval_ns, "python-driver", &strings, &stacks, &samples);
  schema::FinishBatchBuffer(builder, batch);
  return std::string(reinterpret_cast<const char*>(builder.GetBufferPointer()), builder.GetSize());
}

}  // namespace sparkprof::driver
