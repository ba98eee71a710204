"""Typed views of the engine's JSON report (schema ``sparkprof.report/v1``, docs/report-schema.md).

Every value here is read from the JSON the engine wrote; nothing is computed in Python. Keys the
engine adds later (v1 only ever adds keys) stay reachable through ``raw``. A field whose JSON key
is not a good Python name (``list``, ``max``, ``bytes``) names its key in ``metadata``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import types
import typing
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, TypeVar, Union, cast

from sparkprof import _native

REPORT_SCHEMA: str = _native.REPORT_SCHEMA

T = TypeVar("T")


@dataclass(frozen=True)
class ApplicationInfo:
    id: str
    name: str
    attempt_id: str
    user: str
    spark_version: str
    start_ms: int
    end_ms: int
    duration_ms: int
    complete: bool
    databricks: bool


@dataclass(frozen=True)
class Counts:
    jobs: int
    failed_jobs: int
    stages: int
    stage_attempts: int
    failed_stage_attempts: int
    task_attempts: int
    speculative_task_attempts: int
    sql_executions: int
    task_start_without_end: int
    task_end_without_start: int
    resubmitted_tasks: int = 0  # schema_minor 1
    photon_peak_memory_tasks: int = 0  # schema_minor 2
    photon_shuffle_write_tasks: int = 0  # schema_minor 9


@dataclass(frozen=True)
class Executor:
    id: str
    host: str
    cores: int
    added_ms: int
    removed_ms: int
    removed_reason: str
    peaks: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Executors:
    added: int
    removed: int
    max_concurrent: int
    removal_reasons: dict[str, int]
    executors: list[Executor] = field(metadata={"key": "list"})


@dataclass(frozen=True)
class Totals:
    executor_run_time_ms: int
    executor_cpu_time_ns: int
    jvm_gc_time_ms: int
    memory_bytes_spilled: int
    disk_bytes_spilled: int
    shuffle_read_bytes: int
    shuffle_write_bytes: int
    input_bytes: int
    output_bytes: int
    executor_deserialize_time_ms: int
    result_serialization_time_ms: int
    shuffle_fetch_wait_time_ms: int
    shuffle_write_time_ns: int
    shuffle_remote_bytes_read: int
    peak_execution_memory_bytes_max: int
    task_attempts_with_metrics: int
    # schema_minor 10; present only where a task's peak came from Photon's operators
    photon_peak_memory_largest_operator_bytes_max: int = 0


@dataclass(frozen=True)
class TaskDurations:
    p50: int
    p95: int
    maximum: int = field(metadata={"key": "max"})


@dataclass(frozen=True)
class Stage:
    stage_id: int
    attempt: int
    name: str
    num_tasks: int
    status: str
    submission_ms: int
    completion_ms: int
    duration_ms: int
    failure_reason: str
    task_attempts: int
    failed_task_attempts: int
    task_duration_ms: TaskDurations
    totals: Totals
    job_id: int = -1  # schema_minor 3: the job that ran the attempt


@dataclass(frozen=True)
class SqlExecution:
    execution_id: int
    description: str
    start_ms: int
    end_ms: int
    error: str
    job_ids: list[int]


@dataclass(frozen=True)
class InputFile:
    file: str
    codec: str
    size_bytes: int = field(metadata={"key": "bytes"})
    decompressed_bytes: int = 0
    lines: int = 0
    events: int = 0
    error: str = ""


@dataclass(frozen=True)
class BadLine:
    file: str
    line: int
    byte_offset: int
    error: str


@dataclass(frozen=True)
class NotRead:
    """What the source held around the log and was not read (schema minor 9)."""

    path: str
    why: str


@dataclass(frozen=True)
class Input:
    name: str
    layout: str
    in_progress_by_name: bool
    files: list[InputFile]
    lines: int
    events: int
    bad_line_count: int
    bad_lines: list[BadLine]
    unknown_events: dict[str, int]
    not_read: list[NotRead] = field(default_factory=list)
    not_read_left_out: int = 0


@dataclass(frozen=True)
class Phase:
    ms: int
    ratio: float
    # task_wait only, with a profile holding off-CPU samples: its ms by what the task threads
    # waited on (profile category -> ms); empty otherwise (unattributed)
    by_kind: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Phases:
    wall_ms: int
    resource_wait: Phase
    driver_only: Phase
    compute: Phase  # on CPU when cpu_measured, else all the running tasks' own work
    shuffle: Phase
    io_write: Phase
    gc: Phase
    idle_slots: Phase
    tasks_running_ms: int
    commit_gap_ms: int
    starved_task_ms: int
    first_slot_ms: int
    peak_slots: int
    slot_ms: dict[str, int]
    # schema_minor 5 (absent from older reports: compute then includes the waits)
    task_wait: Phase = field(default_factory=lambda: Phase(ms=0, ratio=0.0))
    cpu_measured: bool = False


@dataclass(frozen=True)
class Evidence:
    name: str
    value: float
    unit: str


@dataclass(frozen=True)
class Recommendation:
    kind: str  # "config" or "code"
    reason: str
    config: str = ""
    value: str = ""
    change: str = ""


@dataclass(frozen=True)
class Range:
    low: float
    high: float


@dataclass(frozen=True)
class ExpectedImpact:
    time_saved_ms: Range
    core_hours_saved: Range
    method: str


@dataclass(frozen=True)
class Confidence:
    level: str  # low, medium, high ("" in reports before schema_minor 1)
    reason: str


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: str  # info, warning, critical
    stage_ids: list[int]
    title: str
    explanation: str
    evidence: list[Evidence]
    recommendations: list[Recommendation]
    expected_impact: ExpectedImpact
    recipe: str
    cost_ms: int
    # schema_minor 1 (absent from older reports in a history store: the defaults)
    category: str = ""  # resource-configuration, data-distribution, algorithmic
    confidence: Confidence = Confidence("", "")
    expected_saving_ms: int = 0
    symptom_of: str = ""


@dataclass(frozen=True)
class Job:
    job_id: int
    description: str
    job_group: str
    sql_execution_id: int
    stage_ids: list[int]
    submission_ms: int
    completion_ms: int
    duration_ms: int
    result: str  # succeeded, failed, unknown
    failure_reason: str
    task_attempts: int
    failed_task_attempts: int
    totals: Totals


@dataclass(frozen=True)
class CostPoint:
    """One simulated cluster of the right-sizing frontier (docs/cost.md)."""

    instance: str
    count: int
    cores_per_executor: int
    predicted_wall_ms: int
    cost: float
    on_frontier: bool
    current: bool


@dataclass(frozen=True)
class RightSizing:
    note: str = ""
    max_slowdown: float = 0.0
    self_prediction_error: float = 0.0
    points: list[CostPoint] = field(default_factory=list)
    current: CostPoint | None = None
    recommended: CostPoint | None = None
    saving_fraction: float = 0.0


@dataclass(frozen=True)
class SpotAdvice:
    available: bool = False
    discount_low: float = 0.0
    discount_high: float = 0.0
    cost_low: float = 0.0
    cost_high: float = 0.0
    interruption_notice_s: int = 0
    work_per_executor_ms: int = 0
    advice: str = ""
    source: str = ""


@dataclass(frozen=True)
class Cost:
    """What the run cost and the cheaper cluster (``cost`` in the report, schema_minor 2)."""

    available: bool = False
    reason: str = ""
    currency: str = "USD"
    method: str = ""
    cloud: str = ""
    cloud_source: str = ""
    region: str = ""
    catalogue: str = ""
    executor_instance: str = ""
    executor_instance_source: str = ""
    driver_instance: str = ""
    driver_instance_source: str = ""
    executor_cores: int = 0
    executor_memory_gib: float = 0.0
    executors_per_instance: int = 1
    executors: int = 0
    max_concurrent_executors: int = 0
    executor_hours: float = 0.0
    executor_cost: float = 0.0
    driver_cost: float = 0.0
    dbus: float = 0.0
    dbu_cost: float = 0.0
    total: float = 0.0
    wall_ms: int = 0
    current_cluster: str = ""
    right_sizing: RightSizing = field(default_factory=RightSizing)
    spot: SpotAdvice = field(default_factory=SpotAdvice)
    assumptions: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Driver:
    """``driver`` (schema_minor 4): only in the report.json the Spark plugin's driver writes."""

    # The executors' profile batches the driver received, by outcome: accepted, too_large,
    # invalid, unsupported_version, rate_limited, queue_full (docs/report-schema.md).
    batches: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class ApplicationReport:
    """One application's report: the engine's JSON object, typed.

    ``raw`` is the parsed JSON object, ``json`` its text exactly as the engine wrote it.
    """

    application: ApplicationInfo
    counts: Counts
    task_end_reasons: dict[str, int]
    executors: Executors
    totals: Totals
    stages: list[Stage]
    sql_executions: list[SqlExecution]
    input: Input
    phases: Phases
    findings: list[Finding]
    jobs: list[Job] = field(default_factory=list)  # schema_minor 1
    cost: Cost = field(default_factory=Cost)  # schema_minor 2
    driver: Driver | None = None  # schema_minor 4; None from `sparkprof analyze`
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    json: str = field(default="", repr=False, compare=False)

    @classmethod
    def from_json(cls, text: str) -> ApplicationReport:
        """From one report object's JSON text (what ``sparkprof analyze --format json`` writes
        for one application)."""
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("schema") != REPORT_SCHEMA:
            schema = data.get("schema") if isinstance(data, dict) else None
            raise ValueError(f"not a {REPORT_SCHEMA} report object: schema={schema!r}")
        if "applications" in data:
            raise ValueError("a report of several applications: use parse_report_json")
        report = from_dict(cls, data)
        object.__setattr__(report, "raw", data)
        object.__setattr__(report, "json", text)
        return report


