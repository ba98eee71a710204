"""``recommend --input-size 10GB [--job-type etl] [--job JOB]``: executors and shuffle partitions
for a run over an input of a given size, from the stored runs that read the most similar amount,
each checked with the engine's what-if simulator on its own event log.

For each evidence run (the ``MAX_EVIDENCE`` stored runs of the job type whose input is nearest to
the target, on a log scale):
  1. its log is read again from where it was collected and replayed by the simulator at executor
     counts ``EXECUTOR_FACTORS`` x the run's own (with the shuffle-partition count the engine's
     findings recommended for it, when they did), keeping the run's cores and memory per executor;
  2. the fewest executors whose predicted wall time is within ``KNEE`` of the fastest predicted is
     that run's efficient count (more executors would mostly wait);
  3. that count and the shuffle-partition count are scaled by target input / the run's input:
     the executor work and the shuffle bytes are taken to grow in proportion to the input, so
     each executor and each partition keep the bytes they had (stated with every answer).
The recommendation is the median over the evidence runs; its expected wall time is the median of
their predicted wall times at the efficient count (work per executor unchanged).

Confidence: high with >= 3 simulated evidence runs, the nearest within 2x of the target input,
their scaled executor counts within 1.5x of each other and the simulator's self-prediction error
<= 10% (median); medium with one simulated run within 4x; low otherwise (no log could be read
again: the run's own executor count is scaled without simulation; or extrapolating past 4x).

Job type: the run's ``spark.sparkprof.jobType`` property when set, else ``etl`` when it wrote at
least ``ETL_OUTPUT_SHARE`` of the bytes it read, ``query`` when it read input and wrote less.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from dataclasses import dataclass, field
from typing import Any

from sparkprof.analysis import Discovery, resolve
from sparkprof.store import HistoryStore, Run
from sparkprof.what_if import WhatifPrediction, simulate

JOB_TYPE_PROPERTY = "spark.sparkprof.jobType"
ETL_OUTPUT_SHARE = 0.10
MAX_EVIDENCE = 5
RUNS_SCANNED = 500  # the latest stored runs searched for evidence
EXECUTOR_FACTORS = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)
KNEE = 0.10
NEAR_SCALE = 2.0
FAR_SCALE = 4.0
HIGH_MAX_SELF_ERROR = 0.10
HIGH_MAX_SPREAD = 1.5
DEFAULT_SHUFFLE_PARTITIONS = 200  # Spark's default for spark.sql.shuffle.partitions

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?)(b?)\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """Bytes from ``10GB`` (powers of 1000), ``10GiB`` or Spark's ``10g`` (powers of 1024), or a
    plain number of bytes."""
    match = _SIZE.match(text)
    if not match or (match.group(3) and not match.group(2)):
        raise ValueError(f"not a size: {text!r} (e.g. 10GB, 512MiB, 2t, 123456)")
    number, prefix, binary, unit_b = match.groups()
    power = "kmgtp".find(prefix.lower()) + 1 if prefix else 0
    # "GB" is decimal; "GiB", and Spark's bare "g", are binary.
    base = 1000 if unit_b and not binary else 1024
    size = float(number) * base**power
    if size < 1 or size > 2**62:
        raise ValueError(f"size out of range: {text!r}")
    return int(size)


def job_type(settings: dict[str, str], report: dict[str, Any]) -> str:
    """The run's job type (see the module's docstring)."""
    if settings.get(JOB_TYPE_PROPERTY):
        return settings[JOB_TYPE_PROPERTY]
    totals = report.get("totals", {})
    read, written = totals.get("input_bytes", 0), totals.get("output_bytes", 0)
    if read <= 0:
        return "etl" if written > 0 else "other"
    return "etl" if written >= ETL_OUTPUT_SHARE * read else "query"


@dataclass(frozen=True)
class EvidenceRun:
    """A stored run the recommendation rests on."""

    run_id: int
    app_id: str
    job_key: str
    input_bytes: int
    scale: float  # target input / this run's input
    duration_ms: int
    executors: int  # the run's executors (most alive at once)
    cores_per_executor: int
    executor_memory_mb: int
    simulated: bool
    efficient_executors: int  # the fewest within KNEE of the fastest predicted (not scaled)
    predicted_wall_ms: int  # this run's predicted wall time at efficient_executors
    shuffle_partitions: int  # the run's count, or what its findings recommended (not scaled)
    self_prediction_error: float | None  # the simulator on this run as it was
    note: str = ""  # why it was not simulated


@dataclass(frozen=True)
class SizedRecommendation:
    input_bytes: int
    job_type: str | None
    job_key: str | None
    settings: dict[str, str]
    expected_wall_ms: int | None  # None when nothing could be simulated
    confidence: str  # high, medium, low
    confidence_reasons: list[str]
    evidence: list[EvidenceRun]
    assumptions: list[str] = field(default_factory=list)


def recommend_for_input(
    store: HistoryStore,
    input_bytes: int,
    job_type_wanted: str | None = None,
    job_key: str | None = None,
    max_evidence: int = MAX_EVIDENCE,
    storage_options: dict[str, Any] | None = None,
) -> SizedRecommendation:
    """Settings for a run reading ``input_bytes`` (see the module's docstring). Raises
    ``LookupError`` when no stored run of that kind read any input."""
    if input_bytes <= 0:
        raise ValueError("the input size must be positive")
    candidates = []
    for run in store.runs(job_key, limit=RUNS_SCANNED):
        report = json.loads(run.report_json)
        settings: dict[str, str] = json.loads(run.settings_json)
        read = report.get("totals", {}).get("input_bytes", 0)
        if read <= 0 or not run.complete or _failed(report):
            continue
        if job_type_wanted and job_type(settings, report) != job_type_wanted:
            continue
        distance = abs(math.log(input_bytes / read))
        candidates.append((distance, -run.start_ms, run, report, settings))
    if not candidates:
        kind = f" of type {job_type_wanted!r}" if job_type_wanted else ""
        job = f" of job {job_key!r}" if job_key else ""
        raise LookupError(f"no complete stored run{kind}{job} read any input")
    candidates.sort(key=lambda c: (c[0], c[1]))
    evidence = [
        _evidence(run, report, settings, input_bytes, storage_options or {})
        for _, _, run, report, settings in candidates[:max_evidence]
    ]
    return _combine(input_bytes, job_type_wanted, job_key, evidence)


def _failed(report: dict[str, Any]) -> bool:
    return any(job.get("result") == "failed" for job in report.get("jobs", []))


def _int_setting(settings: dict[str, str], name: str, default: int) -> int:
    try:
        value = int(settings.get(name, ""))
    except ValueError:
        return default
    return value if value > 0 else default


def _recommended_partitions(report: dict[str, Any]) -> int | None:
    for finding in report.get("findings", []):
        for item in finding.get("recommendations", []):
            if item.get("config") == "spark.sql.shuffle.partitions":
                try:
                    return max(1, int(item.get("value", "")))
                except ValueError:
                    continue
    return None


def _evidence(
    run: Run,
    report: dict[str, Any],
    settings: dict[str, str],
    target_bytes: int,
    storage_options: dict[str, Any],
) -> EvidenceRun:
    read = report["totals"]["input_bytes"]
    partitions = _recommended_partitions(report) or _int_setting(
        settings, "spark.sql.shuffle.partitions", DEFAULT_SHUFFLE_PARTITIONS
    )
    shape = dict(
        run_id=run.id,
        app_id=run.app_id,
        job_key=run.job_key,
        input_bytes=read,
        scale=target_bytes / read,
        duration_ms=run.duration_ms,
        shuffle_partitions=partitions,
    )
    try:
        replays = _replays(run, partitions, storage_options)
    except Exception as error:  # the log moved, the storage refused: say so, scale unsimulated
        executors = max(1, report["executors"]["max_concurrent"])
        cores = max(
            (e["cores"] for e in report["executors"]["list"] if e["id"] != "driver"), default=0
        )
        return EvidenceRun(
            **shape,
            executors=executors,
            cores_per_executor=cores,
            executor_memory_mb=0,
            simulated=False,
            efficient_executors=executors,
            predicted_wall_ms=run.duration_ms,
            self_prediction_error=None,
            note=f"not simulated: its log could not be read again from {run.source} "
            f"({type(error).__name__}: {error})",
        )
    fastest = min(p.predicted.wall_ms for _, p in replays)
    count, chosen = next((n, p) for n, p in replays if p.predicted.wall_ms <= (1 + KNEE) * fastest)
    actual = replays[0][1]  # every replay carries the run's own figures
    return EvidenceRun(
        **shape,
        executors=actual.actual.executors,
        cores_per_executor=actual.actual.cores_per_executor,
        executor_memory_mb=actual.actual.executor_memory_mb,
        simulated=True,
        efficient_executors=count,
        predicted_wall_ms=chosen.predicted.wall_ms,
        self_prediction_error=actual.self_prediction_error,
    )


def _replays(
    run: Run, partitions: int, storage_options: dict[str, Any]
) -> list[tuple[int, WhatifPrediction]]:
    """(executors, prediction) by executor count, the run's log analysed once."""
    discovery = Discovery(resolve(run.source, **storage_options), right_sizing=False)
    for _, analysed in discovery.analyse():
        if analysed is None or analysed.report.application.id != run.app_id:
            continue
        if analysed.report.application.attempt_id != run.attempt_id:
            continue
        executors = max(1, simulate(analysed).actual.executors)
        counts = sorted({max(1, round(executors * f)) for f in EXECUTOR_FACTORS})
        partitions_word = f"spark.sql.shuffle.partitions={partitions}"
        return [
            (n, simulate(analysed, [f"spark.executor.instances={n}", partitions_word]))
            for n in counts
        ]
    raise LookupError(f"{run.app_id} is no longer in {run.source}")


def _combine(
    input_bytes: int, kind: str | None, job_key: str | None, evidence: list[EvidenceRun]
) -> SizedRecommendation:
    simulated = [e for e in evidence if e.simulated]
    basis = simulated or evidence
    executors = [max(1, math.ceil(e.efficient_executors * e.scale)) for e in basis]
    partitions = [max(1, math.ceil(e.shuffle_partitions * e.scale)) for e in basis]
    nearest = evidence[0]
    settings = {
        "spark.executor.instances": str(int(statistics.median_high(executors))),
        "spark.sql.shuffle.partitions": str(int(statistics.median_high(partitions))),
    }
    if nearest.cores_per_executor > 0:
        settings["spark.executor.cores"] = str(nearest.cores_per_executor)
    if nearest.executor_memory_mb > 0:
        settings["spark.executor.memory"] = f"{nearest.executor_memory_mb}m"
    expected = int(statistics.median(e.predicted_wall_ms for e in simulated)) if simulated else None
    confidence, reasons = _confidence(evidence, simulated, executors)
    return SizedRecommendation(
        input_bytes=input_bytes,
        job_type=kind,
        job_key=job_key,
        settings=settings,
        expected_wall_ms=expected,
        confidence=confidence,
        confidence_reasons=reasons,
        evidence=evidence,
        assumptions=[
            "executor work and shuffle bytes grow in proportion to the input, so executors and "
            "shuffle partitions are scaled by target input / the evidence run's input",
            "cores and memory per executor as in the nearest evidence run",
            "the expected wall time is the evidence runs' predicted time at their efficient "
            "executor count: driver-only time and fixed costs do not scale",
        ],
    )


def _confidence(
    evidence: list[EvidenceRun], simulated: list[EvidenceRun], executors: list[int]
) -> tuple[str, list[str]]:
    nearest_scale = max(evidence[0].scale, 1 / evidence[0].scale)
    reasons = [
        f"{len(simulated)} of {len(evidence)} evidence runs simulated",
        f"the nearest read {nearest_scale:.2f}x "
        + ("less" if evidence[0].scale >= 1 else "more")
        + " than the target",
    ]
    spread = max(executors) / min(executors)
    reasons.append(f"scaled executor counts within {spread:.2f}x of each other")
    errors = [e.self_prediction_error for e in simulated if e.self_prediction_error is not None]
    median_error = statistics.median(errors) if errors else None
    if median_error is not None:
        reasons.append(f"median self-prediction error {100 * median_error:.1f}%")
    if (
        len(simulated) >= 3
        and nearest_scale <= NEAR_SCALE
        and spread <= HIGH_MAX_SPREAD
        and median_error is not None
        and median_error <= HIGH_MAX_SELF_ERROR
    ):
        return "high", reasons
    near_simulated = [e for e in simulated if max(e.scale, 1 / e.scale) <= FAR_SCALE]
    if near_simulated:
        return "medium", reasons
    return "low", reasons
