// The Python driver program's samples as a profile batch. The driver's Python sampler
// (spark-plugin/src/main/python/sparkprof_driver.py) hands the driver plugin one file per flush
// window over Py4J (io.sparkprof.PythonDriverProfiling); this turns it into a Batch of executor
// "driver", outside any task, covering that window, so it joins the profile as the driver JVM's
// own samples do (analyzer/profile/driver_profile.h). The file is the workers' format
// (native-agent/python_profile.h; its task line is unused here), parsed as untrusted input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace sparkprof::driver {

// The frame above the Python driver's own frames, and the thread its samples carry.
inline constexpr std::string_view kPythonDriverFrame = "[python driver]";
inline constexpr std::string_view kPythonDriverThread = "python driver";
// The largest file taken (the workers' per-task limit, native-agent/python_profile.h).
inline constexpr size_t kMaxPythonDriverFileBytes = size_t{1} << 20;

// A Batch (schema/profile.fbs) as the agent's drain hands one over, not size-prefixed: each stack's
// CPU as category python and its own time off CPU as python_off_cpu, under kPythonDriverFrame.
// Fails, saying why, on a file the parser refuses or a window that is empty or inverted.
Result<std::string> PythonDriverBatch(std::string_view file, int64_t start_epoch_ns,
                                      int64_t end_epoch_ns);

}  // namespace sparkprof::driver
