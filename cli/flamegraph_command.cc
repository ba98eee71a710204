// `sparkprof flamegraph INPUT`: renders a saved profile (*.sparkprof) or collapsed stacks as an
// interactive HTML flame graph, a diff against a second profile, or collapsed/speedscope exports.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#if defined(SPARKPROF_HAVE_ANALYZE)
#include "analyzer/codec/codec.h"
#include "analyzer/report/analysis.h"
#endif
#include "cli/commands.h"
#include "common/input_stream.h"
#include "flamegraph/collapsed_writer.h"
#include "flamegraph/diff.h"
#include "flamegraph/html_renderer.h"
#include "flamegraph/profile_loader.h"
#include "flamegraph/spark_classifier.h"
#include "flamegraph/speedscope_writer.h"

namespace sparkprof::cli {
namespace {

namespace fg = sparkprof::flamegraph;

// flamegraph.pl's default: frames narrower than 0.1 px of a 1200 px wide graph are left out.
constexpr double kReferenceWidthPixels = 1200.0;
constexpr const char* kDefaultHtmlMinWidth = "0.1px";

struct FlamegraphArgs {
  std::string input;
  std::string output;
  std::optional<int32_t> stage;
  std::string category;
  std::string title;
  std::string diff;
  std::string format = "html";
  std::string min_width;
  std::string weight = "samples";
};

// "0.1px" (of a 1200 px graph), "0.05%" or "0.05" (percent of the total) -> fraction of the total.
std::optional<double> ParseMinWidth(const std::string& text) {
  std::string number = text;
  double divisor = 100.0;
  if (number.ends_with("px")) {
    number.resize(number.size() - 2);
    divisor = kReferenceWidthPixels;
  } else if (number.ends_with("%")) {
    number.resize(number.size() - 1);
  }
  try {
    size_t used = 0;
    double value = std::stod(number, &used);
    if (used != number.size() || !std::isfinite(value) || value < 0) return std::nullopt;
    return value / divisor;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

constexpr std::string_view kProgram = "sparkprof flamegraph";

void PrintProblems(const std::string& source, const fg::ReadReport& report) {
  if (report.problem_count == 0) return;
  // Messages quote the input (frame names of a collapsed file): terminal-safe, one line each.
  PrintMessage(kProgram, source + ": " + std::to_string(report.problem_count) +
                             " problem(s) skipped while reading");
  for (const std::string& message : report.messages) PrintMessage("", "  " + message);
  if (report.problem_count > report.messages.size()) PrintMessage("", "  ...");
}

std::string DefaultOutputPath(const std::string& input, const std::string& format) {
  std::string stem = std::filesystem::path(input).stem().string();
  if (stem.empty()) stem = "flamegraph";
  if (format == "collapsed") return stem + ".collapsed";
  if (format == "speedscope") return stem + ".speedscope.json";
  return stem + ".html";
}

// A profile kept compressed as event logs are (the driver stores profile.sparkprof.zstd beside
// the event log) is decoded into memory first, bounded by max_file_bytes; any other file is read
// as it is.
Result<fg::LoadedProfile> LoadProfile(const std::string& path, const fg::LoadOptions& options) {
#if defined(SPARKPROF_HAVE_ANALYZE)
  SPARKPROF_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> file, OpenFileInputStream(path));
  SPARKPROF_ASSIGN_OR_RETURN(std::string head, ReadHead(*file, codec::kSniffBytes));
  const codec::Format format = codec::DetectFormat(head, path);
  const bool compressed = format == codec::Format::kZstd || format == codec::Format::kGzip ||
                          format == codec::Format::kLz4Block ||
                          format == codec::Format::kSnappyJava || format == codec::Format::kLzf;
  if (compressed) {
    // The file already open, its head served again: read once.
    SPARKPROF_ASSIGN_OR_RETURN(
        std::unique_ptr<InputStream> decoded,
        report::DecodeProfileFile(MakePrefixedInputStream(std::move(head), std::move(file)), path,
                                  options.max_file_bytes));
    std::string bytes;
    SPARKPROF_ASSIGN_OR_RETURN(const bool whole,
                               ReadAllWithin(*decoded, options.max_file_bytes, bytes));
    if (!whole) {
      return TooLarge(path + ": decompresses to more than the limit of " +
                      std::to_string(options.max_file_bytes) + " bytes");
    }
    return fg::LoadProfileFromBytes(bytes, path, options);
  }
#endif
  return fg::LoadProfileFromFile(path, options);
}

int RunFlamegraph(const FlamegraphArgs& args) {
  fg::LoadOptions load_options;
  load_options.stage_id = args.stage;
  // Collapsed lines without a [category=...] annotation get the agent's Spark frame rules.
  load_options.per_frame_classifier = fg::SparkPerFrameClassifier();
  if (!args.category.empty()) {
    load_options.category = fg::ParseCategory(args.category);
    if (!load_options.category) {
      std::fprintf(stderr, "sparkprof flamegraph: unknown --category \"%s\"\n",
                   args.category.c_str());
      return kExitUsage;
    }
  }
  load_options.weight =
      args.weight == "time" ? fg::WeightUnit::kNanoseconds : fg::WeightUnit::kSamples;
  if (!args.diff.empty() && args.format != "html") {
    std::fprintf(stderr, "sparkprof flamegraph: --diff renders HTML only (drop --format %s)\n",
                 args.format.c_str());
    return kExitUsage;
  }
  std::string min_width_text = args.min_width;
  if (min_width_text.empty() && args.format == "html") min_width_text = kDefaultHtmlMinWidth;
  double min_width_fraction = 0;
  if (!min_width_text.empty()) {
    std::optional<double> parsed = ParseMinWidth(min_width_text);
    if (!parsed) {
      std::fprintf(stderr,
                   "sparkprof flamegraph: --min-width \"%s\" is not like 0.1px, 0.05%% or 0.05\n",
                   min_width_text.c_str());
      return kExitUsage;
    }
    min_width_fraction = *parsed;
  }

  std::string output =
      args.output.empty() ? DefaultOutputPath(args.input, args.format) : args.output;
  if (!OutputIsNotAnInput(output, {args.input, args.diff}, kProgram)) return kExitUsage;

  auto exit_code_for = [](const Status& status) {
    return status.code() == StatusCode::kInvalidArgument ? kExitUsage : kExitNothingAnalysable;
  };
  Result<fg::LoadedProfile> before = LoadProfile(args.input, load_options);
  if (!before.ok()) {
    PrintMessage(kProgram, before.status().message());
    return exit_code_for(before.status());
  }
  PrintProblems(args.input, before->report);

  // With --diff the input is the "before" profile and OTHER is drawn ("after").
  std::optional<fg::LoadedProfile> after;
  if (!args.diff.empty()) {
    Result<fg::LoadedProfile> loaded = LoadProfile(args.diff, load_options);
    if (!loaded.ok()) {
      PrintMessage(kProgram, loaded.status().message());
      return exit_code_for(loaded.status());
    }
    PrintProblems(args.diff, loaded->report);
    after.emplace(std::move(loaded).value());
  }
  fg::ProfileModel& shown = after ? after->model : before->model;
  if (shown.total_weight() == 0) {
    PrintMessage(kProgram, (after ? args.diff : args.input) + ": no samples left to draw" +
                               (load_options.category ? " (after the --category filter)" : ""));
    return kExitNothingAnalysable;
  }
  auto min_total = static_cast<uint64_t>(
      std::ceil(min_width_fraction * static_cast<double>(shown.total_weight())));
  // Nothing reads `shown` after this (a diff reads `before`, and `shown` is then `after`): moving
  // it out lets pruning free its index first and spares a copy of an unpruned tree.
  fg::ProfileModel pruned = min_total > 1 ? std::move(shown).Pruned(min_total) : std::move(shown);

  std::string out;
  if (args.format == "collapsed") {
    fg::WriteCollapsed(pruned, {}, out);
  } else if (args.format == "speedscope") {
    fg::SpeedscopeWriteOptions options;
    options.name =
        args.title.empty() ? std::filesystem::path(args.input).filename().string() : args.title;
    fg::WriteSpeedscope(pruned, options, out);
  } else {
    fg::HtmlRenderOptions options;
    std::string input_name = std::filesystem::path(args.input).filename().string();
    if (!args.title.empty()) {
      options.title = args.title;
    } else if (after) {
      options.title =
          "Diff: " + input_name + " → " + std::filesystem::path(args.diff).filename().string();
    } else {
      options.title = "Flame graph: " + input_name;
    }
    if (args.stage) options.subtitle += "stage " + std::to_string(*args.stage);
    if (load_options.category) {
      options.subtitle += (options.subtitle.empty() ? "" : " · ");
      options.subtitle += "category " + args.category;
    }
    std::optional<fg::DiffProfile> diff;
    if (after) diff = fg::ComputeDiff(before->model, pruned);
    fg::RenderHtml(pruned, options, diff ? &*diff : nullptr, out);
  }

  if (!WriteReportOutput(output, out, kProgram)) return kExitUsage;
  if (output != "-") {
    PrintMessage(kProgram, "wrote " + output + " (" + std::to_string(out.size()) + " bytes, " +
                               std::to_string(pruned.node_count() - 1) + " frames)");
  }
  return kExitOk;
}

}  // namespace

void RegisterFlamegraphCommand(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<FlamegraphArgs>();
  CLI::App* command = app.add_subcommand(
      "flamegraph",
      "Render a profile (*.sparkprof or collapsed stacks) as an interactive HTML flame graph, a "
      "diff, or collapsed/speedscope exports");
  command
      ->add_option("input", args->input,
                   "Profile file (*.sparkprof, or compressed as the driver stores it beside "
                   "the event log: profile.sparkprof.zstd) or collapsed stacks")
      ->required();
  command->add_option("-o,--output", args->output,
                      "Output file; '-' for stdout (default: INPUT's name with .html, "
                      ".collapsed or .speedscope.json, in the current directory)");
  command->add_option("--stage", args->stage,
                      "Only samples of this Spark stage id (profile files)");
  command->add_option("--category", args->category,
                      "Only samples of this category: compute, serialization, s3a_write, "
                      "s3a_read, shuffle_write, shuffle_read, spill, file_io, gc, other, jit, "
                      "vm; off CPU (task threads, mode cpu+wall): python_wait, "
                      "shuffle_fetch_wait, io_wait, lock_wait, sleep, cpu_starved, "
                      "off_cpu_other; Python workers: python, python_off_cpu");
  command->add_option("--title", args->title, "Title of the graph");
  command->add_option("--diff", args->diff,
                      "Second profile ('after'): draw its widths, coloured by the normalised "
                      "change from INPUT (red more, blue less)");
  command->add_option("--format", args->format, "html (default), collapsed or speedscope")
      ->check(CLI::IsMember({"html", "collapsed", "speedscope"}));
  command->add_option("--min-width", args->min_width,
                      "Leave out frames narrower than this: 0.1px (of 1200 px), 0.05% or 0.05 "
                      "(percent). Default 0.1px for html, nothing left out for exports");
  command
      ->add_option("--weight", args->weight,
                   "Profile files: weigh stacks by sample count (samples) or time (time)")
      ->check(CLI::IsMember({"samples", "time"}));
  command->callback([args, &exit_code] { exit_code = RunFlamegraph(*args); });
}

}  // namespace sparkprof::cli
