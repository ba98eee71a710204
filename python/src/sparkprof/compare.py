"""``compare RUN_A RUN_B``: what changed between two runs, per stage (duration, bytes, spill,
skew) and in the findings (appeared, resolved, still there) -- "did my fix work?".

The figures are the stored report figures of each run; only their differences are new here.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from sparkprof.store import FindingRow, Run, StageFigures


def last_attempts(run: Run) -> dict[int, StageFigures]:
    """Each stage's last attempt (the one whose result the job used)."""
    stages: dict[int, StageFigures] = {}
    for stage in run.stages:
        current = stages.get(stage.stage_id)
        if current is None or stage.attempt > current.attempt:
            stages[stage.stage_id] = stage
    return stages


def finding_key(row: FindingRow) -> tuple[str, tuple[int, ...]]:
    return row.rule, tuple(json.loads(row.stage_ids_json))


def skew_ratio(run: Run, stage_id: int) -> float | None:
    """The max/median task time of the stage's data-skew or straggler finding, when the engine
    reported one."""
    for row in run.findings:
        if row.rule in ("data-skew", "straggler") and stage_id in json.loads(row.stage_ids_json):
            evidence = json.loads(run.report_json)["findings"][row.position]["evidence"]
            for item in evidence:
                if item["name"] == "max_over_median_time":
                    return float(item["value"])
    return None


@dataclass(frozen=True)
class Change:
    before: float | None
    after: float | None

    @property
    def delta(self) -> float | None:
        if self.before is None or self.after is None:
            return None
        return self.after - self.before

    @property
    def ratio(self) -> float | None:
        if self.before is None or self.after is None or self.before == 0:
            return None
        return self.after / self.before


@dataclass(frozen=True)
class StageChange:
    stage_id: int
    name_a: str | None
    name_b: str | None
    duration_ms: Change
    input_bytes: Change
    shuffle_read_bytes: Change
    shuffle_write_bytes: Change
    disk_bytes_spilled: Change
    memory_bytes_spilled: Change
    task_max_ms: Change
    task_p50_ms: Change
    skew_max_over_median: Change  # from data-skew/straggler; None when neither fired


@dataclass(frozen=True)
class FindingChange:
    rule: str
    stage_ids: tuple[int, ...]
    severity_a: str | None
    severity_b: str | None
    title: str
    cost_ms: Change


@dataclass(frozen=True)
class Comparison:
    run_a: int
    run_b: int
    duration_ms: Change
    stages: list[StageChange]
    resolved: list[FindingChange]  # in A, not in B
    appeared: list[FindingChange]  # in B, not in A
    remaining: list[FindingChange]
    feedback: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for stage, raw in zip(self.stages, data["stages"], strict=True):
            for name, value in vars(stage).items():
                if isinstance(value, Change):
                    raw[name].update(delta=value.delta, ratio=value.ratio)
        return data


def compare(run_a: Run, run_b: Run) -> Comparison:
    stages_a, stages_b = last_attempts(run_a), last_attempts(run_b)
    changes = []
    for stage_id in sorted(stages_a.keys() | stages_b.keys()):
        a, b = stages_a.get(stage_id), stages_b.get(stage_id)

        def pair(name: str, a: StageFigures | None = a, b: StageFigures | None = b) -> Change:
            return Change(
                None if a is None else getattr(a, name), None if b is None else getattr(b, name)
            )

        changes.append(
            StageChange(
                stage_id=stage_id,
                name_a=None if a is None else a.name,
                name_b=None if b is None else b.name,
                duration_ms=pair("duration_ms"),
                input_bytes=pair("input_bytes"),
                shuffle_read_bytes=pair("shuffle_read_bytes"),
                shuffle_write_bytes=pair("shuffle_write_bytes"),
                disk_bytes_spilled=pair("disk_bytes_spilled"),
                memory_bytes_spilled=pair("memory_bytes_spilled"),
                task_max_ms=pair("task_max_ms"),
                task_p50_ms=pair("task_p50_ms"),
                skew_max_over_median=Change(
                    skew_ratio(run_a, stage_id), skew_ratio(run_b, stage_id)
                ),
            )
        )
    findings_a = {finding_key(row): row for row in run_a.findings}
    findings_b = {finding_key(row): row for row in run_b.findings}

    def finding_change(key: tuple[str, tuple[int, ...]]) -> FindingChange:
        a, b = findings_a.get(key), findings_b.get(key)
        shown = b if b is not None else a
        assert shown is not None
        return FindingChange(
            rule=key[0],
            stage_ids=key[1],
            severity_a=None if a is None else a.severity,
            severity_b=None if b is None else b.severity,
            title=shown.title,
            cost_ms=Change(None if a is None else a.cost_ms, None if b is None else b.cost_ms),
        )

    feedback = [
        {
            "run": row.run_id,
            "rule": row.rule,
            "stage_ids": json.loads(row.stage_ids_json),
            "verdict": row.verdict,
            "note": row.note,
        }
        for row in [*run_a.feedback, *run_b.feedback]
    ]
    return Comparison(
        run_a=run_a.id,
        run_b=run_b.id,
        duration_ms=Change(run_a.duration_ms, run_b.duration_ms),
        stages=changes,
        resolved=[finding_change(k) for k in findings_a if k not in findings_b],
        appeared=[finding_change(k) for k in findings_b if k not in findings_a],
        remaining=[finding_change(k) for k in findings_a if k in findings_b],
        feedback=feedback,
    )
