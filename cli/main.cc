// sparkprof: Spark performance profiler and advisor.
#include <cstdio>
#include <exception>
#include <new>

#include "cli/commands.h"

namespace {

int Run(int argc, char** argv) {
  CLI::App app{"sparkprof: why is my Spark job slow, and what do I change"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "sparkprof 0.1.0");
  int exit_code = sparkprof::cli::kExitOk;
#ifdef SPARKPROF_HAVE_ANALYZE
  sparkprof::cli::RegisterAnalyzeCommand(app, exit_code);
  sparkprof::cli::RegisterDemoCommand(app, exit_code);
  sparkprof::cli::RegisterWhatifCommand(app, exit_code);
#endif
#ifdef SPARKPROF_HAVE_FLAMEGRAPH
  sparkprof::cli::RegisterFlamegraphCommand(app, exit_code);
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : sparkprof::cli::kExitUsage;
  } catch (const std::bad_alloc&) {
    // Inputs are bounded (docs/limits.md); should memory still run out, say so, never abort.
    std::fputs("sparkprof: out of memory; see docs/limits.md for the limits that bound it\n",
               stderr);
    return sparkprof::cli::kExitUsage;
  }
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  // Every input error is a value with its file, line or offset; what still escapes (building the
  // command line, a library's own exception) is said in one line, never an abort.
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sparkprof: internal error: %s\n", e.what());
  } catch (...) {
    std::fputs("sparkprof: internal error (an exception of unknown type)\n", stderr);
  }
  return sparkprof::cli::kExitNothingAnalysable;
}
