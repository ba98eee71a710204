// The report as Markdown (GitHub-flavoured tables): the text report's content, for pasting into a
// pull request, a ticket or a wiki. Strings from the log are escaped so they stay text.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzer/diagnosis/finding.h"
#include "analyzer/diagnosis/phase_breakdown.h"
#include "analyzer/report/analysis.h"

namespace sparkprof::report {

std::string RenderMarkdown(const Analysis& analysis);

// What ends the report of several applications: those of the input that gave no report, with why.
std::string RenderMarkdownNotAnalysed(const NotAnalysedList& not_analysed);

// Escapes `text` for Markdown prose and table cells: `\ ` * _ [ ] | # ~` get a backslash, `<`
// and `&` become character references, control characters and line breaks become spaces.
std::string EscapeMarkdown(std::string_view text);

// Pieces the Markdown and HTML reports share.

// An evidence value in its unit, for people: "4m 12s", "1.5 GiB", "0.73", "128".
std::string FormatEvidenceValue(const diagnosis::Evidence& evidence);

// The phases of the breakdown in report order, with display names: compute says when it
// includes waits (no CPU time logged; task wait then has no row), task wait is followed by its
// parts by kind from a profile with off-CPU samples (diagnosis::TaskWaitByKind), or says it is
// unattributed.
struct PhaseRow {
  std::string name;       // "compute", "task wait (unattributed)", a kind: "python_wait"
  std::string css_class;  // "compute", "task-wait" (a kind's row: its phase's)
  int64_t ms = 0;
  bool kind = false;  // a part of the phase above, not a phase of its own
};
std::vector<PhaseRow> PhaseRows(const diagnosis::PhaseBreakdown& phases,
                                const profile::ApplicationProfile* profile);

// The backlog after the first slot, as a reader can picture it: "tasks waited for a free slot
// during 1m 20s (66% of the wall time), at most 12 at once"; "" when none waited. (The summed
// task-ms queued, PhaseBreakdown::starved_task_ms, is true arithmetic but no one can picture
// hours of task time for a minutes-long run.)
std::string BacklogText(const diagnosis::PhaseBreakdown& phases);

// Photon's peak memory of one task by both definitions, named: its operators' peaks summed
// (sparkprof's peak_execution_memory_bytes_max, an upper bound) and its largest operator's
// (spark-rapids-tools' figure, a lower bound); "" when no task's peak came from Photon.
std::string PhotonPeakMemoryText(const Totals& totals);

// The findings' configuration changes that can be pasted as they are (no alternatives, no
// placeholders, one value per key, the most costly finding's value first).
std::vector<std::pair<std::string, std::string>> PasteableConfigChanges(
    const std::vector<diagnosis::Finding>& findings);

}  // namespace sparkprof::report
