#include "native-agent/agent_options.h"

#include <charconv>
#include <cstdio>
#include <vector>

#include "common/utf8.h"

namespace sparkprof::agent {
namespace {

Result<int64_t> ParseInteger(std::string_view key, std::string_view value, int64_t min,
                             int64_t max) {
  int64_t parsed = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (error != std::errc() || end != value.data() + value.size()) {
    return InvalidArgument(std::string(key) + "=" + std::string(value) + ": not a whole number");
  }
  if (parsed < min || parsed > max) {
    return InvalidArgument(std::string(key) + "=" + std::string(value) + ": must be between " +
                           std::to_string(min) + " and " + std::to_string(max));
  }
  return parsed;
}

Result<bool> ParseSwitch(std::string_view key, std::string_view value) {
  if (value == "on") return true;
  if (value == "off") return false;
  return InvalidArgument(std::string(key) + "=" + std::string(value) + ": must be on or off");
}

}  // namespace

Status ValidateExecutorId(std::string_view id) {
  if (id.empty()) return InvalidArgument("the executor id is empty");
  if (id.size() > kMaxExecutorIdBytes) {
    return InvalidArgument("the executor id is longer than " + std::to_string(kMaxExecutorIdBytes) +
                           " bytes");
  }
  for (size_t offset = 0; offset < id.size();) {
    uint32_t code_point = 0;
    size_t length = utf8::Decode(id.substr(offset), code_point);
    if (length == 0) {
      return InvalidArgument("the executor id is not well-formed UTF-8 at byte " +
                             std::to_string(offset));
    }
    // C0, DEL and C1: nothing that could break a log line or a label.
    if (code_point < 0x20 || (code_point >= 0x7F && code_point <= 0x9F)) {
      char hex[16];
      std::snprintf(hex, sizeof(hex), "U+%04X", static_cast<unsigned>(code_point));
      return InvalidArgument("the executor id has a control character (" + std::string(hex) +
                             ") at byte " + std::to_string(offset));
    }
    offset += length;
  }
  return Status::Ok();
}

const char kOptionHelp[] =
    "options: interval=10ms mode=cpu+wall|cpu|wall out=PATH dump=SECONDS depth=1..2048 "
    "ring=4..65536 "
    "ringmemory=64k..64g maxstacks=100..10000000 prometheus=[HOST:]PORT[-LAST] walker=agct|jvmti "
    "executor=ID vmstructs=on|off jvmthreads=on|off monitors=on|off";

Result<int64_t> ParseDurationNs(std::string_view text) {
  struct Unit {
    std::string_view suffix;
    int64_t ns;
  };
  static constexpr Unit kUnits[] = {
      {"ns", 1}, {"us", 1'000}, {"ms", 1'000'000}, {"s", 1'000'000'000}};
  int64_t multiplier = 1'000'000;
  std::string_view digits = text;
  for (const Unit& unit : kUnits) {
    if (text.size() > unit.suffix.size() && text.ends_with(unit.suffix)) {
      std::string_view head = text.substr(0, text.size() - unit.suffix.size());
      if (!head.empty() && head.back() >= '0' && head.back() <= '9') {
        digits = head;
        multiplier = unit.ns;
        break;
      }
    }
  }
  int64_t value = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() || value < 0 ||
      value > INT64_MAX / multiplier) {
    return InvalidArgument("'" + std::string(text) + "' is not a duration (e.g. 10ms, 500us, 1s)");
  }
  return value * multiplier;
}

Result<uint64_t> ParseBytes(std::string_view text) {
  std::string_view digits = text;
  int shift = 0;
  const char unit = digits.empty() ? '\0' : digits.back();
  if (unit == 'k' || unit == 'K') shift = 10;
  if (unit == 'm' || unit == 'M') shift = 20;
  if (unit == 'g' || unit == 'G') shift = 30;
  if (shift != 0) digits.remove_suffix(1);
  const uint64_t multiplier = uint64_t{1} << shift;
  uint64_t value = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() ||
      value > UINT64_MAX / multiplier) {
    return InvalidArgument("'" + std::string(text) + "' is not a size (e.g. 256m, 1g, 65536k)");
  }
  return value * multiplier;
}

