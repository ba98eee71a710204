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
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

NOISE = 0.10
INPUT_RANGE = (0.8, 1.25)
FAILURE_RULES = ("job-failures", "executor-loss", "task-failures")
DIED_RULES = ("job-failures", "executor-loss")
VERDICTS = ("helped", "no effect", "worse", "not comparable")

# What each memory setting bounds, and where the report measured it: the largest peak over the
# executors' (or the driver's) agent readings (report.json executors.list[].memory.peaks).
MEMORY_MEASURES = {
    "spark.executor.memory": ("executors", "heap_used_bytes"),
    "spark.executor.memoryOverhead": ("executors", "rss_bytes"),
    "spark.executor.pyspark.memory": ("executors", "python_rss_bytes"),
    "spark.memory.offHeap.size": ("executors", "spark_execution_bytes"),
    "spark.driver.memory": ("driver", "heap_used_bytes"),
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

    def memory_peak(self, setting: str) -> int | None:
        where = MEMORY_MEASURES.get(setting)
        if where is None:
            return None
        executors = self.report.get("executors", {})
        memories = (
            [e.get("memory") for e in executors.get("list", [])]
            if where[0] == "executors"
            else [executors.get("driver_memory")]
        )
        peaks = [
            int(m["peaks"][where[1]])
            for m in memories
            if isinstance(m, dict) and isinstance(m.get("peaks"), dict) and where[1] in m["peaks"]
        ]
        return max(peaks) if peaks else None


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


def judge(advised: RunFacts, applied: RunFacts) -> list[Outcome]:
    """The outcomes of the advised run's config recommendations that the applied run took."""
    outcomes: list[Outcome] = []
    seen: set[tuple[str, str]] = set()
    for finding in advised.findings():
        rule = str(finding.get("rule", ""))
        for item in finding.get("recommendations", []):
            setting = item.get("config") if item.get("kind") == "config" else None
            value = str(item.get("value", ""))
            if not setting or (rule, setting) in seen:
                continue
            now = applied.settings.get(setting)
            if now is None or not value or not same_value(now, value):
                continue
            seen.add((rule, setting))
            outcomes.append(_outcome(advised, applied, finding, rule, setting, value))
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
