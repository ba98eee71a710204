#include "native-agent/python_profile.h"

#include <charconv>
#include <limits>

namespace sparkprof::agent {
namespace {

constexpr std::string_view kHeader = "sparkprof-python 1";

std::string LineError(size_t line, std::string_view why) {
  return "line " + std::to_string(line) + ": " + std::string(why);
}

// Splits off the next space-separated field; empty when none is left.
std::string_view NextField(std::string_view& rest) {
  size_t space = rest.find(' ');
  std::string_view field = rest.substr(0, space);
  rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
  return field;
}

template <typename T>
bool ParseNumber(std::string_view text, T min, T max, T& out) {
  if (text.empty() || text.size() > 20) return false;
  T value{};
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return false;
  if (value < min || value > max) return false;
  out = value;
  return true;
}

bool ParseTime(std::string_view text, uint64_t& out) {
  return ParseNumber<uint64_t>(text, 0, kMaxPythonTimeNs, out);
}

bool ParseCount(std::string_view text, uint64_t& out) {
  return ParseNumber<uint64_t>(text, 0, uint64_t{1} << 48, out);
}

// Length of the valid UTF-8 sequence at `text[i]` (a non-ASCII lead byte), 0 when malformed.
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char lead = byte(i);
  size_t length;
  uint32_t min;
  uint32_t code;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2, min = 0x80, code = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3, min = 0x800, code = lead & 0x0F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4, min = 0x10000, code = lead & 0x07;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  // C1 controls (U+0080..U+009F) reach terminals as controls too.
  if (code >= 0x80 && code <= 0x9F) return 0;
  return length;
}

}  // namespace

std::string SanitisePythonFrame(std::string_view frame) {
  std::string out;
  out.reserve(std::min(frame.size(), kMaxPythonFrameBytes));
  for (size_t i = 0; i < frame.size() && out.size() < kMaxPythonFrameBytes;) {
    auto c = static_cast<unsigned char>(frame[i]);
    if (c < 0x80) {
      out.push_back(c < 0x20 || c == 0x7F ? '?' : static_cast<char>(c));
      ++i;
      continue;
    }
    size_t length = Utf8SequenceLength(frame, i);
    if (length == 0 || out.size() + length > kMaxPythonFrameBytes) {
      out.push_back('?');
      ++i;
      continue;
    }
    out.append(frame.substr(i, length));
    i += length;
  }
  if (out.empty()) out = "?";
  return out;
}

