// Each `sparkprof` subcommand lives in its own file and registers itself on the CLI11 app.
// The callback stores the exit code in `exit_code`.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "cli/output.h"

namespace sparkprof::cli {

// Exit codes shared by every subcommand (documented in README.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 1;                // bad command line
inline constexpr int kExitNothingAnalysable = 2;    // no input could be read at all
inline constexpr int kExitFindingsAtThreshold = 3;  // --fail-on matched a finding

void RegisterAnalyzeCommand(CLI::App& app, int& exit_code);
void RegisterFlamegraphCommand(CLI::App& app, int& exit_code);
void RegisterDemoCommand(CLI::App& app, int& exit_code);
void RegisterWhatifCommand(CLI::App& app, int& exit_code);

}  // namespace sparkprof::cli
