#include "analyzer/executor_logs/executor_logs.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>
#include <tuple>
#include <utility>

#include "analyzer/codec/codec.h"
#include "analyzer/executor_logs/pod_status.h"
#include "common/input_stream.h"

namespace sparkprof::executor_logs {

namespace fs = std::filesystem;

namespace {

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.rfind(prefix, 0) == 0;
}
bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}
bool AllDigits(std::string_view text) {
  return !text.empty() && text.size() <= 12 && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
}

// The name without a codec's extension ("stderr.gz" -> "stderr").
std::string_view WithoutCodec(std::string_view name) {
  for (std::string_view ext : {".gz", ".zstd", ".zst", ".lz4", ".snappy", ".lzf"}) {
    if (EndsWith(name, ext)) return name.substr(0, name.size() - ext.size());
  }
  return name;
}

}  // namespace

bool IsLogName(std::string_view name) {
  const std::string_view base = WithoutCodec(name);
  for (std::string_view prefix :
       {"stdout", "stderr", "log4j", "dmesg", "kern", "syslog", "messages", "container_"}) {
    if (StartsWith(base, prefix)) return true;
  }
  for (std::string_view ext : {".log", ".txt", ".out", ".err", ".json"}) {
    if (EndsWith(base, ext)) return true;
  }
  return false;
}

namespace {

std::string_view Stem(std::string_view name) {
  const std::string_view base = WithoutCodec(name);
  for (std::string_view ext : {".log", ".txt", ".out", ".err", ".json"}) {
    if (EndsWith(base, ext)) return base.substr(0, base.size() - ext.size());
  }
  return base;
}

struct FileToRead {
  std::string disk_path;
  std::string display_name;
  std::vector<std::string> components;  // below the path given, the file's name last
};

// What the path says of the process a file belongs to.
struct PathOwner {
  std::string executor_id;
  std::string app_id;
  const char* layout = nullptr;
};
PathOwner OwnerFromPath(const std::vector<std::string>& c) {
  PathOwner owner;
  const size_t n = c.size();
  const std::string_view base = WithoutCodec(c[n - 1]);
  const bool process_log =
      StartsWith(base, "stdout") || StartsWith(base, "stderr") || StartsWith(base, "log4j");
  if (!process_log) return owner;
  if (n >= 2 && c[n - 2] == "driver") {
    owner.executor_id = "driver";
    owner.layout = "databricks";
  } else if (n >= 4 && c[n - 4] == "executor" && !c[n - 2].empty()) {
    owner.executor_id = c[n - 2];
    owner.app_id = c[n - 3];
    owner.layout = "databricks";
  } else if (n >= 3 && AllDigits(c[n - 2])) {
    owner.executor_id = c[n - 2];
    owner.app_id = c[n - 3];
    owner.layout = "standalone";
  }
  return owner;
}

class Reader {
 public:
  Reader(const std::string& app_id, const LogReadLimits& limits)
      : app_id_(app_id), limits_(limits), hits_(limits.max_hits) {}

  void Walk(const fs::path& root, const std::string& display_root) {
    std::error_code error;
    if (fs::is_regular_file(root, error)) {
      files_.push_back({root.string(), display_root, {root.filename().string()}});
      return;
    }
    WalkFolder(root, display_root, {}, 0);
  }

  void ReadAll() {
    // Pod descriptions first: they name the processes of the pod logs beside them.
    for (const FileToRead& file : files_) {
      if (EndsWith(WithoutCodec(file.components.back()), ".json")) ReadJson(file);
    }
    for (const FileToRead& file : files_) {
      if (!EndsWith(WithoutCodec(file.components.back()), ".json")) ReadText(file);
    }
  }

  ExecutorLogs Finish(std::string source) {
    ExecutorLogs logs;
    logs.source = std::move(source);
    JoinKernelKills();
    std::vector<LogHit>& hits = hits_.hits();
    for (LogHit& hit : hits) {
      const LogProcess& process = processes_[hit.process];
      if (!app_id_.empty() && !process.app_id.empty() && process.app_id != app_id_) {
        ++logs.other_application_hits;
        continue;
      }
      logs.hits.push_back(std::move(hit));
    }
    std::stable_sort(logs.hits.begin(), logs.hits.end(), [](const LogHit& a, const LogHit& b) {
      if ((a.time_ms < 0) != (b.time_ms < 0)) return a.time_ms >= 0;
      if (a.time_ms != b.time_ms) return a.time_ms < b.time_ms;
      return std::tie(a.file, a.line) < std::tie(b.file, b.line);
    });
    logs.hits_left_out = hits_.left_out();
    logs.processes = std::move(processes_);
    logs.files_read = files_read_;
    logs.files_not_logs = files_not_logs_;
    logs.files_left_out = files_left_out_;
    logs.bytes_read = bytes_read_;
    logs.lines_read = lines_read_;
    logs.layouts.assign(layouts_.begin(), layouts_.end());
    logs.problems = std::move(problems_);
    return logs;
  }

