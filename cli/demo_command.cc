// `sparkprof demo-log`: writes a realistic synthetic event log (a skewed join that spills, a slow
// write, a wait for executors) so the tool can be tried without a cluster.
#include <cstdio>
#include <memory>
#include <string>

#include "analyzer/codec/encode.h"
#include "analyzer/testing/synthetic_app.h"
#include "cli/commands.h"

namespace sparkprof::cli {

void RegisterDemoCommand(CLI::App& app, int& exit_code) {
  struct Options {
    std::string output;
    std::string codec = "plain";
  };
  auto options = std::make_shared<Options>();
  CLI::App* command = app.add_subcommand(
      "demo-log", "Write a synthetic Spark event log with known problems, for trying sparkprof");
  command->add_option("-o,--output", options->output, "file to write")->required();
  command->add_option("--codec", options->codec, "plain, lz4, snappy, zstd, lzf or gz")
      ->check(CLI::IsMember({"plain", "lz4", "snappy", "zstd", "lzf", "gz"}));
  command->callback([options, &exit_code]() {
    std::string log = testing::GenerateEventLog(testing::DemoApp());
    codec::Format format = codec::Format::kPlain;
    if (options->codec == "lz4") format = codec::Format::kLz4Block;
    if (options->codec == "snappy") format = codec::Format::kSnappyJava;
    if (options->codec == "zstd") format = codec::Format::kZstd;
    if (options->codec == "lzf") format = codec::Format::kLzf;
    if (options->codec == "gz") format = codec::Format::kGzip;
    std::string bytes = log;
    if (format != codec::Format::kPlain) {
      Result<std::string> encoded = codec::Encode(format, log);
      if (!encoded.ok()) {
        std::fprintf(stderr, "sparkprof: %s\n", encoded.status().message().c_str());
        exit_code = kExitUsage;
        return;
      }
      bytes = std::move(encoded).value();
    }
    if (!WriteReportOutput(options->output, bytes)) exit_code = kExitUsage;
  });
}

}  // namespace sparkprof::cli