Result<AgentOptions> ParseAgentOptions(std::string_view text) {
  AgentOptions options;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (item.empty()) continue;
    size_t equals = item.find('=');
    if (equals == std::string_view::npos) {
      return InvalidArgument("option '" + std::string(item) + "' has no value; " + kOptionHelp);
    }
    std::string_view key = item.substr(0, equals);
    std::string_view value = item.substr(equals + 1);
    if (key == "interval") {
      auto parsed = ParseDurationNs(value);
      if (!parsed.ok()) return InvalidArgument("interval: " + parsed.status().message());
      if (*parsed < 100'000 || *parsed > 10'000'000'000) {
        return InvalidArgument("interval=" + std::string(value) +
                               ": must be between 100us and 10s");
      }
      options.interval_ns = *parsed;
    } else if (key == "mode") {
      if (value == "cpu") {
        options.mode = SamplingMode::kCpu;
      } else if (value == "wall") {
        options.mode = SamplingMode::kWall;
      } else if (value == "cpu+wall") {
        options.mode = SamplingMode::kCpuWall;
      } else {
        return InvalidArgument("mode=" + std::string(value) + ": must be cpu+wall, cpu or wall");
      }
    } else if (key == "out") {
      if (value.empty()) return InvalidArgument("out= needs a path prefix");
      options.out_path = std::string(value);
    } else if (key == "dump") {
      SPARKPROF_ASSIGN_OR_RETURN(options.dump_seconds, ParseInteger(key, value, 0, 86'400));
    } else if (key == "depth") {
      SPARKPROF_ASSIGN_OR_RETURN(int64_t depth, ParseInteger(key, value, 1, 2048));
      options.depth = static_cast<int>(depth);
    } else if (key == "ring") {
      SPARKPROF_ASSIGN_OR_RETURN(int64_t ring, ParseInteger(key, value, 4, 65'536));
      options.ring = static_cast<uint32_t>(ring);
    } else if (key == "ringmemory") {
      auto parsed = ParseBytes(value);
      if (!parsed.ok()) return InvalidArgument("ringmemory: " + parsed.status().message());
      if (*parsed < (uint64_t{64} << 10) || *parsed > (uint64_t{64} << 30)) {
        return InvalidArgument("ringmemory=" + std::string(value) +
                               ": must be between 64k and 64g");
      }
      options.ring_memory_bytes = *parsed;
    } else if (key == "maxstacks") {
      SPARKPROF_ASSIGN_OR_RETURN(int64_t stacks, ParseInteger(key, value, 100, 10'000'000));
      options.max_stacks = static_cast<uint32_t>(stacks);
    } else if (key == "prometheus") {
      if (value.empty()) return InvalidArgument("prometheus= needs [HOST:]PORT");
      options.prometheus = std::string(value);
    } else if (key == "walker") {
      if (value == "agct") {
        options.walker = WalkerChoice::kAsyncGetCallTrace;
      } else if (value == "jvmti") {
        options.walker = WalkerChoice::kJvmti;
      } else {
        return InvalidArgument("walker=" + std::string(value) + ": must be agct or jvmti");
      }
    } else if (key == "vmstructs") {
      SPARKPROF_ASSIGN_OR_RETURN(options.vm_structs, ParseSwitch(key, value));
    } else if (key == "jvmthreads") {
      SPARKPROF_ASSIGN_OR_RETURN(options.jvm_internal_threads, ParseSwitch(key, value));
    } else if (key == "monitors") {
      SPARKPROF_ASSIGN_OR_RETURN(options.monitor_waits, ParseSwitch(key, value));
    } else if (key == "executor") {
      Status valid = ValidateExecutorId(value);
      if (!valid.ok()) return InvalidArgument("executor=: " + valid.message());
      options.executor_id = std::string(value);
    } else {
      return InvalidArgument("unknown option '" + std::string(key) + "'; " + kOptionHelp);
    }
  }
  return options;
}

std::string ExpandOutPath(const std::string& pattern, int pid) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'p') {
      out += std::to_string(pid);
      ++i;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

}  // namespace sparkprof::agent