  void ReadBytes(const std::string& display_name, std::string bytes) {
    FileToRead file{"", display_name, {display_name}};
    if (LooksLikePodJson(bytes)) {
      ReadPods(file, bytes);
      return;
    }
    Scan(file, MakeMemoryInputStream(std::move(bytes)));
  }

 private:
  void WalkFolder(const fs::path& folder, const std::string& display,
                  const std::vector<std::string>& components, int depth) {
    if (depth > limits_.max_depth) {
      problems_.Add(display + ": deeper than " + std::to_string(limits_.max_depth) +
                    " folders below the path; not read");
      return;
    }
    std::error_code error;
    std::vector<fs::directory_entry> entries;
    for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
      entries.push_back(*it);
    }
    if (error) {
      problems_.Add(display + ": cannot list it (" + error.message() + ")");
      return;
    }
    std::sort(entries.begin(), entries.end());
    for (const fs::directory_entry& entry : entries) {
      const std::string name = entry.path().filename().string();
      std::vector<std::string> below = components;
      below.push_back(name);
      const std::string shown = display + "/" + name;
      std::error_code kind_error;
      if (entry.is_symlink(kind_error)) continue;  // no loops, no escapes from the path
      if (entry.is_directory(kind_error)) {
        WalkFolder(entry.path(), shown, below, depth + 1);
      } else if (entry.is_regular_file(kind_error)) {
        if (!IsLogName(name)) {
          ++files_not_logs_;
        } else if (files_.size() >= limits_.max_files) {
          ++files_left_out_;
        } else {
          files_.push_back({entry.path().string(), shown, std::move(below)});
        }
      }
    }
  }

  // The file's decoded stream (gzip and the event logs' codecs), or null with a problem.
  std::unique_ptr<InputStream> Open(const FileToRead& file, uint64_t max_bytes) {
    Result<std::unique_ptr<InputStream>> raw = OpenFileInputStream(file.disk_path);
    if (!raw.ok()) {
      problems_.Add(file.display_name + ": " + raw.status().message());
      return nullptr;
    }
    codec::DecoderLimits decoder_limits;
    decoder_limits.max_output_bytes = max_bytes + 1;
    Result<codec::DecodedStream> decoded =
        codec::OpenDecoded(std::move(*raw), file.components.back(), decoder_limits);
    if (!decoded.ok()) {
      problems_.Add(file.display_name + ": " + decoded.status().message() + "; not read");
      return nullptr;
    }
    return std::move(decoded->stream);
  }

  bool OverTotal() {
    if (bytes_read_ < limits_.max_total_bytes) return false;
    ++files_left_out_;
    if (!total_named_) {
      total_named_ = true;
      problems_.Add("--logs: " + std::to_string(limits_.max_total_bytes) +
                    " decoded bytes read in all (the limit, docs/limits.md); the rest of the "
                    "files are not read");
    }
    return true;
  }

  void ReadJson(const FileToRead& file) {
    if (OverTotal()) return;
    std::unique_ptr<InputStream> stream = Open(file, limits_.max_pod_json_bytes);
    if (!stream) return;
    std::string bytes;
    char buffer[64 << 10];
    while (true) {
      Result<size_t> got = stream->Read(buffer, sizeof(buffer));
      if (!got.ok()) {
        problems_.Add(file.display_name + ": " + got.status().message() + " (after " +
                      std::to_string(bytes.size()) + " bytes); not read");
        return;
      }
      if (*got == 0) break;
      if (bytes.size() + *got > limits_.max_pod_json_bytes) {
        problems_.Add(file.display_name + ": larger than " +
                      std::to_string(limits_.max_pod_json_bytes) +
                      " bytes, the limit for a pod description (docs/limits.md); not read");
        return;
      }
      bytes.append(buffer, *got);
    }
    ++files_read_;
    bytes_read_ += bytes.size();
    if (!LooksLikePodJson(bytes)) {
      // Not a Kubernetes object: a log that happens to end in .json (JSON lines).
      Scan(file, MakeMemoryInputStream(std::move(bytes)), /*counted=*/true);
      return;
    }
    ReadPods(file, bytes);
  }

  void ReadPods(const FileToRead& file, std::string_view bytes) {
    for (PodStatus& pod : ReadPodStatuses(bytes, file.display_name, problems_)) {
      if (pod.name.empty()) continue;
      layouts_.insert("kubernetes");
      const size_t process = PodProcess(pod);
      for (const PodTermination& t : pod.terminations) {
        if (t.reason != "OOMKilled" && t.exit_code <= 0) continue;
        LogHit hit;
        hit.signal = t.reason == "OOMKilled" ? LogSignal::kPodOomKilled : LogSignal::kExitCode;
        hit.process = process;
        hit.file = file.display_name;
        hit.time = t.finished_at;
        hit.time_ms = t.finished_ms;
        hit.exit_code = t.exit_code;
        hit.text = CleanText("pod " + pod.name + " container " + t.container +
                             (t.last_state ? " (its previous run)" : "") + " terminated: " +
                             (t.reason.empty() ? std::string("no reason") : t.reason) +
                             ", exit code " + std::to_string(t.exit_code));
        hits_.Add(std::move(hit));
      }
    }
  }

