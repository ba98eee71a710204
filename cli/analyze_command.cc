// `sparkprof analyze PATH`: event logs in, report out.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "analyzer/report/analysis.h"
#include "analyzer/report/render.h"
#include "analyzer/source/log_source.h"
#include "cli/commands.h"

namespace sparkprof::cli {

namespace {

struct AnalyzeOptions {
  std::string path;
  std::string format = "text";
  std::string output;
  std::string fail_on;  // "", "warning" or "critical"
  bool quiet = false;
  int max_problems_printed = 20;
};

}  // namespace

bool WriteReportOutput(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return true;
  }
  std::ofstream file(path, std::ios::binary);
  file << text;
  if (!file) {
    std::fprintf(stderr, "sparkprof: cannot write %s\n", path.c_str());
    return false;
  }
  return true;
}

namespace {

int RunAnalyze(const AnalyzeOptions& options) {
  Result<source::DiscoveryResult> found = source::Discover(options.path);
  if (!found.ok()) {
    std::fprintf(stderr, "sparkprof: %s\n", found.status().message().c_str());
    return kExitNothingAnalysable;
  }
  for (const source::DiscoveryWarning& warning : found->warnings) {
    std::fprintf(stderr, "sparkprof: %s: %s\n", warning.path.c_str(), warning.message.c_str());
  }
  if (found->applications.empty()) {
    std::fprintf(stderr, "sparkprof: no event logs found under %s\n", options.path.c_str());
    return kExitNothingAnalysable;
  }

  std::vector<std::unique_ptr<report::Analysis>> analyses;
  for (const source::ApplicationLog& log : found->applications) {
    int printed = 0;
    int64_t suppressed = 0;
    eventlog::ReaderOptions reader_options;
    reader_options.on_problem = [&](const std::string& message, bool per_line) {
      if (options.quiet) return;
      if (!per_line || printed < options.max_problems_printed) {
        std::fprintf(stderr, "sparkprof: %s\n", message.c_str());
        ++printed;
      } else {
        ++suppressed;
      }
    };
    auto analysis = std::make_unique<report::Analysis>(report::Analyze(log, reader_options));
    if (suppressed > 0) {
      std::fprintf(stderr, "sparkprof: %s: %lld more problem(s) not shown (all are in the JSON report)\n",
                   log.name.c_str(), static_cast<long long>(suppressed));
    }
    if (!analysis->read.analysable()) {
      std::fprintf(stderr, "sparkprof: %s: no Spark events could be read; not analysed\n",
                   log.name.c_str());
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
  command->callback([options, &exit_code]() { exit_code = RunAnalyze(*options); });
}

}  // namespace sparkprof::cli
