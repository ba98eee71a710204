// A differential flame graph of two stage attempts of one application, for the sparkprof tab's
// diff page (live: the driver's call trees; History Server: the profile stored beside the event
// log). The shape and widths are the `after` attempt's, the colours the normalised change from
// `before` (flamegraph/diff.h); the page is the viewer `sparkprof flamegraph A --diff B` writes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "flamegraph/profile_model.h"

namespace sparkprof::driver {

struct StageAttempt {
  int32_t stage_id = 0;
  int32_t attempt = 0;
};

// The diff page of `before` against `after` (their call trees, weights in nanoseconds). An
// error (kNotFound) when either has no samples.
Result<std::string> RenderStageDiff(const flamegraph::ProfileModel& before, StageAttempt before_id,
                                    const flamegraph::ProfileModel& after, StageAttempt after_id);

// The same from a saved profile's bytes (profile.sparkprof, decompressed): only the two stage
// attempts' samples are kept. An error when the bytes are not a profile or either attempt has no
// samples in it.
Result<std::string> RenderStageDiffFromProfile(std::string_view profile_bytes,
                                               const std::string& source_name,
                                               StageAttempt before_id, StageAttempt after_id);

}  // namespace sparkprof::driver
