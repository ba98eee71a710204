// Writes a ProfileModel as a speedscope "sampled" profile
// (https://www.speedscope.app/file-format-schema.json): one shared frame list and one sample per
// (stack, category) with its weight.
#pragma once

#include <string>

#include "flamegraph/profile_model.h"

namespace sparkprof::flamegraph {

struct SpeedscopeWriteOptions {
  std::string name = "sparkprof profile";
};

void WriteSpeedscope(const ProfileModel& model, const SpeedscopeWriteOptions& options,
                     std::string& out);

}  // namespace sparkprof::flamegraph
