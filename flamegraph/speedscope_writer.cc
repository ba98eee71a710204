#include "flamegraph/speedscope_writer.h"

#include <vector>

#include "flamegraph/escaping.h"
#include "flamegraph/frame_names.h"

namespace sparkprof::flamegraph {
void WriteSpeedscope(const ProfileModel& model, const SpeedscopeWriteOptions& options,
                     std::string& out) {
  // speedscope frame index per model frame, assigned in order of first use.
  std::vector<uint32_t> frame_index(model.strings().size(), UINT32_MAX);
  std::vector<FrameId> frames_in_order;
  std::string samples;
  std::string weights;
  model.ForEachStack([&](std::span<const FrameId> frames, Category, uint64_t weight) {
    samples.append(samples.empty() ? "[" : ",[");
    for (size_t i = 0; i < frames.size(); ++i) {
      FrameId frame = frames[i];
      if (frame_index[frame] == UINT32_MAX) {
        frame_index[frame] = static_cast<uint32_t>(frames_in_order.size());
        frames_in_order.push_back(frame);
      }
      if (i > 0) samples.push_back(',');
      AppendDecimal(frame_index[frame], samples);
    }
    samples.push_back(']');
    if (!weights.empty()) weights.push_back(',');
    AppendDecimal(weight, weights);
  });

  out.append("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",");
  out.append("\"exporter\":\"sparkprof\",\"name\":");
  AppendJsonString(options.name, out);
  out.append(",\"activeProfileIndex\":0,\"shared\":{\"frames\":[");
  for (size_t i = 0; i < frames_in_order.size(); ++i) {
    out.append(i == 0 ? "{\"name\":" : ",{\"name\":");
    AppendJsonString(ReadableFrameName(model.FrameName(frames_in_order[i])), out);
    out.push_back('}');
  }
  out.append("]},\"profiles\":[{\"type\":\"sampled\",\"name\":");
  AppendJsonString(options.name, out);
  out.append(",\"unit\":");
  AppendJsonString(model.unit() == WeightUnit::kNanoseconds ? "nanoseconds" : "none", out);
  out.append(",\"startValue\":0,\"endValue\":");
  AppendDecimal(model.total_weight(), out);
  out.append(",\"samples\":[");
  out.append(samples);
  out.append("],\"weights\":[");
  out.append(weights);
  out.append("]}]}\n");
}

}  // namespace sparkprof::flamegraph