def parse_report_json(text: str) -> list[ApplicationReport]:
    """The applications of a report: one report object, or the several-applications wrapper.

    For the wrapper, each application's ``json`` is its object re-serialised (compact), not a
    slice of ``text``.
    """
    data = json.loads(text)
    if isinstance(data, dict) and "applications" in data:
        return [
            ApplicationReport.from_json(json.dumps(item, ensure_ascii=False))
            for item in data["applications"]
        ]
    return [ApplicationReport.from_json(text)]


def from_dict(cls: type[T], data: dict[str, Any]) -> T:
    """Builds dataclass ``cls`` from a JSON object, recursing into nested dataclasses and lists."""
    values: dict[str, Any] = {}
    for name, key, kind in _fields(cast(Hashable, cls)):
        if key in data:  # else the field's default, or a TypeError naming the missing key
            values[name] = _convert(kind, data[key])
    return cls(**values)


@functools.cache
def _fields(cls: Any) -> list[tuple[str, str, Any]]:
    """(field name, JSON key, resolved type) of a report dataclass."""
    assert dataclasses.is_dataclass(cls) and isinstance(cls, type)
    hints = typing.get_type_hints(cls)
    return [
        (item.name, item.metadata.get("key", item.name), hints[item.name])
        for item in dataclasses.fields(cls)
    ]


def _convert(kind: Any, value: Any) -> Any:
    origin = typing.get_origin(kind)
    if origin is list:
        (item_kind,) = typing.get_args(kind)
        return [_convert(item_kind, item) for item in value]
    if origin is dict:
        return dict(value)
    if origin in (Union, types.UnionType):
        # X | None: convert to X when the value is there and X is a report dataclass.
        kinds = [k for k in typing.get_args(kind) if k is not type(None)]
        if value is not None and len(kinds) == 1:
            return _convert(kinds[0], value)
        return value
    if dataclasses.is_dataclass(kind) and isinstance(kind, type):
        return from_dict(kind, value)
    if kind is float and isinstance(value, int):
        return float(value)
    return value
