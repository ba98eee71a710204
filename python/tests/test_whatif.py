"""``sparkprof.whatif``: the engine's scheduler replay from Python, byte for byte the JSON of
``sparkprof whatif --format json``, with typed results."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

import sparkprof
from sparkprof.what_if import SUPPORTED_SETTINGS, WhatifPrediction, setting_words

REPO = Path(__file__).resolve().parents[2]


def cli_whatif(native_cli: Path, path: Path, *args: str) -> str:
    done = subprocess.run(
        [str(native_cli), "whatif", str(path), *args, "--format", "json"],
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode("utf-8")


SCENARIOS = [
    ({}, []),
    ({"spark.executor.instances": 8}, []),
    ({"spark.executor.cores": 2, "spark.sql.shuffle.partitions": 50}, ["skew"]),
    ({"spark.executor.memory": "8g", "spark.dynamicAllocation.enabled": False}, ["broadcast"]),
]


@pytest.mark.parametrize(("settings", "fixes"), SCENARIOS)
def test_same_json_as_the_cli(
    native_cli: Path, demo_logs: dict[str, Path], settings: dict[str, object], fixes: list[str]
) -> None:
    log = demo_logs["zstd"]
    args = [a for word in setting_words(settings) for a in ("--set", word)]
    args += [a for fix in fixes for a in ("--fix", fix)]
    result = sparkprof.whatif(log, settings, fixes)  # type: ignore[arg-type]
    assert result.json + "\n" == cli_whatif(native_cli, log, *args)
    assert result.prediction.json == result.json


def test_typed_prediction(demo_logs: dict[str, Path]) -> None:
    report = sparkprof.whatif(demo_logs["plain"], {"spark.executor.instances": 1})
    prediction = report.prediction
    raw = json.loads(prediction.json)
    assert (
        prediction.app_id
        == raw["app_id"]
        == sparkprof.analyze(demo_logs["plain"]).application.application.id
    )
    assert prediction.predicted.executors == 1
    assert prediction.actual.executors == raw["actual"]["executors"] > 1
    assert prediction.baseline.wall_ms == raw["baseline"]["wall_ms"]
    assert prediction.predicted.wall_ms > prediction.baseline.wall_ms  # one executor is slower
    assert prediction.speedup == pytest.approx(
        raw["baseline"]["wall_ms"] / raw["predicted"]["wall_ms"]
    )
    assert [s.stage_id for s in prediction.stages] == [s["stage_id"] for s in raw["stages"]]
    assert prediction.changes and prediction.assumptions
    assert 0 <= prediction.self_prediction_error == raw["self_prediction_error"]
    assert isinstance(prediction.cost.available, bool)


def test_settings_as_a_mapping_or_as_words(demo_logs: dict[str, Path]) -> None:
    log = demo_logs["plain"]
    as_mapping = sparkprof.whatif(log, {"spark.executor.instances": 3, "spark.speculation": True})
    as_words = sparkprof.whatif(log, ["spark.executor.instances=3", "spark.speculation=true"])
    assert as_mapping.json == as_words.json


def test_an_analysed_application_simulates_without_reading_again(
    demo_logs: dict[str, Path],
) -> None:
    log = demo_logs["lz4"]
    analysed = sparkprof.analyze(log).applications[0]
    one = analysed.whatif({"spark.executor.instances": 2}, ["skew"])
    assert one.json == sparkprof.whatif(log, {"spark.executor.instances": 2}, ["skew"]).json


@pytest.mark.parametrize(
    ("settings", "fixes", "message"),
    [
        ({"spark.driver.memory": "4g"}, [], "cannot simulate spark.driver.memory"),
        ({"spark.executor.instances": "many"}, [], "spark.executor.instances"),
        ({}, ["everything"], "everything"),
        (["spark.executor.instances"], [], "spark.executor.instances"),
    ],
)
def test_unknown_settings_and_fixes_are_clear_errors(
    tmp_path: Path, settings: object, fixes: list[str], message: str
) -> None:
    # Checked before any log is read: the path does not even exist.
    with pytest.raises(ValueError, match=message):
        sparkprof.whatif(tmp_path / "missing", settings, fixes)  # type: ignore[arg-type]
    assert "spark.executor.instances" in SUPPORTED_SETTINGS


def test_one_string_is_not_a_list_of_settings(demo_logs: dict[str, Path]) -> None:
    with pytest.raises(TypeError, match="not one string"):
        sparkprof.whatif(demo_logs["plain"], "spark.executor.instances=2")


def test_nothing_analysable(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not an event log\n" * 100)
    with pytest.raises(sparkprof.NothingAnalysableError):
        sparkprof.whatif(tmp_path, {"spark.executor.instances": 2})


def test_several_applications_as_the_cli_wraps_them(
    native_cli: Path, demo_logs: dict[str, Path], tmp_path: Path
) -> None:
    folder = tmp_path / "apps"
    folder.mkdir()
    for codec in ("plain", "gz"):
        shutil.copy(demo_logs[codec], folder / demo_logs[codec].name)
    report = sparkprof.whatif(folder, {"spark.executor.instances": 4})
    assert len(report.predictions) == 2
    expected = cli_whatif(native_cli, folder, "--set", "spark.executor.instances=4")
    assert report.json + "\n" == expected
    with pytest.raises(ValueError, match="2 applications"):
        report.prediction  # noqa: B018


def test_not_a_whatif_object() -> None:
    with pytest.raises(ValueError, match=r"sparkprof\.whatif/v1"):
        WhatifPrediction.from_json('{"schema": "sparkprof.report/v1"}')


def test_a_shared_real_log(native_cli: Path, shared_eventlogs: Path) -> None:
    logs = sorted(shared_eventlogs.rglob("*.zstd"))
    if not logs:
        pytest.skip("no zstd logs in the shared set")
    log = min(logs, key=lambda p: p.stat().st_size)
    settings = {"spark.executor.instances": 2, "spark.sql.shuffle.partitions": 64}
    result = sparkprof.whatif(log, settings, ["skew"])
    expected = cli_whatif(
        native_cli,
        log,
        "--set",
        "spark.executor.instances=2",
        "--set",
        "spark.sql.shuffle.partitions=64",
        "--fix",
        "skew",
    )
    assert result.json + "\n" == expected


# The CLI's cost flags and the CostOptions that mean the same (docs/cost.md).
COST_CASES = [
    (
        ["--instance-type", "r5.2xlarge", "--driver-instance-type", "m5.xlarge"],
        sparkprof.CostOptions(instance_type="r5.2xlarge", driver_instance_type="m5.xlarge"),
    ),
    (["--cloud", "gcp", "--spot"], sparkprof.CostOptions(cloud="gcp", spot=True)),
    (
        ["--price-per-core-hour", "0.045", "--price-per-gib-hour", "0.006"],
        sparkprof.CostOptions(price_per_core_hour=0.045, price_per_gib_hour=0.006),
    ),
    (
        ["--dbu-price", "0.15", "--dbus-per-instance-hour", "1.37", "--max-slowdown", "0.2"],
        sparkprof.CostOptions(dbu_price=0.15, dbus_per_instance_hour=1.37, max_slowdown=0.2),
    ),
]


@pytest.mark.parametrize(("flags", "options"), COST_CASES)
def test_cost_options_give_the_cli_numbers(
    native_cli: Path,
    demo_logs: dict[str, Path],
    flags: list[str],
    options: sparkprof.CostOptions,
) -> None:
    log = demo_logs["zstd"]
    settings = {"spark.executor.instances": 6}
    result = sparkprof.whatif(log, settings, cost=options)
    expected = cli_whatif(native_cli, log, "--set", "spark.executor.instances=6", *flags)
    assert result.json + "\n" == expected
    cost = result.prediction.cost
    assert cost.available and cost.predicted > 0
    # analyze takes the same options: its cost section is the CLI's with the same flags, and
    # differs from the default pricing (the options reached the engine).
    done = subprocess.run(
        [str(native_cli), "analyze", str(log), "--format", "json", "-q", *flags],
        capture_output=True,
        check=True,
    )
    priced = sparkprof.analyze(log, cost=options).json
    assert priced == done.stdout.decode()
    assert priced != sparkprof.analyze(log).json


def test_cost_options_from_a_price_file(
    native_cli: Path, demo_logs: dict[str, Path], tmp_path: Path
) -> None:
    catalogue = json.loads((REPO / "analyzer/cost/prices.json").read_text())
    for instance in catalogue["instances"]:
        instance["on_demand_per_hour"] *= 3
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps(catalogue))
    log = demo_logs["plain"]
    result = sparkprof.whatif(
        log, {"spark.executor.cores": 2}, cost=sparkprof.CostOptions(prices=prices)
    )
    expected = cli_whatif(
        native_cli, log, "--set", "spark.executor.cores=2", "--prices", str(prices)
    )
    assert result.json + "\n" == expected
    default = sparkprof.whatif(log, {"spark.executor.cores": 2}).prediction.cost
    assert result.prediction.cost.actual == pytest.approx(3 * default.actual)


def test_cost_options_are_checked_as_the_cli_checks_them(demo_logs: dict[str, Path]) -> None:
    log = demo_logs["plain"]
    with pytest.raises(ValueError, match="go together"):
        sparkprof.whatif(log, cost=sparkprof.CostOptions(price_per_core_hour=0.1))
    with pytest.raises(ValueError, match="cloud"):
        sparkprof.whatif(log, cost=sparkprof.CostOptions(cloud="ibm"))  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        sparkprof.whatif(log, cost=sparkprof.CostOptions(prices="/no/such/prices.json"))


def test_one_preparation_gives_the_same_answers(demo_logs: dict[str, Path]) -> None:
    """Scenarios replayed against the run prepared once equal those prepared each time."""
    from sparkprof.what_if import simulate

    analysed = sparkprof.analyze(demo_logs["zstd"]).applications[0]
    for count in (1, 2, 5, 9):
        words = [f"spark.executor.instances={count}", "spark.sql.shuffle.partitions=64"]
        prepared = simulate(analysed, words)
        again = simulate(analysed, words, prepared=False)
        assert prepared.json == again.json
