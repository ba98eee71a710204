// `sparkprof analyze PATH`: event logs in, report out.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/executor_logs/executor_logs.h"
#include "analyzer/report/analysis.h"
#include "analyzer/report/html_report.h"
#include "analyzer/report/render.h"
#include "analyzer/source/log_source.h"
#include "cli/commands.h"
#include "cli/cost_options.h"
#include "cli/output.h"
#include "common/parallel.h"

namespace sparkprof::cli {

namespace {

struct AnalyzeOptions {
  std::string path;
  std::string format = "text";
  std::string output;
  std::string fail_on;  // "", "warning" or "critical"
  bool quiet = false;
  int max_problems_printed = 20;
  uint64_t max_decompressed_bytes = eventlog::kDefaultMaxDecodedBytes;
  uint64_t max_expansion_ratio = eventlog::kDefaultMaxExpansionRatio;
  int threads = 0;      // 0: every available CPU
  std::string profile;  // --profile: a *.sparkprof file or the driver's output directory
  std::string logs;     // --logs: the executors' and the driver's logs (a directory or a file)
  CostFlags cost;
};

void Print(const std::string& message) { PrintMessage("sparkprof", message); }

std::vector<std::string> InputFiles(const source::DiscoveryResult& found) {
  std::vector<std::string> files;
  for (const source::ApplicationLog& log : found.applications) {
    for (const source::LogPart& part : log.parts) files.push_back(part.disk_file);
  }
  return files;
}

// What analysing one application gave and the messages to print for it, in the order they came.
struct AppOutcome {
  bool analysed = false;      // false: it had no events or ran out of memory
  bool at_threshold = false;  // a finding at --fail-on's severity or worse
  std::string section;        // its part of the report, until written (every format but html)
  std::unique_ptr<report::Analysis> analysis;  // html: the page is written at the end
  std::vector<std::string> messages;
  std::string not_analysed_why;  // when not analysed: why, for the report's not_analysed list
  bool done = false;             // guarded by OrderedPrinter's mutex
};

// Prints each application's messages and hands it to `on_ready` once it and every application
// before it are done, so that stderr and the report read the same whichever thread finished
// first, and a report is written while later applications are still being analysed.
class OrderedPrinter {
 public:
  OrderedPrinter(std::vector<AppOutcome>& outcomes, std::function<void(AppOutcome&)> on_ready)
      : outcomes_(outcomes), on_ready_(std::move(on_ready)) {}
  void Done(size_t index) {
    std::lock_guard<std::mutex> lock(mutex_);
    outcomes_[index].done = true;
    for (; next_ < outcomes_.size() && outcomes_[next_].done; ++next_) {
      for (const std::string& message : outcomes_[next_].messages) Print(message);
      outcomes_[next_].messages = {};
      on_ready_(outcomes_[next_]);
    }
  }

