// sparkprof: Spark performance profiler and advisor.
#include <cstdio>

#include "cli/commands.h"

int main(int argc, char** argv) {
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
  }
  return exit_code;
}
