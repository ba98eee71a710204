"""The run history on SQLite and on a real PostgreSQL server: migrations, what a run keeps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

import sparkprof
from sparkprof.run_record import JobKeyRule
from sparkprof.store import HistoryStore, RunNotFoundError, default_store_url
from sparkprof.store.schema import Base


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> HistoryStore:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path}/history.sqlite"
    else:
        url = request.getfixturevalue("postgresql_url")
    opened = HistoryStore(url)
    request.addfinalizer(opened.close)
    return opened


def test_migrations_build_exactly_the_models(store: HistoryStore) -> None:
    with store.engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    assert differences == []
    HistoryStore(store.url).close()  # opening a migrated store again changes nothing


def test_a_run_keeps_the_engines_report(store: HistoryStore, demo_logs: dict[str, Path]) -> None:
    analysed = next(sparkprof.iter_applications(demo_logs["zstd"]))
    report = analysed.report
    run = store.save_run(analysed, str(demo_logs["zstd"]))
    assert run.report_json == report.json
    assert run.job_key == "nightly-etl"  # the application name
    assert (run.app_id, run.start_ms, run.duration_ms) == (
        report.application.id,
        report.application.start_ms,
        report.application.duration_ms,
    )
    assert [
        (s.stage_id, s.duration_ms, s.task_max_ms, s.disk_bytes_spilled) for s in run.stages
    ] == [
        (s.stage_id, s.duration_ms, s.task_duration_ms.maximum, s.totals.disk_bytes_spilled)
        for s in report.stages
    ]
    assert [(f.rule, json.loads(f.stage_ids_json), f.cost_ms) for f in run.findings] == [
        (f.rule, f.stage_ids, f.cost_ms) for f in report.findings
    ]
    assert json.loads(run.settings_json) == analysed.spark_properties
    cluster = json.loads(run.cluster_json)
    assert cluster["peak_slots"] == report.phases.peak_slots
    assert cluster["max_concurrent_executors"] == report.executors.max_concurrent


def test_saving_again_replaces_the_run_and_keeps_its_feedback(
    store: HistoryStore, demo_logs: dict[str, Path]
) -> None:
    analysed = next(sparkprof.iter_applications(demo_logs["plain"]))
    first = store.save_run(analysed, "a")
    store.add_feedback(first, "data-skew", [1], "reject", "known hot key")
    again = store.save_run(analysed, "b", JobKeyRule(explicit="sales"))
    assert again.id == first.id and again.source == "b" and again.job_key == "sales"
    assert [(f.rule, f.verdict, f.note) for f in again.feedback] == [
        ("data-skew", "reject", "known hot key")
    ]
    assert len(store.runs()) == 1
    assert store.run(analysed.report.application.id).id == first.id
    with pytest.raises(RunNotFoundError):
        store.run("app-missing")
    for too_large in ("9223372036854775808", "9" * 40):  # past a 64-bit id: no such run
        with pytest.raises(RunNotFoundError):
            store.run(too_large)


def test_job_key_comes_from_the_settings_first(demo_logs: dict[str, Path]) -> None:
    report = sparkprof.analyze(demo_logs["plain"]).application
    assert JobKeyRule().key_for(report, {}) == "nightly-etl"
    airflow = {"spark.openlineage.parentJobName": "sales_dag.enrich"}
    assert JobKeyRule().key_for(report, airflow) == "sales_dag.enrich"
    both = {**airflow, "spark.sparkprof.jobKey": "sales"}
    assert JobKeyRule().key_for(report, both) == "sales"
    assert (
        JobKeyRule(properties=("spark.custom.job",)).key_for(
            report, {**both, "spark.custom.job": "custom"}
        )
        == "custom"
    )
    assert JobKeyRule(explicit="given").key_for(report, both) == "given"


def test_default_store_is_sqlite_in_the_user_data_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPARKPROF_STORE", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", "/somewhere/data")
    assert default_store_url() == "sqlite:////somewhere/data/sparkprof/history.sqlite"
    monkeypatch.setenv("SPARKPROF_STORE", "postgresql://db/runs")
    assert default_store_url() == "postgresql://db/runs"
