"""``regressions``: a job's latest run has a stage (or the whole run) slower than its recent runs
beyond their noise, with the likely cause taken from the engine's findings and figures.

This is the one rule the Python package owns (it needs many runs; the engine sees one). Its
thresholds, and where they come from:
  * baseline = median of the stage's duration over the previous ``window`` runs (default 5) that
    ran the same stage (same id and name); at least ``min_history`` (3) of them.
  * noise: the modified z-score 0.6745 * (x - median) / MAD > 3.5 (Iglewicz and Hoaglin, "How to
    Detect and Handle Outliers", 1993): robust against one earlier slow run, unlike mean + k * sd.
    When every earlier run took the same time (MAD = 0) only the two floors below decide.
  * and at least 20% slower (``min_slowdown``): run-to-run variation of the same Spark job on a
    shared cluster commonly reaches 10-20% (scheduling, cold caches, spot capacity), so smaller
    changes are not worth an alert;
  * and at least 5 s slower (``min_extra_ms``): a 200 ms stage that doubled costs nothing.
Causes listed with a regression: the latest run's findings on that stage (marked "new" when no
earlier run had them), the stage reading at least ``min_slowdown`` more bytes than its median
(growth of the size that can explain a slowdown of that size), disk spill where there was none,
another task count, more failed task attempts, and fewer task slots at peak.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field

from sparkprof._native import human_bytes, human_duration_ms
from sparkprof.compare import finding_key, last_attempts
from sparkprof.store import HistoryStore, Run, StageFigures

MODIFIED_Z_LIMIT = 3.5
MODIFIED_Z_SCALE = 0.6745


@dataclass(frozen=True)
class RegressionRule:
    window: int = 5
    min_history: int = 3
    min_slowdown: float = 0.20
    min_extra_ms: int = 5000

    def is_regression(self, value_ms: int, history_ms: list[int]) -> bool:
        baseline = statistics.median(history_ms)
        if value_ms < baseline * (1 + self.min_slowdown) or value_ms - baseline < self.min_extra_ms:
            return False
        mad = statistics.median(abs(x - baseline) for x in history_ms)
        return mad == 0 or MODIFIED_Z_SCALE * (value_ms - baseline) / mad > MODIFIED_Z_LIMIT


@dataclass(frozen=True)
class Regression:
    job_key: str
    run_id: int
    app_id: str
    stage_id: int | None  # None: the whole run
    stage_name: str
    duration_ms: int
    baseline_ms: float  # median of the earlier runs
    earlier_run_ids: list[int]
    likely_causes: list[str] = field(default_factory=list)

    @property
    def slowdown(self) -> float:
        return self.duration_ms / self.baseline_ms if self.baseline_ms else float("inf")


def find_regressions(
    store: HistoryStore, job_key: str | None = None, rule: RegressionRule | None = None
) -> list[Regression]:
    rule = rule or RegressionRule()
    keys = [job_key] if job_key is not None else [key for key, _, _ in store.jobs()]
    found: list[Regression] = []
    for key in keys:
        runs = store.runs(key, limit=rule.window + 1)
        if len(runs) < rule.min_history + 1:
            continue
        found.extend(_job_regressions(key, runs[-1], runs[:-1], rule))
    return found


def _job_regressions(
    key: str, latest: Run, earlier: list[Run], rule: RegressionRule
) -> list[Regression]:
    regressions: list[Regression] = []
    durations = [run.duration_ms for run in earlier]
    if rule.is_regression(latest.duration_ms, durations):
        regressions.append(
            Regression(
                key,
                latest.id,
                latest.app_id,
                None,
                "(whole run)",
                latest.duration_ms,
                statistics.median(durations),
                [run.id for run in earlier],
                _run_causes(latest, earlier),
            )
        )
    earlier_stages = [(run, last_attempts(run)) for run in earlier]
    for stage_id, stage in sorted(last_attempts(latest).items()):
        same = [
            (run, stages[stage_id])
            for run, stages in earlier_stages
            if stage_id in stages and stages[stage_id].name == stage.name
        ]
        history = [previous.duration_ms for _, previous in same if previous.duration_ms >= 0]
        if len(history) < rule.min_history or stage.duration_ms < 0:
            continue
        if not rule.is_regression(stage.duration_ms, history):
            continue
        regressions.append(
            Regression(
                key,
                latest.id,
                latest.app_id,
                stage_id,
                stage.name,
                stage.duration_ms,
                statistics.median(history),
                [run.id for run, _ in same],
                _stage_causes(latest, stage, [previous for _, previous in same], earlier, rule),
            )
        )
    return regressions


def _stage_causes(
    latest: Run,
    stage: StageFigures,
    history: list[StageFigures],
    earlier: list[Run],
    rule: RegressionRule,
) -> list[str]:
    causes = []
    earlier_keys = {finding_key(row) for run in earlier for row in run.findings}
    for row in latest.findings:
        if stage.stage_id in json.loads(row.stage_ids_json):
            new = "new: " if finding_key(row) not in earlier_keys else ""
            causes.append(f"{new}{row.rule} ({row.severity}): {row.title}")
    read_now = stage.input_bytes + stage.shuffle_read_bytes
    read_before = statistics.median(s.input_bytes + s.shuffle_read_bytes for s in history)
    if read_before > 0 and read_now >= (1 + rule.min_slowdown) * read_before:
        causes.append(
            f"more data: read {human_bytes(read_now)} against a median of "
            f"{human_bytes(int(read_before))} in the earlier runs"
        )
    spilled_before = statistics.median(s.disk_bytes_spilled for s in history)
    if stage.disk_bytes_spilled > 0 and spilled_before == 0:
        causes.append(f"spilled {human_bytes(stage.disk_bytes_spilled)} to disk (earlier: none)")
    tasks_before = statistics.median(s.num_tasks for s in history)
    if stage.num_tasks != tasks_before:
        causes.append(f"{stage.num_tasks} tasks (earlier: {tasks_before:g})")
    if stage.failed_task_attempts > max(s.failed_task_attempts for s in history):
        causes.append(f"{stage.failed_task_attempts} failed task attempts")
    causes.extend(_cluster_causes(latest, earlier))
    return causes


def _run_causes(latest: Run, earlier: list[Run]) -> list[str]:
    earlier_keys = {finding_key(row) for run in earlier for row in run.findings}
    causes = [
        f"new: {row.rule} ({row.severity}): {row.title}"
        for row in latest.findings
        if finding_key(row) not in earlier_keys
    ]
    return causes + _cluster_causes(latest, earlier)


def _cluster_causes(latest: Run, earlier: list[Run]) -> list[str]:
    slots_now = json.loads(latest.cluster_json).get("peak_slots", 0)
    slots_before = statistics.median(
        json.loads(r.cluster_json).get("peak_slots", 0) for r in earlier
    )
    if slots_before and slots_now < slots_before:
        return [f"fewer task slots: {slots_now} at peak (earlier median {slots_before:g})"]
    return []


def describe(regression: Regression) -> str:
    where = (
        "the whole run"
        if regression.stage_id is None
        else f"stage {regression.stage_id} ({regression.stage_name})"
    )
    return (
        f"{regression.job_key}: run {regression.run_id} ({regression.app_id}), {where} took "
        f"{human_duration_ms(regression.duration_ms)} against a median of "
        f"{human_duration_ms(int(regression.baseline_ms))} over runs "
        f"{', '.join(map(str, regression.earlier_run_ids))} ({regression.slowdown:.2f}x)"
    )
