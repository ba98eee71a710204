"""The advisor's record (sparkprof/advice_record.py): which recommendations a later run applied,
and each verdict's rule, on reports written by hand."""

from __future__ import annotations

from typing import Any

from sparkprof.advice_record import RunFacts, describe_rate, hit_rates, judge, same_value

GIB = 1 << 30


def finding(rule: str, setting: str, value: str, low: float = 0, high: float = 0) -> dict[str, Any]:
    return {
        "rule": rule,
        "expected_impact": {"time_saved_ms": {"low": low, "high": high}},
        "recommendations": [
            {"kind": "config", "config": setting, "value": value, "reason": "r"},
            {"kind": "code", "change": "fix the join", "reason": "r"},
        ],
    }


def run(
    run_id: int,
    duration_ms: int,
    settings: dict[str, str] | None = None,
    findings: list[dict[str, Any]] | None = None,
    input_bytes: int = 10 * GIB,
    executor_peaks: list[dict[str, int]] | None = None,
) -> RunFacts:
    report = {
        "totals": {"input_bytes": input_bytes, "disk_bytes_spilled": 0},
        "findings": findings or [],
        "executors": {
            "list": [
                {"id": str(i), "memory": {"peaks": p}} for i, p in enumerate(executor_peaks or [])
            ]
        },
    }
    return RunFacts(run_id, duration_ms, settings or {}, report)


def test_applied_means_the_recommended_value_or_the_same_size() -> None:
    assert same_value("1536m", "1.5g") and same_value(" MAGIC ", "magic")
    assert not same_value("1536", "1.5g") and not same_value("400", "200")
    spill = finding("spill", "spark.sql.shuffle.partitions", "800", 20_000, 40_000)
    advised = run(1, 100_000, {"spark.sql.shuffle.partitions": "200"}, [spill])
    assert judge(advised, run(2, 70_000, {"spark.sql.shuffle.partitions": "200"})) == []
    assert judge(advised, run(2, 70_000)) == []  # not set: not applied
    (outcome,) = judge(advised, run(2, 70_000, {"spark.sql.shuffle.partitions": "800"}))
    assert (outcome.previous, outcome.recommended, outcome.verdict) == ("200", "800", "helped")
    assert outcome.finding_gone and outcome.within_prediction  # saved 30 s of 20-40 s


def test_performance_verdicts_against_the_noise() -> None:
    advised = run(1, 100_000, {}, [finding("spill", "k", "v", 2_000, 4_000)])
    applied = {"k": "v"}
    verdict = [
        judge(advised, run(2, ms, applied, findings))[0]
        for ms, findings in (
            (95_000, []),  # within noise, gone, a saving below the noise: helped
            (95_000, [finding("spill", "k", "v")]),  # within noise, still there: no effect
            (115_000, []),  # 15% slower: worse
        )
    ]
    assert [o.verdict for o in verdict] == ["helped", "no effect", "worse"]
    assert [o.within_prediction for o in verdict] == [True, True, False]
    big = run(1, 100_000, {}, [finding("skew", "k", "v", 30_000, 50_000)])
    assert judge(big, run(2, 97_000, applied))[0].verdict == "no effect"  # its saving not seen
    other_input = judge(big, run(2, 50_000, applied, input_bytes=30 * GIB))[0]
    assert other_input.verdict == "not comparable" and other_input.input_ratio == 3.0


def test_failures_and_memory_settings() -> None:
    loss = finding("executor-loss", "spark.executor.memoryOverhead", "1408m")
    advised = run(1, 300_000, {"spark.executor.memoryOverhead": "384m"}, [loss])
    fixed = run(
        2,
        400_000,  # slower, but it no longer dies: the failure's fix helped
        {"spark.executor.memoryOverhead": "1408M"},
        executor_peaks=[{"rss_bytes": GIB + 5, "heap_used_bytes": GIB // 2}, {"rss_bytes": GIB}],
    )
    (outcome,) = judge(advised, fixed)
    assert (outcome.verdict, outcome.died_before, outcome.died_after) == ("helped", True, False)
    assert outcome.measured_peak_bytes == GIB + 5 and outcome.within_prediction is None
    again = run(2, 200_000, {"spark.executor.memoryOverhead": "1408m"}, [loss])
    assert judge(advised, again)[0].verdict == "no effect"
    assert judge(advised, again)[0].measured_peak_bytes is None  # no agent readings

    # A performance fix after which the run dies is worse, whatever the time.
    gc = run(1, 100_000, {}, [finding("gc-pressure", "spark.executor.memory", "2g", 5_000, 9_000)])
    died = run(2, 50_000, {"spark.executor.memory": "2048m"}, [finding("job-failures", "x", "y")])
    assert judge(gc, died)[0].verdict == "worse"


def test_hit_rates_per_key() -> None:
    rows = [
        ("spill", "helped", True, 3),
        ("spill", "worse", False, 1),
        ("spill", "not comparable", None, 2),
        ("executor-loss", "helped", None, 1),
    ]
    spill, loss = hit_rates(rows)
    assert (spill.key, spill.judged, spill.rate, spill.predicted) == ("spill", 4, 0.75, 4)
    assert describe_rate(spill) == (
        "spill: helped 3 of 4 (75%; no effect 0, worse 1), saving within the prediction 3 of 4; "
        "2 more on runs with other input"
    )
    assert describe_rate(loss) == "executor-loss: helped 1 of 1 (100%; no effect 0, worse 0)"


def test_memory_findings_are_recorded_however_taken() -> None:
    """A memory finding's recommendations are kept when not (fully) taken, and not judged."""
    kill = finding("executor-loss", "spark.executor.memoryOverhead", "1408m")
    kill["recommendations"].append(
        {"kind": "config", "config": "spark.sql.shuffle.partitions", "value": "400", "reason": "r"}
    )
    advised = run(1, 300_000, {"spark.executor.memoryOverhead": "384m"}, [kill])
    later = run(2, 300_000, {"spark.executor.memoryOverhead": "1g"}, [kill])
    overhead, partitions = judge(advised, later)
    assert (overhead.applied, overhead.verdict, overhead.applied_value) == (
        "partly",
        "partly applied",
        "1g",
    )
    assert (partitions.applied, partitions.verdict, partitions.bound) == (
        "not applied",
        "not applied",
        "container",  # measured by what the finding's memory setting bounds
    )
    assert overhead.memory and overhead.died_before and overhead.died_after
    # Not counted in a hit rate; a performance finding's recommendation not taken is not kept.
    assert hit_rates([("executor-loss", overhead.verdict, None, 1)]) == []
    spill = finding("spill", "spark.sql.shuffle.partitions", "800")
    assert judge(run(1, 100_000, {}, [spill]), run(2, 100_000)) == []
