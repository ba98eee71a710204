// The Markdown and HTML reports: strings from the log stay text (a synthetic demo log whose
// application name, SQL text / job description and stage name are hostile markup), the HTML page
// is self-contained, and the timeline's step series follow the model.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/report/html_report.h"
#include "analyzer/report/json_report.h"
#include "analyzer/report/markdown_report.h"
#include "analyzer/report/render.h"
#include "analyzer/report/text_report.h"
#include "analyzer/testing/analysis_test_util.h"
#include "analyzer/testing/synthetic_app.h"
#include "common/json_writer.h"

namespace sparkprof {
namespace {

using test_util::AnalyzeText;

constexpr const char* kHostileName = "<script>alert('name')</script> | `etl`";
constexpr const char* kHostileSql = "</script><img src=x onerror=alert(2)> SELECT a|b";
constexpr const char* kHostileStage = "<b onmouseover=alert(3)>join</b> at `Enrich`";

testing::SyntheticApp HostileApp() {
  testing::SyntheticApp app = testing::DemoApp();
  app.app_name = kHostileName;
  app.sql_description = kHostileSql;  // also the jobs' spark.job.description
  app.stages[1].name = kHostileStage;
  return app;
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

TEST(HtmlReportTest, StringsFromTheLogAreEscaped) {
  report::Analysis analysis = AnalyzeText(testing::GenerateEventLog(HostileApp()));
  ASSERT_EQ(analysis.model.app_name, kHostileName);
  std::string html = report::RenderHtml(analysis);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<b onmouseover"), std::string::npos);
  EXPECT_EQ(Count(html, "<script"), 1u) << "only the report's own script element";
  EXPECT_EQ(Count(html, "</script"), 1u);
  EXPECT_NE(html.find("<h1>&lt;script&gt;alert(&#39;name&#39;)&lt;/script&gt; | `etl`</h1>"),
            std::string::npos);
  EXPECT_NE(html.find("&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt; SELECT a|b"),
            std::string::npos);
  EXPECT_NE(html.find("&lt;b onmouseover=alert(3)&gt;join&lt;/b&gt; at `Enrich`"),
            std::string::npos);
}

TEST(HtmlReportTest, SelfContainedWithTimelineStagesAndFindings) {
  report::Analysis analysis = AnalyzeText(testing::GenerateEventLog(testing::DemoApp()));
  std::string html = report::RenderHtml(analysis);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';"),
            std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find(" src="), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_NE(html.find("<svg class=\"timeline\" id=\"app1-timeline\""), std::string::npos);
  EXPECT_EQ(Count(html, "<g class=\"stage-bar complete\">"), 3u);
  EXPECT_EQ(Count(html, "<path class=\"series executors\""), 1u);
  EXPECT_EQ(Count(html, "<path class=\"series tasks\""), 1u);
  EXPECT_EQ(Count(html, "<article class=\"finding "), analysis.findings.size());
  // The demo's first finding saves 19% of its wall time: a warning (severity.h); the executor
  // lost to memory is a failure and critical whatever it costs.
  EXPECT_NE(html.find("<article class=\"finding warning\" id=\"app1-finding-1\""),
            std::string::npos);
  EXPECT_NE(html.find("<article class=\"finding critical\""), std::string::npos);
  EXPECT_NE(html.find("id=\"app1-stage-1-0\""), std::string::npos);
  EXPECT_NE(html.find("href=\"docs/recipes/troubleshoot/data-skew-diagnosis.md\""),
            std::string::npos);
  EXPECT_NE(html.find("--conf spark.sql.adaptive.skewJoin.enabled=true"), std::string::npos);
}

// kMaxTimelineStageBars (docs/limits.md): 500,000 stages made an 82 MB page. At the limit every
// stage attempt is a bar; one more and the longest are drawn, with a note.
TEST(HtmlReportTest, TimelineStageBarsAtAndPastTheLimit) {
  constexpr int kLimit = 2000;
  auto app_with_stages = [](int count) {
    testing::SyntheticApp app = testing::DemoApp();
    testing::SyntheticStage stage = app.stages[0];
    stage.tasks = 1;
    stage.task_ms = 10;
    stage.skewed_tasks = 0;
    stage.failed_attempts = 0;
    app.stages.assign(static_cast<size_t>(count), stage);
    app.stages.back().task_ms = 5000;  // the longest: always drawn
    return app;
  };
  std::string at =
      report::RenderHtml(AnalyzeText(testing::GenerateEventLog(app_with_stages(kLimit))));
  EXPECT_EQ(Count(at, "<g class=\"stage-bar "), static_cast<size_t>(kLimit));
  EXPECT_EQ(at.find("stage attempts are drawn"), std::string::npos);
  std::string past =
      report::RenderHtml(AnalyzeText(testing::GenerateEventLog(app_with_stages(kLimit + 1))));
  EXPECT_EQ(Count(past, "<g class=\"stage-bar "), static_cast<size_t>(kLimit));
  EXPECT_NE(past.find("The 2000 longest of 2001 stage attempts are drawn"), std::string::npos);
  EXPECT_NE(past.find("<title>Stage " + std::to_string(kLimit) + ".0:"), std::string::npos);
  // Stage table rows (kMaxStageRows, also 2000) and job rows (kMaxJobRows, 1000; a job per stage).
  EXPECT_EQ(Count(at, "<tr id=\"app1-stage-"), static_cast<size_t>(kLimit));
  EXPECT_EQ(at.find("stage attempts; the JSON report"), std::string::npos);
  EXPECT_EQ(Count(past, "<tr id=\"app1-stage-"), static_cast<size_t>(kLimit));
  EXPECT_NE(past.find("The first 2000 of 2001"), std::string::npos);
  std::string jobs_at =
      report::RenderHtml(AnalyzeText(testing::GenerateEventLog(app_with_stages(1000))));
  EXPECT_EQ(jobs_at.find(" jobs.</p>"), std::string::npos);
  EXPECT_NE(past.find("The first 1000 of 2001 jobs.</p>"), std::string::npos);
}

TEST(HtmlReportTest, OnePageHasASectionPerApplication) {
  report::Analysis first = AnalyzeText(testing::GenerateEventLog(testing::DemoApp()));
  report::Analysis second = AnalyzeText(testing::GenerateEventLog(HostileApp()));
  std::string html = report::RenderHtml({&first, &second});
  EXPECT_EQ(Count(html, "<section class=\"application\""), 2u);
  EXPECT_NE(html.find("<a href=\"#app2\">"), std::string::npos);
  EXPECT_NE(html.find("id=\"app2-timeline\""), std::string::npos);
  EXPECT_NE(html.find("<title>sparkprof: 2 applications</title>"), std::string::npos);
}

// The report assembled section by section (as `analyze DIR` writes it while applications are
// still being analysed) is byte for byte the document written in one piece: for json, one
// JsonWriter nesting every report object; for text and md, the reports joined by a rule.
TEST(ReportAssemblerTest, SectionsMakeTheSameReportAsOnePiece) {
  report::Analysis demo = AnalyzeText(testing::GenerateEventLog(testing::DemoApp()));
  report::Analysis hostile = AnalyzeText(testing::GenerateEventLog(HostileApp()));
  const std::vector<std::vector<const report::Analysis*>> sets = {
      {&demo}, {&hostile, &demo}, {&demo, &hostile, &demo}};
  // The input's applications that gave no report end a report of several (none: empty list).
  report::NotAnalysedList not_analysed;
  not_analysed.entries = {{"logs/<b>x.gz</b>", "a zip archive compressed as gzip, ..."}};
  not_analysed.left_out = 2;
  for (const auto& [set, missing] :
       {std::pair{sets[0], not_analysed}, std::pair{sets[1], report::NotAnalysedList{}},
        std::pair{sets[2], not_analysed}}) {
    JsonWriter nested;
    if (set.size() == 1) {
      report::WriteJsonReport(*set[0], nested);
    } else {
      nested.BeginObject()
          .Field("schema", report::kReportSchema)
          .Field("schema_minor", report::kReportSchemaMinor)
          .Key("applications")
          .BeginArray();
      for (const report::Analysis* analysis : set) report::WriteJsonReport(*analysis, nested);
      nested.EndArray().Key("not_analysed").BeginArray();
      for (const source::DiscoveryWarning& entry : missing.entries) {
        nested.BeginObject().Field("path", entry.path).Field("why", entry.message).EndObject();
      }
      nested.EndArray()
          .Field("not_analysed_left_out", static_cast<int64_t>(missing.left_out))
          .EndObject();
    }
    std::string text;
    std::string markdown;
    for (size_t i = 0; i < set.size(); ++i) {
      if (i > 0) text += "\n" + std::string(78, '-') + "\n\n";
      if (i > 0) markdown += "\n---\n\n";
      text += report::RenderText(*set[i]);
      markdown += report::RenderMarkdown(*set[i]);
    }
    if (set.size() > 1 && !missing.empty()) {  // one application's report stays that alone
      text += "\n" + std::string(78, '-') + "\n\n" + report::RenderTextNotAnalysed(missing);
      markdown += "\n---\n\n" + report::RenderMarkdownNotAnalysed(missing);
      EXPECT_NE(text.find("\nNot analysed (no report above)\n  logs/<b>x.gz</b>: a zip archive "
                          "compressed as gzip, ...\n  2 more not analysed (all on stderr)\n"),
                std::string::npos);
      EXPECT_NE(markdown.find("- logs/&lt;b>x.gz&lt;/b>: a zip archive"), std::string::npos)
          << markdown.substr(markdown.size() - 300);
      const std::string html = report::RenderHtml(set, missing);
      EXPECT_NE(html.find("<li>not analysed: logs/&lt;b&gt;x.gz&lt;/b&gt;: a zip archive "
                          "compressed as gzip, ...</li>\n<li>2 more not analysed (all on "
                          "stderr)</li>"),
                std::string::npos);
    }
    const std::vector<std::pair<std::string, std::string>> expected = {
        {"json", nested.str() + "\n"}, {"text", text}, {"md", markdown}};
    for (const auto& [format, whole] : expected) {
      report::ReportAssembler assembler(format);
      std::string assembled;
      for (const report::Analysis* analysis : set) {
        assembled += assembler.Add(report::RenderSection(format, *analysis));
      }
      assembled += assembler.Finish(missing);
      EXPECT_EQ(assembled, whole) << format << ", " << set.size() << " application(s)";
      EXPECT_EQ(report::RenderReport(format, set, missing), whole) << format;
      EXPECT_EQ(assembler.applications(), static_cast<int64_t>(set.size()));
    }
  }
  report::ReportAssembler none("json");
  EXPECT_EQ(none.Finish(not_analysed), "");
  EXPECT_EQ(report::RenderHtml({&demo}, not_analysed).find("not analysed"), std::string::npos);
}

TEST(HtmlReportTest, TimelineSeriesFollowTheModel) {
  testing::SyntheticApp app = testing::DemoApp();  // 4 executors x 4 cores, one removed at the end
  report::Analysis analysis = AnalyzeText(testing::GenerateEventLog(app));
  report::TimelineSeries series = report::ComputeTimelineSeries(analysis.model);
  const int64_t start = analysis.model.start_time_ms;
  for (const auto* steps : {&series.executors, &series.task_slots, &series.running_tasks}) {
    ASSERT_FALSE(steps->empty());
    EXPECT_EQ(steps->front().time_ms, start);
    for (size_t i = 1; i < steps->size(); ++i) {
      EXPECT_LT((*steps)[i - 1].time_ms, (*steps)[i].time_ms);
      EXPECT_NE((*steps)[i - 1].value, (*steps)[i].value) << "no repeated steps";
      EXPECT_GE((*steps)[i].value, 0);
    }
  }
  int64_t max_executors = 0, max_slots = 0, max_tasks = 0;
  for (const auto& point : series.executors) max_executors = std::max(max_executors, point.value);
  for (const auto& point : series.task_slots) max_slots = std::max(max_slots, point.value);
  for (const auto& point : series.running_tasks) max_tasks = std::max(max_tasks, point.value);
  EXPECT_EQ(max_executors, app.executors);
  EXPECT_EQ(max_slots, app.executors * app.cores_per_executor);
  EXPECT_EQ(max_tasks, max_slots);
  EXPECT_EQ(series.executors.front().value, 0);
  // Executors register executor_start_delay_ms after the start; one is removed before the end.
  EXPECT_GE(series.executors[1].time_ms, start + app.executor_start_delay_ms);
  EXPECT_EQ(series.executors.back().value, app.executors - app.removed_executors);
  EXPECT_EQ(series.running_tasks.back().value, 0) << "every task ended";
}

TEST(MarkdownReportTest, StringsFromTheLogAreEscaped) {
  report::Analysis analysis = AnalyzeText(testing::GenerateEventLog(HostileApp()));
  std::string markdown = report::RenderMarkdown(analysis);
  EXPECT_EQ(markdown.find("<script"), std::string::npos);
  EXPECT_EQ(markdown.find("<img"), std::string::npos);
  EXPECT_EQ(markdown.find("<b "), std::string::npos);
  EXPECT_EQ(markdown.find("</"), std::string::npos);
  EXPECT_NE(markdown.find("# sparkprof report: &lt;script>alert('name')&lt;/script> \\| \\`etl\\`"),
            std::string::npos);
  EXPECT_NE(markdown.find("&lt;/script>&lt;img src=x onerror=alert(2)> SELECT a\\|b"),
            std::string::npos);
  EXPECT_NE(markdown.find("&lt;b onmouseover=alert(3)>join&lt;/b> at \\`Enrich\\`"),
            std::string::npos);
  // Every table row keeps its column count: no unescaped '|' from the log splits a cell.
  for (size_t begin = 0, end; begin < markdown.size(); begin = end + 1) {
    end = markdown.find('\n', begin);
    if (end == std::string::npos) end = markdown.size();
    std::string line = markdown.substr(begin, end - begin);
    if (line.rfind("| job |", 0) == 0 || line.rfind("| stage |", 0) == 0) {
      size_t header_pipes = Count(line, "|");
      size_t row = end + 1;
      row = markdown.find('\n', row) + 1;  // skip the delimiter row
      while (row < markdown.size() && markdown[row] == '|') {
        size_t row_end = markdown.find('\n', row);
        std::string cells = markdown.substr(row, row_end - row);
        EXPECT_EQ(Count(cells, "|") - Count(cells, "\\|"), header_pipes) << cells;
        row = row_end + 1;
      }
    }
  }
}

TEST(MarkdownReportTest, HasTheTextReportsSections) {
  report::Analysis analysis = AnalyzeText(testing::GenerateEventLog(testing::DemoApp()));
  std::string markdown = report::RenderMarkdown(analysis);
  for (const char* heading :
       {"## Work", "## Phase breakdown", "## Findings (most important first",
        "### 1. warning: ", "## Configuration changes", "## Longest stages", "## Input"}) {
    EXPECT_NE(markdown.find(heading), std::string::npos) << heading;
  }
  EXPECT_NE(markdown.find("| resource wait | 20.3 s | 12.5% |"), std::string::npos);
  EXPECT_NE(markdown.find("- `spark.sql.adaptive.skewJoin.enabled=true` — because"),
            std::string::npos);
  EXPECT_NE(markdown.find("\n--conf spark.hadoop.fs.s3a.committer.name=magic\n"),
            std::string::npos);
}

// The phase breakdown in every format: compute says it includes waits when no task logged a CPU
// time; with one, task wait is unattributed, or split by kind from a profile's off-CPU samples.
TEST(ReportPhasesTest, TaskWaitUnattributedOrByKind) {
  report::Analysis analysis = AnalyzeText(testing::GenerateEventLog(testing::DemoApp()));
  auto compact_json = [&] {
    std::string json = report::RenderJson({&analysis});
    std::erase_if(json, [](char c) { return c == ' ' || c == '\n'; });
    return json;
  };
  diagnosis::PhaseBreakdown& p = analysis.phases;
  ASSERT_TRUE(p.cpu_measured);  // the generator logs CPU time; as a log without any:
  p.cpu_measured = false;
  p.compute_ms += p.task_wait_ms;
  p.task_wait_ms = 0;
  const std::string not_logged = "compute (CPU time not logged: includes waits)";
  EXPECT_NE(report::RenderText(analysis).find("(CPU time not logged: includes waits)"),
            std::string::npos);
  EXPECT_EQ(report::RenderText(analysis).find("task wait"), std::string::npos);
  EXPECT_NE(report::RenderMarkdown(analysis).find("| " + not_logged + " |"), std::string::npos);
  EXPECT_NE(report::RenderHtml(analysis).find(not_logged), std::string::npos);
  EXPECT_NE(compact_json().find("\"task_wait\":{\"ms\":0,\"ratio\":0"), std::string::npos);
  EXPECT_NE(compact_json().find("\"cpu_measured\":false"), std::string::npos);

  // CPU time logged: half of the old compute waited.
  p.cpu_measured = true;
  p.task_wait_ms = p.compute_ms / 2;
  p.compute_ms -= p.task_wait_ms;
  ASSERT_GT(p.task_wait_ms, 1000);
  const std::string text = report::RenderText(analysis);
  EXPECT_EQ(text.find("not logged"), std::string::npos);
  EXPECT_NE(text.find("  task wait "), std::string::npos);
  EXPECT_NE(text.find("  (unattributed)\n"), std::string::npos);
  EXPECT_NE(report::RenderMarkdown(analysis).find("| task wait (unattributed) | "),
            std::string::npos);
  const std::string html = report::RenderHtml(analysis);
  EXPECT_NE(html.find("<span class=\"phase task-wait\""), std::string::npos);
  EXPECT_NE(html.find("task wait (unattributed)"), std::string::npos);
  EXPECT_NE(html.find(".task-wait {"), std::string::npos);
  EXPECT_NE(compact_json().find("\"task_wait\":{\"ms\":" + std::to_string(p.task_wait_ms) +
                                ",\"ratio\":"),
            std::string::npos);
  EXPECT_EQ(compact_json().find("\"by_kind\""), std::string::npos);

  // A profile with off-CPU samples: 3 parts Python worker, 1 part I/O (the shuffle fetch waits
  // are in the shuffle phase already).
  auto profile = std::make_shared<profile::ApplicationProfile>();
  profile->modes = {"cpu+wall"};
  profile::StageProfile stage;
  stage.stage_id = 0;
  stage.category_ns[CategoryIndex(Category::kCompute)] = 2'000'000'000;
  stage.category_ns[CategoryIndex(Category::kPythonWait)] = 3'000'000'000;
  stage.category_ns[CategoryIndex(Category::kIoWait)] = 1'000'000'000;
  stage.category_ns[CategoryIndex(Category::kShuffleFetchWait)] = 4'000'000'000;
  stage.task_ns = 10'000'000'000;
  stage.on_cpu_ns = 2'000'000'000;
  stage.off_cpu_ns = 8'000'000'000;
  profile->stages.push_back(stage);
  analysis.profile = profile;
  const int64_t io_ms = p.task_wait_ms / 4;
  const int64_t python_ms = p.task_wait_ms - io_ms;
  const std::string by_kind_text = report::RenderText(analysis);
  EXPECT_EQ(by_kind_text.find("(unattributed)"), std::string::npos);
  EXPECT_NE(by_kind_text.find("\n    python_wait  "), std::string::npos);
  EXPECT_LT(by_kind_text.find("\n    python_wait  "), by_kind_text.find("\n    io_wait  "));
  EXPECT_EQ(by_kind_text.find("\n    shuffle_fetch_wait"), std::string::npos);
  EXPECT_NE(report::RenderMarkdown(analysis).find("| &nbsp;&nbsp;`python_wait` | "),
            std::string::npos);
  EXPECT_NE(report::RenderHtml(analysis).find("<tr class=\"kind\"><td><code>io_wait</code>"),
            std::string::npos);
  EXPECT_NE(compact_json().find("\"by_kind\":{\"python_wait\":" + std::to_string(python_ms) +
                                ",\"io_wait\":" + std::to_string(io_ms) + "}"),
            std::string::npos)
      << compact_json().substr(compact_json().find("\"task_wait\""), 200);
}

TEST(MarkdownReportTest, EscapeMarkdown) {
  EXPECT_EQ(report::EscapeMarkdown("a|b`c<d&e"), "a\\|b\\`c&lt;d&amp;e");
  EXPECT_EQ(report::EscapeMarkdown("*x* _y_ [z](u) #1 ~s~ \\"),
            "\\*x\\* \\_y\\_ \\[z\\](u) \\#1 \\~s\\~ \\\\");
  EXPECT_EQ(report::EscapeMarkdown("line\nbreak\x1b[31m"), "line break \\[31m");
}

}  // namespace
}  // namespace sparkprof
