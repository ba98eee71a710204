"""``recommend --job JOB``: settings for a job's next run, from its own history, each with the runs
behind it and a confidence. Nothing is estimated here: the values are the engine's (its findings'
config recommendations) or the ones the job's faster runs actually used.

Sources, and the thresholds of this heuristic:
  * The latest run's findings: every ``config`` recommendation the engine's rules computed. High
    confidence when the same setting was recommended in at least 3 of the recent runs (a lasting
    problem, not one bad night), medium otherwise; low when someone rejected that rule for this job
    (``sparkprof feedback``).
  * Faster comparable runs: earlier runs of the job that read within 0.5x-2x of the latest run's
    input bytes (the same work, roughly), had no failed job (no ``job-failures``: a killed run is
    short because it stopped) and finished at least 10% faster (beyond the usual
    run-to-run noise, see regressions.py); a Spark setting that all of them share with another
    value than the latest run's is recommended. Confidence: 1 run low, 2 medium, 3 or more high.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from typing import Any

from sparkprof._native import human_duration_ms
from sparkprof.advice_record import HitRate
from sparkprof.store import HistoryStore, Run

MIN_LASTING_RUNS = 3
INPUT_RANGE = (0.5, 2.0)
MIN_FASTER = 0.10
# Settings that describe the run rather than tune it.
NOT_TUNING = (
    "spark.app.",
    "spark.driver.host",
    "spark.driver.port",
    "spark.executor.id",
    "spark.sparkprof.jobKey",
    "spark.openlineage.",
    "spark.eventLog.",
    "spark.ui.",
    "spark.submit.pyFiles",
    "spark.yarn.tags",
    "spark.jars",
    "spark.repl.",
)


@dataclass(frozen=True)
class Recommendation:
    setting: str
    value: str
    current: str | None  # the latest run's value; None when it was not set
    source: str  # "finding <rule>" or "faster runs"
    reason: str
    evidence_run_ids: list[int]
    confidence: str  # high, medium, low


@dataclass(frozen=True)
class Recommendations:
    job_key: str
    latest_run_id: int
    runs_considered: int
    items: list[Recommendation] = field(default_factory=list)
    # The advisor's own record (advice_record.py): how often applied advice helped this job, per
    # rule; and, for the rules recommended now, over every job in the store.
    job_record: list[HitRate] = field(default_factory=list)
    rule_record: list[HitRate] = field(default_factory=list)
    # The closed loop on memory advice (advice_record.MemoryRecord, at most MEMORY_OUTCOMES, the
    # newest first): each memory finding, how the next run took it, whether either died, and the
    # peak against its limit in both runs.
    memory_outcomes: list[dict[str, Any]] = field(default_factory=list)


MEMORY_OUTCOMES = 5


def _settings(run: Run) -> dict[str, str]:
    settings: dict[str, str] = json.loads(run.settings_json)
    return settings


def _report(run: Run) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(run.report_json)
    return report


def recommend(store: HistoryStore, job_key: str, window: int = 10) -> Recommendations:
    runs = store.runs(job_key, limit=window)
    if not runs:
        raise LookupError(f"no runs of job {job_key!r}")
    latest = runs[-1]
    current = _settings(latest)
    rejected = {
        row.rule for run in runs for row in store.feedback(run.id) if row.verdict == "reject"
    }
    items = _from_findings(latest, runs, current, rejected) + _from_faster_runs(
        latest, runs, current
    )
    rules_now = {item.source.removeprefix("finding ") for item in items}
    return Recommendations(
        job_key,
        latest.id,
        len(runs),
        items,
        store.advice_hit_rates(by="rule", job_key=job_key),
        [rate for rate in store.advice_hit_rates(by="rule") if rate.key in rules_now],
        [vars(record) for record in store.memory_advice([job_key], MEMORY_OUTCOMES)],
    )


def _config_recommendations(run: Run) -> list[tuple[str, dict[str, Any]]]:
    return [
        (finding["rule"], item)
        for finding in _report(run)["findings"]
        for item in finding["recommendations"]
        if item["kind"] == "config" and item.get("config")
    ]


def _from_findings(
    latest: Run, runs: list[Run], current: dict[str, str], rejected: set[str]
) -> list[Recommendation]:
    recommended_in: dict[str, list[int]] = {}
    for run in runs:
        for _, item in _config_recommendations(run):
            ids = recommended_in.setdefault(item["config"], [])
            if run.id not in ids:
                ids.append(run.id)
    items = []
    seen: set[str] = set()
    for rule, item in _config_recommendations(latest):
        setting = item["config"]
        if setting in seen:
            continue
        seen.add(setting)
        evidence = recommended_in[setting]
        if rule in rejected:
            confidence = "low"
        elif len(evidence) >= MIN_LASTING_RUNS:
            confidence = "high"
        else:
            confidence = "medium"
        items.append(
            Recommendation(
                setting=setting,
                value=str(item.get("value", "")),
                current=current.get(setting),
                source=f"finding {rule}",
                reason=str(item.get("reason", "")),
                evidence_run_ids=evidence,
                confidence=confidence,
            )
        )
    return items


def _from_faster_runs(
    latest: Run, runs: list[Run], current: dict[str, str]
) -> list[Recommendation]:
    latest_input = _report(latest)["totals"]["input_bytes"]
    faster = []
    for run in runs[:-1]:
        run_input = _report(run)["totals"]["input_bytes"]
        comparable = (
            latest_input == run_input == 0
            or INPUT_RANGE[0] * latest_input <= run_input <= INPUT_RANGE[1] * latest_input
        )
        # A run whose job failed finished sooner by not finishing: its settings (the memory that
        # killed it) are no example.
        failed = any(f["rule"] == "job-failures" for f in _report(run)["findings"])
        if comparable and not failed and run.duration_ms <= (1 - MIN_FASTER) * latest.duration_ms:
            faster.append(run)
    if not faster:
        return []
    settings = [_settings(run) for run in faster]
    median_ms = statistics.median(run.duration_ms for run in faster)
    confidence = "high" if len(faster) >= 3 else "medium" if len(faster) == 2 else "low"
    items = []
    for setting in sorted(set(settings[0]).intersection(*settings[1:])):
        if setting.startswith(NOT_TUNING):
            continue
        values = {s[setting] for s in settings}
        if len(values) != 1:
            continue
        (value,) = values
        if current.get(setting) == value:
            continue
        items.append(
            Recommendation(
                setting=setting,
                value=value,
                current=current.get(setting),
                source="faster runs",
                reason=f"the {len(faster)} comparable runs that finished faster (median "
                f"{human_duration_ms(int(median_ms))} against "
                f"{human_duration_ms(latest.duration_ms)}) all used it",
                evidence_run_ids=[run.id for run in faster],
                confidence=confidence,
            )
        )
    return items
