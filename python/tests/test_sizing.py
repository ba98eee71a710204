"""``recommend --input-size SIZE [--job-type T] [--job J]``: settings for an input size from the
stored runs that read the most similar amount, checked with the what-if simulator."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from synthetic_runs import make_run

import sparkprof
from sparkprof.sizing import job_type, parse_size, recommend_for_input
from sparkprof.store import HistoryStore

ENTRY = [sys.executable, "-m", "sparkprof.cli"]


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("10GB", 10 * 1000**3),
        ("10 gb", 10 * 1000**3),
        ("10GiB", 10 * 1024**3),
        ("10g", 10 * 1024**3),
        ("1.5t", int(1.5 * 1024**4)),
        ("512MB", 512 * 1000**2),
        ("123456", 123456),
        ("2kib", 2048),
    ],
)
def test_sizes(text: str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize(
    "text", ["", "GB", "ten GB", "10XB", "10 iB", "-1GB", "0", "1e30", "9" * 40]
)
def test_bad_sizes(text: str) -> None:
    with pytest.raises(ValueError):
        parse_size(text)


def test_job_type_from_the_property_else_from_what_the_run_wrote() -> None:
    def report(read: int, written: int) -> dict[str, Any]:
        return {"totals": {"input_bytes": read, "output_bytes": written}}

    assert job_type({"spark.sparkprof.jobType": "ml"}, report(100, 100)) == "ml"
    assert job_type({}, report(100, 10)) == "etl"
    assert job_type({}, report(100, 9)) == "query"
    assert job_type({}, report(0, 5)) == "etl"
    assert job_type({}, report(0, 0)) == "other"


@pytest.fixture()
def sized_runs(tmp_path: Path, demo_logs: dict[str, Path]) -> tuple[HistoryStore, dict[int, Any]]:
    """Runs of an ETL job that read 1x, 2x, 4x and 8x the demo's input (the job type named by
    spark.sparkprof.jobType), and one of another type."""
    folder = tmp_path / "runs"
    folder.mkdir()
    store = HistoryStore(f"sqlite:///{tmp_path}/history.sqlite")
    stored = {}
    for day, factor in enumerate([1, 2, 4, 8], start=1):
        path = make_run(
            demo_logs["plain"],
            folder,
            day,
            bytes_factor=factor,
            settings={"spark.sparkprof.jobType": "etl", "spark.sparkprof.jobKey": "sales"},
        )
        stored[factor] = store.save_run(next(sparkprof.iter_applications(path)), str(path))
    path = make_run(
        demo_logs["plain"], folder, 9, settings={"spark.sparkprof.jobType": "reporting"}
    )
    store.save_run(next(sparkprof.iter_applications(path)), str(path))
    return store, stored


def _input(run: Any) -> int:
    return int(json.loads(run.report_json)["totals"]["input_bytes"])


def test_nearest_runs_simulated_and_scaled(sized_runs: tuple[HistoryStore, dict[int, Any]]) -> None:
    store, stored = sized_runs
    target = 6 * _input(stored[1])  # nearest on a log scale: 8x (1.33), 4x (1.5), 2x, 1x
    result = recommend_for_input(store, target, "etl")
    assert [e.run_id for e in result.evidence] == [
        stored[8].id,
        stored[4].id,
        stored[2].id,
        stored[1].id,
    ]
    assert all(e.simulated for e in result.evidence)
    for e in result.evidence:
        assert e.scale == pytest.approx(target / e.input_bytes)
        assert 1 <= e.efficient_executors <= 3 * e.executors
        assert e.self_prediction_error is not None
        # the efficient count is what the engine's simulator predicts, within the knee
        analysed = next(sparkprof.iter_applications(store.run(str(e.run_id)).source))
        words = [f"spark.executor.instances={e.efficient_executors}"]
        words.append(f"spark.sql.shuffle.partitions={e.shuffle_partitions}")
        assert analysed.whatif(words).predicted.wall_ms == e.predicted_wall_ms
    executors = sorted(max(1, round(e.efficient_executors * e.scale)) for e in result.evidence)
    assert result.settings["spark.executor.instances"] == str(executors[len(executors) // 2])
    nearest = result.evidence[0]
    assert result.settings["spark.executor.cores"] == str(nearest.cores_per_executor)
    assert result.settings["spark.executor.memory"] == f"{nearest.executor_memory_mb}m"
    assert result.expected_wall_ms is not None and result.expected_wall_ms > 0
    assert result.confidence in ("high", "medium")
    assert any("self-prediction" in reason for reason in result.confidence_reasons)


def test_a_bigger_input_asks_for_more_executors(
    sized_runs: tuple[HistoryStore, dict[int, Any]],
) -> None:
    store, stored = sized_runs
    small = recommend_for_input(store, _input(stored[1]), "etl", max_evidence=1)
    big = recommend_for_input(store, 16 * _input(stored[1]), "etl", max_evidence=1)
    assert small.evidence[0].run_id == stored[1].id and big.evidence[0].run_id == stored[8].id
    assert int(big.settings["spark.executor.instances"]) >= 2 * int(
        small.settings["spark.executor.instances"]
    )
    assert int(big.settings["spark.sql.shuffle.partitions"]) > int(
        small.settings["spark.sql.shuffle.partitions"]
    )


def test_only_the_job_type_asked_for(sized_runs: tuple[HistoryStore, dict[int, Any]]) -> None:
    store, stored = sized_runs
    result = recommend_for_input(store, _input(stored[1]), "reporting")
    assert [e.app_id for e in result.evidence] == ["application_1700000000000_0009"]
    with pytest.raises(LookupError, match="'ml'"):
        recommend_for_input(store, 10**9, "ml")
    by_job = recommend_for_input(store, _input(stored[1]), job_key="sales")
    assert {e.job_key for e in by_job.evidence} == {"sales"}


def test_a_log_that_moved_is_scaled_without_simulation(
    sized_runs: tuple[HistoryStore, dict[int, Any]],
) -> None:
    store, stored = sized_runs
    for run in stored.values():
        Path(run.source).unlink()
    result = recommend_for_input(store, _input(stored[2]), "etl")
    assert not any(e.simulated for e in result.evidence)
    assert all("could not be read again" in e.note for e in result.evidence)
    assert result.expected_wall_ms is None
    assert result.confidence == "low"


def test_the_command(sized_runs: tuple[HistoryStore, dict[int, Any]]) -> None:
    store, stored = sized_runs
    size = str(4 * _input(stored[1]))
    args = ["recommend", "--input-size", size, "--job-type", "etl", "--store", store.url]
    done = subprocess.run([*ENTRY, *args], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "evidence runs:" in done.stdout and "spark.executor.instances=" in done.stdout
    assert "application_1700000000000_0003" in done.stdout
    done = subprocess.run([*ENTRY, *args, "--json"], capture_output=True, text=True, check=False)
    answer = json.loads(done.stdout)
    assert answer["evidence"][0]["run_id"] == stored[4].id
    assert answer["confidence"] in ("high", "medium", "low")
    bad = subprocess.run(
        [*ENTRY, "recommend", "--input-size", "lots", "--store", store.url],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 2 and "not a size" in bad.stderr
    none = subprocess.run(
        [*ENTRY, "recommend", "--input-size", "1GB", "--job-type", "ml", "--store", store.url],
        capture_output=True,
        text=True,
        check=False,
    )
    assert none.returncode == 1 and "no complete stored run of type 'ml'" in none.stderr


def test_the_command_prices_with_the_cli_cost_flags(
    sized_runs: tuple[HistoryStore, dict[int, Any]], native_cli: Path
) -> None:
    """recommend --input-size with the CLI's cost flags: each evidence run's price is the
    number `sparkprof whatif` prints for the same scenario and flags."""
    store, stored = sized_runs
    flags = ["--instance-type", "r5.2xlarge", "--driver-instance-type", "m5.xlarge", "--spot"]
    args = ["recommend", "--input-size", str(3 * _input(stored[1])), "--job-type", "etl"]
    done = subprocess.run(
        [*ENTRY, *args, *flags, "--store", store.url, "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    for evidence in answer["evidence"]:
        cli = subprocess.run(
            [
                str(native_cli),
                "whatif",
                store.run(str(evidence["run_id"])).source,
                "--set",
                f"spark.executor.instances={evidence['efficient_executors']}",
                "--set",
                f"spark.sql.shuffle.partitions={evidence['shuffle_partitions']}",
                *flags,
                "--format",
                "json",
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        whatif = json.loads(cli.stdout)
        assert evidence["predicted_cost"] == whatif["cost"]["predicted"]
        assert evidence["predicted_wall_ms"] == whatif["predicted"]["wall_ms"]
    scaled = sorted(e["predicted_cost"] * e["scale"] for e in answer["evidence"])
    assert answer["expected_cost"] == pytest.approx(statistics.median(scaled))
    unpriced = subprocess.run(
        [*ENTRY, *args, "--store", store.url, "--json"], capture_output=True, text=True, check=True
    )
    assert json.loads(unpriced.stdout)["expected_cost"] != answer["expected_cost"]
    refused = subprocess.run(
        [*ENTRY, "recommend", "--job", "sales", "--spot", "--store", store.url],
        capture_output=True,
        text=True,
        check=False,
    )
    assert refused.returncode == 2 and "cost options go with --input-size" in refused.stderr