std::optional<std::string> ParsePythonProfile(std::string_view text, PythonTaskProfile& out) {
  out = PythonTaskProfile{};
  if (text.size() > kMaxPythonProfileBytes) {
    return "the file holds " + std::to_string(text.size()) + " bytes, above the limit of " +
           std::to_string(kMaxPythonProfileBytes);
  }
  bool have_task = false, have_worker = false, have_totals = false;
  size_t line_number = 0;
  while (!text.empty()) {
    size_t newline = text.find('\n');
    if (newline == std::string_view::npos) {
      return LineError(line_number + 1, "the last line has no newline (a cut file)");
    }
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline + 1);
    ++line_number;
    if (line_number == 1) {
      if (line != kHeader) return LineError(1, "not a sparkprof Python profile (version 1)");
      continue;
    }
    std::string_view rest = line;
    std::string_view kind = NextField(rest);
    if (kind == "task") {
      if (have_task) return LineError(line_number, "a second task line");
      if (!ParseNumber<int32_t>(NextField(rest), 0, std::numeric_limits<int32_t>::max(),
                                out.stage_id) ||
          !ParseNumber<int32_t>(NextField(rest), 0, std::numeric_limits<int32_t>::max(),
                                out.partition_id) ||
          !ParseNumber<int32_t>(NextField(rest), 0, std::numeric_limits<int32_t>::max(),
                                out.attempt_number) ||
          !ParseNumber<int64_t>(NextField(rest), 0, std::numeric_limits<int64_t>::max(),
                                out.task_attempt_id) ||
          !rest.empty()) {
        return LineError(line_number, "task wants 4 non-negative integers");
      }
      have_task = true;
    } else if (kind == "worker") {
      if (!ParseNumber<int64_t>(NextField(rest), 1, std::numeric_limits<int32_t>::max(),
                                out.worker_pid) ||
          !ParseNumber<int64_t>(NextField(rest), 1, 60'000'000'000, out.interval_ns) ||
          !rest.empty()) {
        return LineError(line_number, "worker wants a pid and an interval in ns");
      }
      have_worker = true;
    } else if (kind == "totals") {
      if (!ParseCount(NextField(rest), out.samples) || !ParseTime(NextField(rest), out.cpu_ns) ||
          !ParseTime(NextField(rest), out.off_cpu_ns) ||
          !ParseTime(NextField(rest), out.jvm_wait_ns) ||
          !ParseCount(NextField(rest), out.stacks_folded) ||
          !ParseCount(NextField(rest), out.files_dropped) || !rest.empty()) {
        return LineError(line_number, "totals wants 6 bounded non-negative integers");
      }
      have_totals = true;
    } else if (kind == "s") {
      if (out.stacks.size() >= kMaxPythonStacks) {
        return LineError(line_number, "more than " + std::to_string(kMaxPythonStacks) + " stacks");
      }
      PythonStackRecord stack;
      if (!ParseTime(NextField(rest), stack.cpu_ns) ||
          !ParseTime(NextField(rest), stack.off_cpu_ns) ||
          !ParseCount(NextField(rest), stack.samples) || rest.empty()) {
        return LineError(line_number, "a stack wants CPU ns, off-CPU ns, samples and frames");
      }
      while (!rest.empty()) {
        if (stack.frames.size() >= kMaxPythonFrames) {
          return LineError(line_number,
                           "a stack deeper than " + std::to_string(kMaxPythonFrames) + " frames");
        }
        size_t tab = rest.find('\t');
        std::string_view frame = rest.substr(0, tab);
        if (frame.empty()) return LineError(line_number, "an empty frame");
        stack.frames.push_back(frame);
        rest = tab == std::string_view::npos ? std::string_view{} : rest.substr(tab + 1);
        if (tab != std::string_view::npos && rest.empty()) {
          return LineError(line_number, "an empty frame");
        }
      }
      out.stacks.push_back(std::move(stack));
    } else {
      return LineError(line_number,
                       "unknown record '" + SanitisePythonFrame(kind.substr(0, 32)) + "'");
    }
  }
  if (line_number == 0) return LineError(1, "an empty file");
  if (!have_task || !have_worker || !have_totals) {
    return LineError(line_number, "the task, worker or totals line is missing");
  }
  return std::nullopt;
}

RecentTasks::Entry& RecentTasks::Slot(const TaskTag& tag) {
  auto [it, inserted] = entries_.try_emplace(tag.task_attempt_id);
  if (inserted) {
    order_.push_back(tag.task_attempt_id);
    while (order_.size() > kMaxTasks) {
      entries_.erase(order_.front());
      order_.pop_front();
    }
  }
  it->second.tag = tag;
  return it->second;
}

void RecentTasks::Remember(const TaskTag& tag) {
  if (tag.is_task()) Slot(tag);
}

void RecentTasks::RememberPythonWait(const TaskTag& tag,
                                     std::span<const uint32_t> frames_root_first) {
  if (!tag.is_task()) return;
  Entry& entry = Slot(tag);
  entry.python_wait_stack.assign(frames_root_first.begin(), frames_root_first.end());
}

const RecentTasks::Entry* RecentTasks::Find(int64_t task_attempt_id) const {
  auto it = entries_.find(task_attempt_id);
  return it == entries_.end() ? nullptr : &it->second;
}

}  // namespace sparkprof::agent
