// `sparkprof analyze PATH`: event logs in, report out.
#include <cstdio>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "analyzer/report/analysis.h"
#include "analyzer/report/render.h"
#include "analyzer/source/log_source.h"
#include "cli/commands.h"
#include "cli/cost_options.h"

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
  int threads = 0;  // 0: every available CPU
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

  options.cost.options.threads = options.threads;
  std::vector<std::unique_ptr<report::Analysis>> analyses;
  for (const source::ApplicationLog& log : found->applications) {
    int printed = 0;
    int64_t suppressed = 0;
    eventlog::ReaderOptions reader_options;
    reader_options.max_decoded_bytes = options.max_decompressed_bytes;
    reader_options.max_expansion_ratio = options.max_expansion_ratio;
    reader_options.threads = options.threads;
    reader_options.on_problem = [&](const std::string& message, bool per_line) {
      if (options.quiet) return;
      if (!per_line || printed < options.max_problems_printed) {
        Print(message);
        ++printed;
      } else {
        ++suppressed;
      }
    };
    std::unique_ptr<report::Analysis> analysis;
    try {
      analysis = std::make_unique<report::Analysis>(
          report::Analyze(log, reader_options, options.cost.options));
    } catch (const std::bad_alloc&) {
      // Every input is bounded; this is the last line of defence, never an abort.
      Print(log.name + ": out of memory while analysing it; skipped (the other applications " +
            "are still reported)");
      continue;
    }
    if (suppressed > 0) {
      Print(log.name + ": " + std::to_string(suppressed) +
            " more problem(s) not shown (all are in the JSON report)");
    }
    if (!analysis->read.analysable()) {
      Print(log.name + ": no Spark events could be read; not analysed");
      continue;
    }
    analyses.push_back(std::move(analysis));
  }
  if (analyses.empty()) return kExitNothingAnalysable;

  std::vector<const report::Analysis*> pointers;
  for (const auto& analysis : analyses) pointers.push_back(analysis.get());
  if (!WriteReportOutput(options.output, report::RenderReport(options.format, pointers))) {
    return kExitUsage;
  }
  if (options.fail_on.empty()) return kExitOk;
  const diagnosis::Severity threshold = options.fail_on == "critical"
                                            ? diagnosis::Severity::kCritical
                                            : diagnosis::Severity::kWarning;
  return report::AnyFindingAtOrAbove(pointers, threshold) ? kExitFindingsAtThreshold : kExitOk;
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
                   "points at once (default 0: every CPU this process may use; 1: all in one "
                   "thread, the same report)")
      ->check(CLI::Range(0, 256));
  AddCostOptions(command, options->cost);
  command->callback([options, &exit_code]() { exit_code = RunAnalyze(*options); });
}

}  // namespace sparkprof::cli