 private:
  std::vector<AppOutcome>& outcomes_;
  std::function<void(AppOutcome&)> on_ready_;
  std::mutex mutex_;
  size_t next_ = 0;
};

// Each application's probable JSON bytes: for ordering work only (compressed logs counted at a
// typical ratio).
std::vector<uint64_t> EstimatedSizes(const std::vector<source::ApplicationLog>& logs) {
  constexpr uint64_t kTypicalCompressionRatio = 8;
  std::vector<uint64_t> bytes;
  bytes.reserve(logs.size());
  for (const source::ApplicationLog& log : logs) {
    bytes.push_back(report::EstimatedJsonBytes(log, kTypicalCompressionRatio));
  }
  return bytes;
}

// The order to start applications in. The large ones first, largest first: started late, one
// would finish last, alone on its thread. Large: at least a quarter of one thread's even share
// of all the bytes, so at most 4 x threads of them. Then the others in the directory's order:
// their reports are written as they finish, so only a few wait for an earlier one in memory.
std::vector<size_t> StartOrder(const std::vector<uint64_t>& bytes, int threads) {
  uint64_t total = 0;
  for (uint64_t b : bytes) total += b;
  const uint64_t large = total / (4 * static_cast<uint64_t>(std::max(threads, 1)));
  std::vector<size_t> order(bytes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const bool a_large = bytes[a] >= large;
    const bool b_large = bytes[b] >= large;
    if (a_large != b_large) return a_large;
    return a_large && bytes[a] > bytes[b];
  });
  return order;
}

// Threads for each application's own work (parsing, the cost frontier): all of them for a lone
// application, one each when several share the threads -- except the largest when it is bigger
// than all the others together: it would finish last, alone on one thread.
std::vector<int> ThreadsPerApplication(const std::vector<uint64_t>& bytes, int threads) {
  std::vector<int> per_log(bytes.size(), bytes.size() == 1 ? threads : 1);
  if (bytes.size() > 1) {
    uint64_t total = 0;
    for (uint64_t b : bytes) total += b;
    const size_t largest =
        static_cast<size_t>(std::max_element(bytes.begin(), bytes.end()) - bytes.begin());
    if (bytes[largest] > total - bytes[largest]) per_log[largest] = threads;
  }
  return per_log;
}

// Null (with why in `not_analysed_why`) when the log gave nothing to report.
std::unique_ptr<report::Analysis> AnalyzeOne(const source::ApplicationLog& log,
                                             const AnalyzeOptions& options, int threads,
                                             std::vector<std::string>& messages,
                                             std::string& not_analysed_why) {
  int printed = 0;
  int64_t suppressed = 0;
  eventlog::ReaderOptions reader_options;
  reader_options.max_decoded_bytes = options.max_decompressed_bytes;
  reader_options.max_expansion_ratio = options.max_expansion_ratio;
  reader_options.threads = threads;
  reader_options.on_problem = [&](const std::string& message, bool per_line) {
    if (options.quiet) return;
    if (!per_line || printed < options.max_problems_printed) {
      messages.push_back(message);
      ++printed;
    } else {
      ++suppressed;
    }
  };
  cost::CostOptions cost_options = options.cost.options;
  cost_options.threads = threads;
  std::unique_ptr<report::Analysis> analysis;
  try {
    analysis = std::make_unique<report::Analysis>(
        report::Analyze(log, reader_options, cost_options, options.profile, options.logs));
  } catch (const std::bad_alloc&) {
    // Every input is bounded; this is the last line of defence, never an abort.
    messages.push_back(log.name + ": out of memory while analysing it; skipped (the other " +
                       "applications are still reported)");
    not_analysed_why = "out of memory while analysing it";
    return nullptr;
  }
  if (suppressed > 0) {
    messages.push_back(log.name + ": " + std::to_string(suppressed) +
                       " more problem(s) not shown (all are in the JSON report)");
  }
  if (!analysis->read.analysable()) {
    messages.push_back(log.name + ": no Spark events could be read; not analysed");
    not_analysed_why = report::NothingAnalysableWhy(analysis->read);
    return nullptr;
  }
  if (!options.profile.empty() && !options.quiet) {
    if (analysis->profile == nullptr) {
      messages.push_back(log.name + ": profile not used: " + analysis->profile_error +
                         "; the report is the event log's alone");
    } else {
      for (const std::string& problem : analysis->profile->problems) messages.push_back(problem);
      if (analysis->profile->problem_count > analysis->profile->problems.size()) {
        messages.push_back(
            analysis->profile->source + ": " +
            std::to_string(analysis->profile->problem_count - analysis->profile->problems.size()) +
            " more problem(s) not shown");
      }
    }
  }
  if (!options.logs.empty() && !options.quiet) {
    if (analysis->logs == nullptr) {
      messages.push_back(log.name + ": executor logs not used: " + analysis->logs_error);
    } else {
      const executor_logs::LogProblems& problems = analysis->logs->problems;
      for (const std::string& problem : problems.messages) messages.push_back(problem);
      if (problems.count > problems.messages.size()) {
        messages.push_back(options.logs + ": " +
                           std::to_string(problems.count - problems.messages.size()) +
                           " more problem(s) not shown");
      }
    }
  }
  // Only what the report reads stays until it is written (the HTML timeline's view of the tasks).
  if (options.format == "html") report::KeepTaskTimeline(*analysis);
  report::ReleaseTaskRecords(*analysis);
  return analysis;
}

int RunAnalyze(AnalyzeOptions& options) {
  std::string cost_error;
  if (!ResolveCostOptions(options.cost, cost_error)) {
    Print(cost_error);
    return kExitUsage;
  }
  Result<source::DiscoveryResult> found = source::Discover(options.path);
  if (!found.ok()) {
    Print(found.status().message());
    return kExitNothingAnalysable;
  }
  for (const source::DiscoveryWarning& warning : found->warnings) {
    Print(warning.path + ": " + warning.message);
  }
  if (found->applications.empty()) {
    Print("no event logs found under " + options.path);
    return kExitNothingAnalysable;
  }
  if (!OutputIsNotAnInput(options.output, InputFiles(*found))) return kExitUsage;
  // A profile file names no application: with several, each finds its own in the driver's
  // output directory (<dir>/<application id>/profile.sparkprof).
  std::error_code profile_error;
  if (!options.profile.empty() && found->applications.size() > 1 &&
      std::filesystem::is_regular_file(options.profile, profile_error)) {
    Print("--profile " + options.profile + ": one profile file for " +
          std::to_string(found->applications.size()) +
          " applications; give the directory the driver wrote (spark.sparkprof.outputDir), "
          "which holds each application's profile.sparkprof in a folder named after its id");
    return kExitUsage;
  }

  // Several applications (a directory of many logs) are analysed side by side, one thread
  // each (StartOrder); the report and every message keep the order of `found->applications`. Each
  // application's part of the report is rendered on its thread and written as soon as every
  // application before it is done, so memory grows with the applications in flight, not with the
  // directory (html: the rendered sections wait for the page's head, ~1/10 of the analyses).
  const std::vector<source::ApplicationLog>& logs = found->applications;
  const int threads = ThreadsOrAvailable(options.threads);
  const std::vector<uint64_t> sizes = EstimatedSizes(logs);
  const std::vector<size_t> order = StartOrder(sizes, threads);
  const std::vector<int> threads_per_log = ThreadsPerApplication(sizes, threads);
  std::optional<diagnosis::Severity> threshold;
  if (!options.fail_on.empty()) {
    threshold = options.fail_on == "critical" ? diagnosis::Severity::kCritical
                                              : diagnosis::Severity::kWarning;
  }
  const bool in_sections = report::IsSectionFormat(options.format);
  ReportStream stream(options.output);
  report::ReportAssembler assembler(options.format);
  std::atomic<bool> write_failed{false};
  std::vector<AppOutcome> outcomes(logs.size());
  // html: the page's head names every application, so its sections are rendered in order here
  // (each at its place on the page, its analysis then freed) and written at the end.
  std::vector<report::HtmlSection> html_sections;
  OrderedPrinter printer(outcomes, [&](AppOutcome& outcome) {
    if (!outcome.analysed) return;
    if (!in_sections) {
      html_sections.push_back(report::RenderHtmlSection(*outcome.analysis, html_sections.size()));
      outcome.analysis.reset();
      return;
    }
    if (!stream.Write(assembler.Add(std::move(outcome.section)))) write_failed = true;
    std::string().swap(outcome.section);
  });
  ParallelFor(logs.size(), threads, [&](size_t rank) {
    const size_t index = order[rank];
    AppOutcome& outcome = outcomes[index];
    // Once the report cannot be written, what is left is not worth analysing.
    if (!write_failed) {
      std::unique_ptr<report::Analysis> analysis = AnalyzeOne(
          logs[index], options, threads_per_log[index], outcome.messages, outcome.not_analysed_why);
      if (analysis) {
        outcome.analysed = true;
        outcome.at_threshold =
            threshold && report::AnyFindingAtOrAbove({analysis.get()}, *threshold);
        if (in_sections) {
          outcome.section = report::RenderSection(options.format, *analysis);
        } else {
          outcome.analysis = std::move(analysis);
        }
      }
    }
    printer.Done(index);
  });
  if (write_failed) return kExitUsage;
  bool at_threshold = false;
  report::NotAnalysedList not_analysed;  // in the directory's order
  for (size_t i = 0; i < outcomes.size(); ++i) {
    at_threshold = at_threshold || outcomes[i].at_threshold;
    if (!outcomes[i].analysed) not_analysed.Add(logs[i], outcomes[i].not_analysed_why);
  }
  if (in_sections) {
    if (assembler.applications() == 0) return kExitNothingAnalysable;
    const std::string end = assembler.Finish(not_analysed);
    if ((!end.empty() && !stream.Write(end)) || !stream.Close()) return kExitUsage;
  } else {
    if (html_sections.empty()) return kExitNothingAnalysable;
    bool written = stream.Write(report::HtmlPageHead(html_sections));
    for (report::HtmlSection& section : html_sections) {
      written = written && stream.Write(section.body);
      std::string().swap(section.body);
    }
    if (!written || !stream.Write(report::HtmlPageTail(html_sections.size(), not_analysed)) ||
        !stream.Close()) {
      return kExitUsage;
    }
  }
  return at_threshold ? kExitFindingsAtThreshold : kExitOk;
}

}  // namespace

void RegisterAnalyzeCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<AnalyzeOptions>();
  CLI::App* command = app.add_subcommand(
      "analyze",
      "Read Spark event logs (file, rolling directory, zip, Databricks folder, or a directory of "
      "many applications) and report what is slow and why");
  command->add_option("path", options->path, "event log file, directory or zip")->required();
  command->add_option("--format", options->format, "text, md (Markdown), json or html")
      ->check(CLI::IsMember({"text", "md", "json", "html"}));
  command->add_option("-o,--output", options->output, "write the report here instead of stdout");
  command
      ->add_option("--fail-on", options->fail_on,
                   "exit with code 3 after writing the report when a finding of this severity or "
                   "worse exists (warning or critical)")
      ->check(CLI::IsMember({"warning", "critical"}));
  command->add_flag("-q,--quiet", options->quiet, "do not print input problems to stderr");
  command
      ->add_option("--max-decompressed-bytes", options->max_decompressed_bytes,
                   "stop reading an application after this many decompressed bytes of its log "
                   "(default 64GiB; suffixes KiB, MiB, GiB; docs/limits.md)")
      ->transform(CLI::AsSizeValue(false));
  command
      ->add_option("--max-expansion-ratio", options->max_expansion_ratio,
                   "stop reading a file that decompresses to more than this many times its "
                   "size, like a decompression bomb (default 1000; 0: no limit)")
      ->check(CLI::NonNegativeNumber);
  command
      ->add_option("--threads", options->threads,
                   "threads to use: decompression apart from parsing, the cost frontier's "
                   "points at once, a directory's applications side by side (default 0: every "
                   "CPU this process may use; 1: all in one thread, the same report)")
      ->check(CLI::Range(0, 256));
  command->add_option(
      "--profile", options->profile,
      "the agent's saved profile (profile.sparkprof, or compressed as event logs are: .zstd, "
      ".gz, .lz4, ...) of the run, or the directory the driver wrote it to "
      "(spark.sparkprof.outputDir): the report then explains task time by its stack "
      "samples, on and off CPU, per stage (docs/report-schema.md, profile)");
  command->add_option(
      "--logs", options->logs,
      "the executors' and the driver's own logs, a directory or a file on this machine: a "
      "standalone Worker's work directory, `yarn logs -applicationId ...` saved to a file, "
      "`kubectl get pod -o json` beside `kubectl logs` files, a Databricks cluster log "
      "delivery folder, dmesg -T output; what they say of OutOfMemoryErrors, container and "
      "kernel kills, exit codes, Python workers, full disks and fetch failures joins the "
      "event log's executors (docs/report-schema.md, logs)");
  AddCostOptions(command, options->cost);
  command->callback([options, &exit_code]() { exit_code = RunAnalyze(*options); });
}

}  // namespace sparkprof::cli