  size_t PodProcess(const PodStatus& pod) {
    if (auto found = pod_processes_.find(pod.name); found != pod_processes_.end()) {
      return found->second;
    }
    LogProcess process;
    process.container = pod.name;
    process.executor_id = pod.executor_id;
    process.app_id = pod.app_id;
    processes_.push_back(std::move(process));
    pod_processes_.emplace(pod.name, processes_.size() - 1);
    return processes_.size() - 1;
  }

  void ReadText(const FileToRead& file) {
    if (OverTotal()) return;
    std::unique_ptr<InputStream> stream = Open(file, limits_.scan.max_bytes_per_file);
    if (!stream) return;
    Scan(file, std::move(stream));
  }

  void Scan(const FileToRead& file, std::unique_ptr<InputStream> stream, bool counted = false) {
    size_t process = SIZE_MAX;
    // A pod log: the file, or a folder above it, is named after a described pod.
    for (size_t i = file.components.size(); i-- > 0 && process == SIZE_MAX;) {
      const std::string name(i + 1 == file.components.size() ? Stem(file.components[i])
                                                             : file.components[i]);
      if (auto found = pod_processes_.find(name); found != pod_processes_.end()) {
        process = found->second;
      }
    }
    if (process == SIZE_MAX) {
      const PathOwner owner = OwnerFromPath(file.components);
      if (owner.layout != nullptr) layouts_.insert(owner.layout);
      process = ProcessFor(owner);
    }
    ScanLimits scan = limits_.scan;
    scan.max_bytes_per_file = std::min<uint64_t>(
        scan.max_bytes_per_file,
        limits_.max_total_bytes - std::min(bytes_read_, limits_.max_total_bytes));
    const size_t processes_before = processes_.size();
    const ScanCounts counts =
        ScanLogText(*stream, file.display_name, process, processes_, hits_, problems_, scan);
    if (processes_.size() > processes_before) layouts_.insert("yarn");
    if (!counted) {
      ++files_read_;
      bytes_read_ += counts.bytes;
    }
    lines_read_ += counts.lines;
  }

  // A process per path owner (the rolled files of one executor share it); a fresh one when
  // the path names none.
  size_t ProcessFor(const PathOwner& owner) {
    if (!owner.executor_id.empty()) {
      const auto key = std::make_pair(owner.app_id, owner.executor_id);
      if (auto found = path_processes_.find(key); found != path_processes_.end()) {
        return found->second;
      }
      path_processes_.emplace(key, processes_.size());
    }
    LogProcess process;
    process.executor_id = owner.executor_id;
    process.app_id = owner.app_id;
    processes_.push_back(std::move(process));
    return processes_.size() - 1;
  }

  // A kernel kill names its victim by pid: the process whose log named that pid.
  void JoinKernelKills() {
    for (LogHit& hit : hits_.hits()) {
      if (hit.signal != LogSignal::kKernelOomKill || hit.pid < 0) continue;
      layouts_.insert("kernel");
      for (size_t i = 0; i < processes_.size(); ++i) {
        const LogProcess& process = processes_[i];
        if (process.pid == hit.pid && !process.executor_id.empty() &&
            (app_id_.empty() || process.app_id.empty() || process.app_id == app_id_)) {
          hit.process = i;
          break;
        }
      }
    }
  }

  const std::string& app_id_;
  const LogReadLimits& limits_;
  std::vector<FileToRead> files_;
  std::vector<LogProcess> processes_;
  LogHitTable hits_;
  LogProblems problems_;
  std::map<std::string, size_t> pod_processes_;
  std::map<std::pair<std::string, std::string>, size_t> path_processes_;
  std::set<std::string> layouts_;
  uint64_t files_read_ = 0, files_not_logs_ = 0, files_left_out_ = 0;
  uint64_t bytes_read_ = 0, lines_read_ = 0;
  bool total_named_ = false;
};

}  // namespace

Result<ExecutorLogs> ReadExecutorLogs(const std::string& path, const std::string& app_id,
                                      const LogReadLimits& limits) {
  std::error_code error;
  if (!fs::exists(path, error)) {
    return NotFound("--logs " + path + ": no such file or directory");
  }
  Reader reader(app_id, limits);
  reader.Walk(fs::path(path), path);
  reader.ReadAll();
  return reader.Finish(path);
}

ExecutorLogs ReadExecutorLogBytes(const std::string& display_name, std::string bytes,
                                  const std::string& app_id, const LogReadLimits& limits) {
  Reader reader(app_id, limits);
  reader.ReadBytes(display_name, std::move(bytes));
  return reader.Finish(display_name);
}

}  // namespace sparkprof::executor_logs
