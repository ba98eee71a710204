"""The advisor's own record: when a later run of the same job (``spark.sparkprof.jobKey``, or the
key rule of ``collect``) has a setting an earlier run's finding recommended, what was predicted and
what happened -- wall time, spill, whether the run died, the finding gone or not, and for memory
settings the peak the setting bounds -- and per rule and per job how often the advice helped.

A pair is two consecutive runs of a job in start order: the advised run (its findings' ``config``
recommendations) and the next run, where a recommendation counts as applied when that run's
setting has the recommended value (the same text ignoring case and blanks, or the same size:
``1536m`` = ``1.5g``). The verdict, by first principles, stated with its thresholds:

  * Comparable runs only: the applied run read 0.8x-1.25x the advised run's input bytes (both 0
    counts). Beyond that the input's change alone can explain a 20% change of the wall time, the
    run-to-run variation a shared cluster commonly shows (regressions.py). Other pairs are kept
    as ``not comparable`` and not counted in a hit rate.
  * ``NOISE`` = 10% of the advised run's wall time: the smallest change of a whole run that is
    told from run-to-run variation (recommend.py's MIN_FASTER).
  * A failure finding (the run died: ``job-failures``, ``executor-loss``, ``task-failures``)
    ``helped`` when the applied run has no finding of that rule and did not die, ``worse`` when it
    died of something it had not died of, else ``no effect``.
  * A performance finding: ``worse`` when the applied run died and the advised run had not, or
    it took more than NOISE longer; ``helped`` when it took more than NOISE less; when the change
    is within NOISE, ``helped`` if the finding is gone and its predicted saving was itself below
    NOISE (too small to see in the wall time: the problem's absence is the evidence), else
    ``no effect``.
  * ``within_prediction``: the measured saving lies in the finding's predicted range widened by
    NOISE on both sides (None for failure findings, which predict no time).

Hit rate = helped / (helped + no effect + worse).

Memory advice is followed whether or not it was taken (the closed loop of issue 29). A memory
finding is one with a ``config`` recommendation of a memory setting (MEMORY_SETTINGS: the
executor's heap, overhead, off-heap and PySpark memory, the driver's heap and result size); each
of its config recommendations (``spark.sql.shuffle.partitions`` among them when it recommends
that) is recorded for the next run with how it was taken:

  * ``applied``: the same value, or for a size or number the recommendation moved one way (a
    larger overhead), the next run's value at or past the recommended one (more overhead than
    asked for still applies the advice);
  * ``partly``: a size or number moved from the advised run's value towards the recommended one
    without reaching it;
  * ``not applied``: anything else (unset, unchanged, moved the other way, another word).

A setting the advised run left unset counts as below the recommended value (a memory finding
recommends raising a setting from Spark's default): set at or past it, ``applied``.

Only ``applied`` recommendations get a verdict that counts in a hit rate; the others are kept with
the verdict ``partly applied`` or ``not applied``. A size compares with a size (``1536m`` with
``1.5g``) and a plain number with a plain number (``0.4``, ``800``); a unitless size against a size
with a unit (``2048`` against ``2g``) is compared as text only, since its unit depends on the key.

For each, the record keeps both runs' measured peak of what the setting bounds and the limit it was
measured against, each taken from the report as written (report-schema.md, executors.list[].memory
and the findings' evidence), so a user can recompute them from the two reports:

  * heap (``spark.executor.memory``; ``spark.driver.memory`` on the driver): the largest
    ``memory.peaks.heap_used_bytes``, against the largest ``memory.last.heap_max_bytes`` (the
    JVM's own maximum);
  * the container (``memoryOverhead``, ``memoryOverheadFactor``, ``offHeap.size``,
    ``offHeap.enabled``, and the partitions a memory finding recommended): per executor
    ``peaks.rss_bytes + peaks.python_rss_bytes`` (the JVM and its Python workers; the two peaks
    need not coincide, so an upper bound), the largest executor's; against the memory cgroup's
    limit the agent read (``last.container_limit_bytes``), else the kill finding's
    ``container_limit_bytes`` evidence, else what the executor asks its cluster manager for
    (``cost.executor_memory_gib``: heap + overhead + off-heap + PySpark, the container YARN and
    Kubernetes size);
  * the Python workers (``spark.executor.pyspark.memory``): the largest
    ``peaks.python_rss_bytes``, against the run's ``spark.executor.pyspark.memory``;
  * the driver's results (``spark.driver.maxResultSize``): the kill finding's ``result_bytes``
    against its ``result_limit_bytes``, else the run's setting.

Whether a run died: a ``job-failures`` or ``executor-loss`` finding (the first one's title says
of what), and how many executors it lost to memory (``executor-loss``'s ``lost_to_memory``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

NOISE = 0.10
INPUT_RANGE = (0.8, 1.25)
FAILURE_RULES = ("job-failures", "executor-loss", "task-failures")
DIED_RULES = ("job-failures", "executor-loss")
VERDICTS = ("helped", "no effect", "worse", "not comparable")

# What each memory setting bounds: "heap", "driver heap", "container", "python", "result".
MEMORY_SETTINGS = {
    "spark.executor.memory": "heap",
    "spark.executor.memoryOverhead": "container",
    "spark.executor.memoryOverheadFactor": "container",
    "spark.memory.offHeap.size": "container",
    "spark.memory.offHeap.enabled": "container",
    "spark.executor.pyspark.memory": "python",
    "spark.driver.memory": "driver heap",
    "spark.driver.maxResultSize": "result",
}
_NOT_TAKEN_VERDICT = {"partly": "partly applied", "not applied": "not applied"}
# What a bound's peak is, in words (the record's text).
BOUND_WORDS = {
    "heap": "heap used",
    "driver heap": "driver heap used",
    "container": "resident set + Python workers, largest executor",
    "python": "Python workers' resident set",
    "result": "results collected",
}

_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([kmgtp]?)i?b?\s*$", re.I)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}


def size_bytes(text: str) -> int | None:
    """A Spark size ("1536m", "1.5g", "2GiB") in bytes; None when it is not one. As Spark reads a
    setting, every unit is binary ("2gb" is 2 GiB): not sizing.parse_size, which reads a user's
    "10GB" of input as decimal."""
    match = _SIZE.match(text)
    if match is None:
        return None
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


def _magnitude(text: str) -> tuple[str, float] | None:
    """("size", bytes) for a size with a unit, ("number", value) for a plain number."""
    try:
        return ("number", float(text))
    except ValueError:
        size = size_bytes(text)
        return None if size is None else ("size", float(size))


def applied_how(recommended: str, previous: str | None, now: str | None) -> str:
    """``applied``, ``partly`` or ``not applied`` (the module's docstring states the rule)."""
    if now is None:
        return "not applied"
    if same_value(now, recommended):
        return "applied"
    target, current = _magnitude(recommended), _magnitude(now)
    if previous is None:  # unset: Spark's default, below what a memory finding recommends
        if target is not None and current is not None and target[0] == current[0]:
            return "applied" if current[1] >= target[1] else "not applied"
        return "not applied"
    before = _magnitude(previous)
    if target is None or current is None or before is None:
        return "not applied"
    if not target[0] == current[0] == before[0] or target[1] == before[1]:
        return "not applied"
    up = target[1] > before[1]
    if (current[1] >= target[1]) if up else (current[1] <= target[1]):
        return "applied"
    if (current[1] > before[1]) if up else (current[1] < before[1]):
        return "partly"
    return "not applied"


def is_memory_finding(finding: dict[str, Any]) -> bool:
    return any(
        item.get("kind") == "config" and item.get("config") in MEMORY_SETTINGS
        for item in finding.get("recommendations", [])
    )


def same_value(a: str, b: str) -> bool:
    if a.strip().lower() == b.strip().lower():
        return True
    size_a, size_b = size_bytes(a), size_bytes(b)
    return size_a is not None and size_a == size_b and any(c.isalpha() for c in a + b)


@dataclass(frozen=True)
class RunFacts:
    """What the record needs of a stored run."""

    id: int
    duration_ms: int
    settings: dict[str, str]
    report: dict[str, Any]

    @property
    def input_bytes(self) -> int:
        return int(self.report.get("totals", {}).get("input_bytes", 0))

    def findings(self) -> list[dict[str, Any]]:
        findings: list[dict[str, Any]] = self.report.get("findings", [])
        return findings

    def rules(self) -> set[str]:
        return {str(f.get("rule", "")) for f in self.findings()}

    def died(self) -> bool:
        return bool(self.rules() & set(DIED_RULES))

    def spilled_bytes(self) -> int:
        return int(self.report.get("totals", {}).get("disk_bytes_spilled", 0))

    def _memories(self, driver: bool) -> list[dict[str, Any]]:
        executors = self.report.get("executors", {})
        memories = (
            [executors.get("driver_memory")]
            if driver
            else [e.get("memory") for e in executors.get("list", [])]
        )
        return [m for m in memories if isinstance(m, dict)]

    def _largest(self, driver: bool, part: str, *figures: str) -> int | None:
        """The largest over the JVMs of the sum of ``figures`` in each one's ``part`` (peaks,
        last); None when no JVM has any of them."""
        values = [
            sum(int(m[part].get(figure, 0)) for figure in figures)
            for m in self._memories(driver)
            if isinstance(m.get(part), dict) and any(f in m[part] for f in figures)
        ]
        return max(values) if values else None

    def _evidence(self, name: str) -> int | None:
        """``name`` in the first failure finding's evidence that has it."""
        for finding in self.findings():
            if finding.get("rule") not in FAILURE_RULES:
                continue
            for item in finding.get("evidence", []):
                if isinstance(item, dict) and item.get("name") == name:
                    return int(item.get("value", 0))
        return None

    def _setting_bytes(self, setting: str) -> int | None:
        value = self.settings.get(setting)
        return None if value is None else size_bytes(value)

    def memory_peak(self, setting: str, bound: str | None = None) -> int | None:
        """The peak of what ``setting`` bounds (the module's docstring), in bytes."""
        bound = bound or MEMORY_SETTINGS.get(setting)
        if bound in ("heap", "driver heap"):
            return self._largest(bound == "driver heap", "peaks", "heap_used_bytes")
        if bound == "container":
            return self._largest(False, "peaks", "rss_bytes", "python_rss_bytes")
        if bound == "python":
            return self._largest(False, "peaks", "python_rss_bytes")
        if bound == "result":
            return self._evidence("result_bytes")
        return None

    def memory_limit(self, setting: str, bound: str | None = None) -> int | None:
        """The limit that peak was measured against (the module's docstring), in bytes."""
        bound = bound or MEMORY_SETTINGS.get(setting)
        if bound in ("heap", "driver heap"):
            return self._largest(bound == "driver heap", "last", "heap_max_bytes")
        if bound == "container":
            cgroup = self._largest(False, "last", "container_limit_bytes")
            if cgroup:
                return cgroup
            killed = self._evidence("container_limit_bytes")
            if killed:
                return killed
            cost = self.report.get("cost", {})
            asked = cost.get("executor_memory_gib") if cost.get("available") else None
            return int(float(asked) * (1 << 30)) if asked else None
        if bound == "python":
            return self._setting_bytes("spark.executor.pyspark.memory")
        if bound == "result":
            return self._evidence("result_limit_bytes") or self._setting_bytes(setting)
        return None

    def death(self) -> str | None:
        """What the run died of, in the first failure finding's words (its title); None when it
        did not die."""
        for finding in self.findings():
            if finding.get("rule") in DIED_RULES:
                return str(finding.get("title", finding.get("rule")))
        return None

    def memory_losses(self) -> int:
        """Executors lost to memory (``executor-loss``'s ``lost_to_memory``)."""
        for finding in self.findings():
            if finding.get("rule") == "executor-loss":
                for item in finding.get("evidence", []):
                    if isinstance(item, dict) and item.get("name") == "lost_to_memory":
                        return int(item.get("value", 0))
        return 0


@dataclass(frozen=True)
class Outcome:
    rule: str
    setting: str
    recommended: str
    previous: str | None  # the advised run's value (None: not set)
    predicted_low_ms: float
    predicted_high_ms: float
    before_ms: int
    after_ms: int
    input_ratio: float | None  # applied run's input over the advised run's (None: no input)
    spill_before_bytes: int
    spill_after_bytes: int
    finding_gone: bool
    died_before: bool
    died_after: bool
    measured_peak_bytes: int | None  # memory settings: the applied run's peak of what it bounds
    verdict: str
    within_prediction: bool | None
    # Memory findings (the module's docstring): how the recommendation was taken, both runs' peak
    # of what it bounds and its limit, the executors lost to memory, and the words of the
    # finding's prediction and of the recommendation.
    memory: bool = False
    applied: str = "applied"
    applied_value: str | None = None  # the applied run's value
    bound: str | None = None  # what the peak measures: a key of BOUND_WORDS
    peak_before_bytes: int | None = None
    limit_before_bytes: int | None = None
    limit_after_bytes: int | None = None
    memory_losses_before: int = 0
    memory_losses_after: int = 0
    death_before: str | None = None
    death_after: str | None = None
    predicted_effect: str | None = None  # the finding's expected_impact.method
    reason: str | None = None  # the recommendation's reason (what the value is sized for)


def judge(advised: RunFacts, applied: RunFacts) -> list[Outcome]:
    """The outcomes of the advised run's config recommendations that the applied run took, and
    of its memory findings' recommendations however they were taken."""
    outcomes: list[Outcome] = []
    seen: set[tuple[str, str]] = set()
    for finding in advised.findings():
        rule = str(finding.get("rule", ""))
        memory = is_memory_finding(finding)
        for item in finding.get("recommendations", []):
            setting = item.get("config") if item.get("kind") == "config" else None
            value = str(item.get("value", ""))
            if not setting or not value or (rule, setting) in seen:
                continue
            now = applied.settings.get(setting)
            if memory:
                how = applied_how(value, advised.settings.get(setting), now)
            else:
                how = "applied" if now is not None and same_value(now, value) else "not applied"
            if how != "applied" and not memory:
                continue
            seen.add((rule, setting))
            outcome = _outcome(advised, applied, finding, rule, setting, value)
            if memory:
                outcome = _memory_outcome(advised, applied, finding, item, outcome, how)
            outcomes.append(outcome)
    return outcomes


def _outcome(
    advised: RunFacts,
    applied: RunFacts,
    finding: dict[str, Any],
    rule: str,
    setting: str,
    value: str,
) -> Outcome:
    saved_range = finding.get("expected_impact", {}).get("time_saved_ms", {})
    low = float(saved_range.get("low", 0) or 0)
    high = float(saved_range.get("high", 0) or 0)
    before, after = advised.duration_ms, applied.duration_ms
    ratio = applied.input_bytes / advised.input_bytes if advised.input_bytes > 0 else None
    comparable = advised.input_bytes == applied.input_bytes == 0 or (
        ratio is not None and INPUT_RANGE[0] <= ratio <= INPUT_RANGE[1]
    )
    gone = rule not in applied.rules()
    died_before, died_after = advised.died(), applied.died()
    noise = NOISE * before
    saved = before - after
    within: bool | None = None
    if not comparable:
        verdict = "not comparable"
    elif rule in FAILURE_RULES:
        if gone and not died_after:
            verdict = "helped"
        elif died_after and not died_before:
            verdict = "worse"
        else:
            verdict = "no effect"
    else:
        within = low - noise <= saved <= high + noise
        if (died_after and not died_before) or saved < -noise:
            verdict = "worse"
        elif saved > noise or (gone and high < noise):
            verdict = "helped"
        else:
            verdict = "no effect"
    return Outcome(
        rule=rule,
        setting=setting,
        recommended=value,
        previous=advised.settings.get(setting),
        predicted_low_ms=low,
        predicted_high_ms=high,
        before_ms=before,
        after_ms=after,
        input_ratio=ratio,
        spill_before_bytes=advised.spilled_bytes(),
        spill_after_bytes=applied.spilled_bytes(),
        finding_gone=gone,
        died_before=died_before,
        died_after=died_after,
        measured_peak_bytes=applied.memory_peak(setting),
        verdict=verdict,
        within_prediction=within,
    )


def _memory_outcome(
    advised: RunFacts,
    applied: RunFacts,
    finding: dict[str, Any],
    item: dict[str, Any],
    outcome: Outcome,
    how: str,
) -> Outcome:
    setting = outcome.setting
    # A setting of no bound of its own (shuffle partitions) is measured by what the finding's
    # first memory setting bounds.
    bound = MEMORY_SETTINGS.get(setting) or next(
        MEMORY_SETTINGS[r["config"]]
        for r in finding.get("recommendations", [])
        if r.get("kind") == "config" and r.get("config") in MEMORY_SETTINGS
    )
    return replace(
        outcome,
        memory=True,
        applied=how,
        applied_value=applied.settings.get(setting),
        bound=bound,
        measured_peak_bytes=applied.memory_peak(setting, bound),
        peak_before_bytes=advised.memory_peak(setting, bound),
        limit_before_bytes=advised.memory_limit(setting, bound),
        limit_after_bytes=applied.memory_limit(setting, bound),
        memory_losses_before=advised.memory_losses(),
        memory_losses_after=applied.memory_losses(),
        death_before=advised.death(),
        death_after=applied.death(),
        predicted_effect=str(finding.get("expected_impact", {}).get("method", "")) or None,
        reason=str(item.get("reason", "")) or None,
        verdict=_NOT_TAKEN_VERDICT.get(how, outcome.verdict),
        within_prediction=outcome.within_prediction if how == "applied" else None,
    )


@dataclass(frozen=True)
class HitRate:
    """How often one rule's (or one job's) applied advice helped."""

    key: str  # the rule, or the job key
    helped: int
    no_effect: int
    worse: int
    not_comparable: int
    within_prediction: int  # of the judged performance outcomes
    predicted: int  # judged performance outcomes (within_prediction is not None)

    @property
    def judged(self) -> int:
        return self.helped + self.no_effect + self.worse

    @property
    def rate(self) -> float | None:
        return self.helped / self.judged if self.judged else None


def hit_rates(rows: Iterable[tuple[str, str, bool | None, int]]) -> list[HitRate]:
    """Per key, from (key, verdict, within_prediction, count) rows; most judged first."""
    counts: dict[str, dict[str, int]] = {}
    for key, verdict, within, count in rows:
        if verdict not in VERDICTS:  # a memory recommendation not (fully) taken: not judged
            continue
        c = counts.setdefault(key, {v: 0 for v in (*VERDICTS, "within", "predicted")})
        c[verdict] = c.get(verdict, 0) + count
        if within is not None:
            c["predicted"] += count
            c["within"] += count if within else 0
    rates = [
        HitRate(
            key,
            c["helped"],
            c["no effect"],
            c["worse"],
            c["not comparable"],
            c["within"],
            c["predicted"],
        )
        for key, c in counts.items()
    ]
    return sorted(rates, key=lambda r: (-r.judged, r.key))


def facts(run_id: int, duration_ms: int, settings_json: str, report_json: str) -> RunFacts:
    return RunFacts(run_id, duration_ms, json.loads(settings_json), json.loads(report_json))


def describe_rate(rate: HitRate) -> str:
    if rate.judged == 0:
        return f"{rate.key}: {rate.not_comparable} applied, none on a comparable run"
    text = (
        f"{rate.key}: helped {rate.helped} of {rate.judged} "
        f"({100 * (rate.rate or 0):.0f}%; no effect {rate.no_effect}, worse {rate.worse})"
    )
    if rate.predicted:
        text += f", saving within the prediction {rate.within_prediction} of {rate.predicted}"
    if rate.not_comparable:
        text += f"; {rate.not_comparable} more on runs with other input"
    return text


@dataclass(frozen=True)
class MemoryRecord:
    """One memory finding of an advised run and what the job's next run did with it: the
    recommendations as taken, the peaks and limits of both runs, whether each died."""

    job_key: str
    advised_run_id: int
    applied_run_id: int
    rule: str
    applied: str  # applied, partly applied, not applied
    # setting, previous, recommended, now, applied, reason (what the engine sized the value for)
    settings: list[dict[str, str | None]]
    verdict: str  # the applied recommendations' verdict (advice_record's rule), else as applied
    died_before: bool
    died_after: bool
    death_before: str | None
    death_after: str | None
    memory_losses_before: int
    memory_losses_after: int
    bound: str | None
    peak_before_bytes: int | None
    peak_after_bytes: int | None
    limit_before_bytes: int | None
    limit_after_bytes: int | None
    predicted_effect: str | None
    predicted_low_ms: float
    predicted_high_ms: float
    summary: str


def memory_records(rows: Iterable[Any]) -> list[MemoryRecord]:
    """The memory findings' records from stored outcome rows (AdviceOutcomeRow), one per advised
    run, applied run and rule, in the rows' order; findings of one run that recommended the same
    values (``job-failures`` and ``executor-loss`` of one kill) are one record naming both."""
    groups: dict[tuple[int, int, str], list[Any]] = {}
    for row in rows:
        if row.memory:
            groups.setdefault((row.advised_run_id, row.applied_run_id, row.rule), []).append(row)
    merged: dict[tuple[int, int, tuple[tuple[str, str], ...]], list[list[Any]]] = {}
    for (advised, applied, _), group in groups.items():
        values = tuple((row.setting, row.recommended) for row in group)
        merged.setdefault((advised, applied, values), []).append(group)
    records = []
    for findings in merged.values():
        record = _memory_record(findings[0])
        if len(findings) > 1:
            record = replace(record, rule=", ".join(group[0].rule for group in findings))
            record = replace(record, summary=describe_memory(record))
        records.append(record)
    return records


def _memory_record(rows: list[Any]) -> MemoryRecord:
    taken = [row.applied for row in rows]
    if all(how == "applied" for how in taken):
        applied = "applied"
    elif any(how in ("applied", "partly") for how in taken):
        applied = "partly applied"
    else:
        applied = "not applied"
    # The peak of the finding's first memory setting (partitions have no bound of their own).
    main = next((row for row in rows if row.setting in MEMORY_SETTINGS), rows[0])
    judged = [row.verdict for row in rows if row.verdict in VERDICTS]
    first = rows[0]
    record = MemoryRecord(
        job_key=first.job_key,
        advised_run_id=first.advised_run_id,
        applied_run_id=first.applied_run_id,
        rule=first.rule,
        applied=applied,
        settings=[
            {
                "setting": row.setting,
                "previous": row.previous,
                "recommended": row.recommended,
                "now": row.applied_value,
                "applied": row.applied,
                "reason": row.reason,
            }
            for row in rows
        ],
        verdict=judged[0] if judged else applied,
        died_before=first.died_before,
        died_after=first.died_after,
        death_before=first.death_before,
        death_after=first.death_after,
        memory_losses_before=first.memory_losses_before,
        memory_losses_after=first.memory_losses_after,
        bound=main.bound,
        peak_before_bytes=main.peak_before_bytes,
        peak_after_bytes=main.measured_peak_bytes,
        limit_before_bytes=main.limit_before_bytes,
        limit_after_bytes=main.limit_after_bytes,
        predicted_effect=first.predicted_effect,
        predicted_low_ms=first.predicted_low_ms,
        predicted_high_ms=first.predicted_high_ms,
        summary="",
    )
    return replace(record, summary=describe_memory(record))


def _bytes(value: int | None) -> str:
    from sparkprof._native import human_bytes

    return "not measured" if value is None else human_bytes(value)


def describe_memory(record: MemoryRecord) -> str:
    """The record in one line: how the advice was taken, whether the run died, the peak against
    the limit in both runs, and what the finding predicted."""
    taken = ", ".join(
        f"{s['setting']} {s['previous'] or 'unset'} -> {s['now'] or 'unset'} "
        f"(recommended {s['recommended']}: {s['applied']})"
        for s in record.settings
    )
    if record.died_after:
        died = "died again" if record.died_before else "died"
        died += f" ({record.death_after}"
        died += (
            f"; {record.memory_losses_after} executor(s) lost to memory)"
            if record.memory_losses_after
            else ")"
        )
    else:
        died = "did not die"
        if record.died_before:
            died += f" (run {record.advised_run_id}: {record.death_before}"
            died += (
                f"; {record.memory_losses_before} executor(s) lost to memory)"
                if record.memory_losses_before
                else ")"
            )
    text = (
        f"run {record.advised_run_id} -> run {record.applied_run_id}, {record.rule}: "
        f"{record.applied} ({taken}); {died}"
    )
    if record.bound is not None:
        text += (
            f"; peak {_bytes(record.peak_before_bytes)} -> {_bytes(record.peak_after_bytes)} "
            f"against limit {_bytes(record.limit_before_bytes)} -> "
            f"{_bytes(record.limit_after_bytes)} ({BOUND_WORDS[record.bound]})"
        )
    if record.predicted_effect:
        text += f"; predicted: {record.predicted_effect}"
    return text
