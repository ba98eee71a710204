"""``recommend --input-size`` against real runs: one ETL job run on real Spark 3.5.9 at 1x-4x its
input with executors in proportion (bench/sizing_runs.py; the logs are fixtures/sizing/). Each run
is held out in turn and sized from the others; what was recommended is compared with what the run
had and took. The measured errors are in docs/python.md, bench/RESULTS.md and sizing.py (printed
with every answer); this test keeps them true and checks that the back-test the command prints is
that same hold-out."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from sparkprof import sizing
from sparkprof.collect import EventLogDirCollector
from sparkprof.sizing import recommend_for_input
from sparkprof.store import HistoryStore, Run

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "sizing"


@pytest.fixture(scope="module")
def etl_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[HistoryStore, list[Run]]:
    store = HistoryStore(f"sqlite:///{tmp_path_factory.mktemp('sizing')}/history.sqlite")
    summary = EventLogDirCollector(store, str(FIXTURES)).collect()
    assert len(summary.stored) == len(list(FIXTURES.glob("etl_*x.zstd"))) >= 4
    runs = sorted(store.runs("sizing-etl"), key=lambda run: _input(store, run))
    return store, runs


def _input(store: HistoryStore, run: Run) -> int:
    return int(json.loads(run.report_json)["totals"]["input_bytes"])


def test_hold_one_out(etl_runs: tuple[HistoryStore, list[Run]]) -> None:
    """The errors sizing.py prints as validated are what holding out each run gives, and no
    answer whose wall time was off by more than the high bound says "high"."""
    store, runs = etl_runs
    wall_errors, executor_errors = [], []
    for held_out in runs:
        result = recommend_for_input(
            store,
            _input(store, held_out),
            "etl",
            "sizing-etl",
            exclude_run_ids=frozenset({held_out.id}),
        )
        assert held_out.id not in {e.run_id for e in result.evidence}
        assert all(e.simulated for e in result.evidence)
        recommended = int(result.settings["spark.executor.instances"])
        assert result.expected_wall_ms is not None
        took = held_out.duration_ms
        wall_error = abs(result.expected_wall_ms - took) / took
        wall_errors.append(wall_error)
        had = _executors(held_out)  # in proportion to its input, as the job was run
        executor_errors.append(abs(recommended - had) / had)
        if wall_error > sizing.HIGH_MAX_BACKTEST_ERROR:
            assert result.confidence != "high", (held_out.id, wall_error, result)
        assert any("validated on real runs" in r for r in result.confidence_reasons)
    assert statistics.median(wall_errors) == pytest.approx(
        sizing.VALIDATED_MEDIAN_WALL_ERROR, abs=0.005
    ), wall_errors
    assert statistics.median(executor_errors) == pytest.approx(
        sizing.VALIDATED_MEDIAN_EXECUTORS_ERROR, abs=0.005
    ), executor_errors


def _executors(run: Run) -> int:
    return int(json.loads(run.report_json)["executors"]["max_concurrent"])


def test_back_test_is_the_hold_out(etl_runs: tuple[HistoryStore, list[Run]]) -> None:
    """The back-test printed with an answer (each evidence run sized from the others, without
    simulating again) equals holding that run out and asking again."""
    store, runs = etl_runs
    result = recommend_for_input(store, 2 * _input(store, runs[-1]), "etl", "sizing-etl")
    assert result.backtest is not None and len(result.backtest.runs) == len(runs)
    for backtested in result.backtest.runs:
        again = recommend_for_input(
            store,
            backtested.input_bytes,
            "etl",
            "sizing-etl",
            exclude_run_ids=frozenset({backtested.run_id}),
        )
        assert int(again.settings["spark.executor.instances"]) == backtested.recommended_executors
        assert again.expected_wall_ms == backtested.expected_wall_ms
    wall = statistics.median(b.wall_error for b in result.backtest.runs)
    assert result.backtest.median_wall_error == pytest.approx(wall)
    assert any("back-test" in reason for reason in result.confidence_reasons)
