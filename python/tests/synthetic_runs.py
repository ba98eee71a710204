"""Runs of one job for the history tests, made from the CLI's synthetic log: each run moves in
time (its own application id and start) and can stretch tasks of a stage, which the engine then
reads as a slower stage (and, for one slow task, as data skew)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DAY_MS = 86_400_000
TIME_KEYS = (
    "Timestamp",
    "Submission Time",
    "Completion Time",
    "Launch Time",
    "Finish Time",
    "time",
)


def _shift(value: Any, offset: int) -> Any:
    if isinstance(value, dict):
        return {
            k: (
                v + offset if k in TIME_KEYS and isinstance(v, int) and v > 0 else _shift(v, offset)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_shift(item, offset) for item in value]
    return value


def make_run(
    demo_log: Path,
    into: Path,
    day: int,
    *,
    stage_factor: dict[int, float] | None = None,
    slow_task: tuple[int, float] | None = None,
    settings: dict[str, str] | None = None,
    duration_factor: float = 1.0,
    bytes_factor: float = 1.0,
    start_ms: int | None = None,
) -> Path:
    """Writes run ``day`` of the job into ``into``: every time moved ``day`` days, every task of
    stage s stretched by ``stage_factor[s]``, and the longest task of ``slow_task[0]`` stretched
    by ``slow_task[1]``; the stage completes that much later. ``settings`` replace Spark
    properties; ``duration_factor`` stretches the application's end; ``bytes_factor`` scales the
    bytes every task read and wrote (its input and output metrics); ``start_ms`` moves the run to
    start then instead of ``day`` days later."""
    stage_factor = stage_factor or {}
    events = [json.loads(line) for line in demo_log.read_text().splitlines() if line.strip()]
    longest: dict[int, tuple[int, int]] = {}  # stage -> (task id, duration)
    for event in events:
        if event["Event"] == "SparkListenerTaskEnd":
            info = event["Task Info"]
            duration = info["Finish Time"] - info["Launch Time"]
            stage = event["Stage ID"]
            if stage not in longest or duration > longest[stage][1]:
                longest[stage] = (info["Task ID"], duration)
    extra_ms: dict[int, int] = {}
    start = 0
    for event in events:
        if event["Event"] != "SparkListenerTaskEnd":
            continue
        metrics = event.get("Task Metrics") or {}
        for group, key in (("Input Metrics", "Bytes Read"), ("Output Metrics", "Bytes Written")):
            if key in metrics.get(group, {}):
                metrics[group][key] = int(metrics[group][key] * bytes_factor)
        stage, info = event["Stage ID"], event["Task Info"]
        factor = stage_factor.get(stage, 1.0)
        if slow_task and stage == slow_task[0] and info["Task ID"] == longest[stage][0]:
            factor *= slow_task[1]
        if factor != 1.0:
            duration = info["Finish Time"] - info["Launch Time"]
            stretched = int(duration * factor)
            info["Finish Time"] = info["Launch Time"] + stretched
            extra_ms[stage] = max(extra_ms.get(stage, 0), stretched - duration)
    for event in events:
        if event["Event"] == "SparkListenerStageCompleted":
            info = event["Stage Info"]
            info["Completion Time"] += extra_ms.get(info["Stage ID"], 0)
        if event["Event"] == "SparkListenerApplicationStart":
            event["App ID"] = f"application_1700000000000_{day:04d}"
            start = event["Timestamp"]
        if event["Event"] == "SparkListenerEnvironmentUpdate":
            event["Spark Properties"].update(settings or {})
        if event["Event"] == "SparkListenerApplicationEnd":
            event["Timestamp"] = start + int((event["Timestamp"] - start) * duration_factor)
    path = into / f"application_1700000000000_{day:04d}"
    offset = day * DAY_MS if start_ms is None else start_ms - start
    path.write_text("".join(json.dumps(_shift(e, offset)) + "\n" for e in events))
    return path


def fill_history(
    store: Any, template: Any, jobs: int, runs_per_job: int, first_job: int = 0
) -> int:
    """Adds ``jobs`` x ``runs_per_job`` runs to ``store`` (a HistoryStore) in bulk, each a copy of
    the stored run ``template`` (its report, settings and findings) under its own application id,
    job key ``job-NNNNN`` and start (later jobs start later): a history as long as a fleet's
    without analysing a log per run. Returns the runs added."""
    from sqlalchemy import func, insert, select

    from sparkprof.store.schema import FindingRow, Run

    columns = [c.key for c in Run.__table__.columns if c.key not in ("id",)]
    base = {key: getattr(template, key) for key in columns}
    findings = [
        {c.key: getattr(f, c.key) for c in FindingRow.__table__.columns if c.key not in ("id",)}
        for f in template.findings
    ]
    with store.session() as session, session.begin():
        next_id = (session.scalar(select(func.max(Run.id))) or 0) + 1
        run_rows: list[dict[str, Any]] = []
        finding_rows: list[dict[str, Any]] = []
        for job in range(first_job, first_job + jobs):
            for index in range(runs_per_job):
                start = template.start_ms + (job * runs_per_job + index) * 60_000
                run_rows.append(
                    {
                        **base,
                        "id": next_id,
                        "app_id": f"application_{job:05d}_{index:04d}",
                        "job_key": f"job-{job:05d}",
                        "start_ms": start,
                        "end_ms": start + template.duration_ms,
                        "duration_ms": template.duration_ms + index * 1000,
                    }
                )
                finding_rows.extend({**f, "run_id": next_id} for f in findings)
                next_id += 1
                if len(run_rows) >= 2000:
                    session.execute(insert(Run), run_rows)
                    session.execute(insert(FindingRow), finding_rows)
                    run_rows, finding_rows = [], []
        if run_rows:
            session.execute(insert(Run), run_rows)
            if finding_rows:
                session.execute(insert(FindingRow), finding_rows)
    return jobs * runs_per_job
