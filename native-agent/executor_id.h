// The executor id every batch carries. Every executor gets the same -agentpath line, so the
// executor plugin names its JVM through JNI at init (NativeAgent.setExecutorId) while the drain
// thread may be encoding a batch: the value sits behind its own mutex, held only to copy at most
// kMaxExecutorIdBytes and never while taking another lock, so it cannot deadlock.
//
// Precedence: an explicit `executor=` agent option wins; the plugin's id is used only when the
// option was not given. Before either, batches say "driver" (the driver JVM's plugin never sets
// it).
#pragma once

#include <mutex>
#include <string>
#include <string_view>

#include "common/status.h"
#include "native-agent/agent_options.h"

namespace sparkprof::agent {

class ExecutorId {
 public:
  // `from_options`: the validated `executor=` value, or "" when the option was not given.
  explicit ExecutorId(std::string from_options)
      : from_option_(!from_options.empty()),
        value_(from_option_ ? std::move(from_options) : std::string("driver")) {}

  // The plugin's id from now on. Refused (value unchanged) when invalid (see ValidateExecutorId)
  // or when the agent option set the id; the message says which, ready for one log line.
  Status Set(std::string_view id) {
    Status valid = ValidateExecutorId(id);
    if (!valid.ok()) return valid;
    std::lock_guard<std::mutex> lock(mutex_);
    if (from_option_) {
      return InvalidArgument("executor id '" + std::string(id) +
                             "' not used: the agent option executor=" + value_ + " names this JVM");
    }
    value_.assign(id);
    return Status::Ok();
  }

  std::string Get() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return value_;
  }

 private:
  const bool from_option_;
  mutable std::mutex mutex_;
  std::string value_;  // guarded by mutex_
};

}  // namespace sparkprof::agent
