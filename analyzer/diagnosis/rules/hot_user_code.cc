// hot-user-code: the profile shows where the user's own code spends a stage's CPU, and names
// the per-record patterns that cost far more than they should:
//   * regular expressions compiled per call (Pattern.compile, String.split/replaceAll/matches
//     with a pattern that compiles), exceptions created per record (Throwable.<init> /
//     fillInStackTrace), date formats built or parsed per record (SimpleDateFormat,
//     DateTimeFormatter.ofPattern), reflection per record, JSON parsed per record;
//     each under the application frame that calls it. Hoisting the compile, the format or the
//     lookup out of the per-record path removes nearly all of that time: efficiency 80-95%
//     (JSON 20-50%: the parse stays, a faster parser or from_json on whole columns helps).
//   * otherwise, one application frame holding >= 50% (kMinShareAlone) of the stage's sampled
//     on-CPU time: named so the user knows where to look; its saving depends on the change, so
//     no saving is claimed and the finding is info.
// Judgement: profile_judgement.h (shares of the stage's sampled task time; on-CPU times with their
// share of the run delay, StageProfile::RunnableNs).
#include "analyzer/diagnosis/rules/profile_judgement.h"
#include "analyzer/diagnosis/rules/rules.h"

namespace sparkprof::diagnosis::rules {

namespace {

struct PatternAdvice {
  profile::Pattern pattern;
  const char* what;
  const char* fix;
  double low;
  double high;
};
constexpr PatternAdvice kAdvice[] = {
    {profile::Pattern::kRegexCompile, "compiling regular expressions",
     "compile the pattern once (a static final Pattern, or outside the per-record function) "
     "and reuse it; String.split/replaceAll/matches compile their pattern on every call",
     0.80, 0.95},
    {profile::Pattern::kExceptionCreation, "creating exceptions",
     "do not use exceptions for control flow per record (check before parsing; "
     "Integer.parseInt on bad input throws); an exception fills in its stack trace on creation",
     0.80, 0.95},
    {profile::Pattern::kDateFormatting, "building and parsing date formats",
     "create the formatter once (DateTimeFormatter is thread-safe) or use Spark's to_date / "
     "to_timestamp on the column",
     0.80, 0.95},
    {profile::Pattern::kReflection, "reflective calls and class lookups",
     "look the method or class up once, outside the per-record function", 0.80, 0.95},
    {profile::Pattern::kJsonParsing, "parsing JSON",
     "parse once per record with a reused ObjectMapper, or use from_json / get_json_object on "
     "the column",
     0.20, 0.50},
};

}  // namespace

void HotUserCode(const DiagnosisInput& input, std::vector<Finding>& out) {
  bool any_pattern = false;
  for (const PatternAdvice& advice : kAdvice) {
    std::vector<ProfiledCause> causes =
        StagesWhere(input, [&](const profile::StageProfile& stage) -> uint64_t {
          const profile::PatternTime* time = stage.FindPattern(advice.pattern);
          return time != nullptr && !time->application_frame.empty()
                     ? stage.RunnableNs(time->on_cpu_ns)
                     : 0;
        });
    if (causes.empty()) continue;
    const ProfiledCause& top = causes.front();
    const profile::PatternTime* time = top.stage.FindPattern(advice.pattern);
    uint64_t total = 0;
    for (const ProfiledCause& cause : causes) total += cause.ns;
    Finding f = NewProfileFinding(
        input, "hot-user-code", causes, profile::PatternName(advice.pattern), total,
        {{"application_frame_ms", WholeMs(time->application_frame_ns), "ms"}}, "top_stage_share");
    f.title =
        "Tasks spend their CPU " + std::string(advice.what) + " in " + time->application_frame;
    for (const ProfiledCause& cause : causes) {
      const profile::PatternTime* at = cause.stage.FindPattern(advice.pattern);
      f.frames.push_back({cause.stage_id, at->application_frame, at->application_frame, "compute",
                          static_cast<double>(at->on_cpu_ns) / 1e6});
    }
    f.explanation = "Stage " + std::to_string(top.stage_id) + " spent " +
                    TimeAndShare(top, time->on_cpu_ns) + " " + advice.what + ", called from `" +
                    time->application_frame + "` (" +
                    HumanDurationMs(static_cast<int64_t>(time->application_frame_ns / 1'000'000)) +
                    " of it): work that could be done once is done for every record.";
    f.recommendations.push_back(
        {"", advice.fix, "the cost is per call; the result is the same every time"});
    if (!JudgeProfiledCauses(input, causes,
                             {advice.low, advice.high, "the per-record work hoisted out"}, f)) {
      continue;
    }
    any_pattern = true;
    out.push_back(std::move(f));
  }
  if (any_pattern) return;
  // No known pattern: the application frame holding most of a stage's on-CPU time, if it holds
  // at least half of it.
  std::vector<ProfiledCause> causes =
      StagesWhere(input, [](const profile::StageProfile& stage) -> uint64_t {
        if (stage.top_application.empty() || stage.on_cpu_ns == 0) return 0;
        const profile::FrameTime& frame = stage.top_application.front();
        return 2 * frame.on_cpu_inclusive_ns >= stage.on_cpu_ns
                   ? stage.RunnableNs(frame.on_cpu_inclusive_ns)
                   : 0;
      });
  if (causes.empty()) return;
  const ProfiledCause& top = causes.front();
  const profile::FrameTime& frame = top.stage.top_application.front();
  Finding f = NewFinding("hot-user-code");
  f.confidence = ProfileConfidence(input, top);
  const double cpu_share =
      static_cast<double>(frame.on_cpu_inclusive_ns) / static_cast<double>(top.stage.on_cpu_ns);
  f.title = Fixed(100 * cpu_share, 0) + "% of stage " + std::to_string(top.stage_id) +
            "'s CPU is in " + frame.frame;
  f.evidence = {
      {"application_frame_on_cpu_ms", WholeMs(frame.on_cpu_inclusive_ns), "ms"},
      {"stage_on_cpu_ms", WholeMs(top.stage.on_cpu_ns), "ms"},
      {"share_of_stage_cpu", cpu_share, "ratio"},
      // Its own code on CPU, not in what it calls (at most the inclusive figure above).
      {"self_on_cpu_ms", WholeMs(frame.on_cpu_self_ns), "ms"},
  };
  for (size_t i = 0; i < top.stage.top_application.size() && i < 3; ++i) {
    const profile::FrameTime& shown = top.stage.top_application[i];
    f.frames.push_back({top.stage_id, shown.frame, shown.frame, "compute",
                        static_cast<double>(shown.on_cpu_inclusive_ns) / 1e6});
  }
  f.explanation = "The application's own code `" + frame.frame + "` (and what it calls) held " +
                  HumanDurationMs(static_cast<int64_t>(frame.on_cpu_inclusive_ns / 1'000'000)) +
                  " of stage " + std::to_string(top.stage_id) + "'s " +
                  HumanDurationMs(static_cast<int64_t>(top.stage.on_cpu_ns / 1'000'000)) +
                  " on CPU. The stage's flame graph shows which of its calls cost most; no known "
                  "per-record pattern (regex compilation, exceptions, date formats, reflection) "
                  "stands out, so the saving depends on the change.";
  f.recommendations.push_back({"", "optimise " + frame.frame + " guided by the stage's flame graph",
                               "it is where the stage's CPU goes"});
  // Named whatever it saves (the share that matters here is of the stage's CPU, checked above).
  JudgeProfiledCauses(input, causes, {0.0, 0.0, "unknown until the code changes"}, f,
                      /*report_regardless=*/true);
  out.push_back(std::move(f));
}

}  // namespace sparkprof::diagnosis::rules
