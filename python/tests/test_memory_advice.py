"""The closed loop on memory advice (advice_record.py, issue 29 goal 5), on real runs: the
workloads' fixtures of a memory kill and of its control -- the same job run again with other
memory settings -- analysed with their agent profiles by the engine, stored as two runs of one
job. Each figure the record keeps is recomputed here from the two reports."""

from __future__ import annotations

import html
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import sparkprof
from sparkprof.advice_record import MemoryRecord, applied_how
from sparkprof.run_record import JobKeyRule
from sparkprof.serve_guard import access_for
from sparkprof.server import create_app
from sparkprof.store import HistoryStore

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "workloads" / "fixtures" / "3.5.9"
ENTRY = [sys.executable, "-m", "sparkprof.cli"]


def _profiled(name: str, into: Path) -> tuple[Path, Path]:
    """A workload's event log and its agent profile (decompressed), or a skip."""
    log = FIXTURES / f"{name}.zstd"
    compressed = FIXTURES / f"{name}.sparkprof.zstd"
    zstd = shutil.which("zstd")
    if not log.is_file() or not compressed.is_file() or not zstd:
        pytest.skip("the workloads' fixtures or zstd are missing")
    profile = into / f"{name}.sparkprof"
    subprocess.run([zstd, "-q", "-d", str(compressed), "-o", str(profile)], check=True)
    return log, profile


def _store_pair(store: HistoryStore, tmp_path: Path, job: str, names: list[str]) -> list[Any]:
    """Stores the workloads as runs of ``job`` (in start order: the kill ran first); returns
    their reports."""
    reports = []
    for name in names:
        log, profile = _profiled(name, tmp_path)
        analysed = next(sparkprof.iter_applications(log, profile=profile))
        store.save_run(analysed, str(log), JobKeyRule(explicit=job))
        reports.append(json.loads(analysed.report.json))
    return reports


def _peak_container(report: dict[str, Any]) -> int:
    """The largest executor's resident set + Python workers (report-schema.md, memory.peaks)."""
    return max(
        e["memory"]["peaks"]["rss_bytes"] + e["memory"]["peaks"]["python_rss_bytes"]
        for e in report["executors"]["list"]
        if "memory" in e
    )


def _evidence(report: dict[str, Any], rule: str, name: str) -> int:
    (finding,) = [f for f in report["findings"] if f["rule"] == rule]
    (value,) = [e["value"] for e in finding["evidence"] if e["name"] == name]
    return int(value)


@pytest.fixture
def store(tmp_path: Path) -> HistoryStore:
    opened = HistoryStore(f"sqlite:///{tmp_path}/history.sqlite")
    yield opened
    opened.close()


def test_yarn_kill_then_the_recommended_overhead(store: HistoryStore, tmp_path: Path) -> None:
    """A YARN container killed for its physical memory (overhead 384m; the engine recommends
    768m), then the same job with 1536m (more than recommended: applied) that lived."""
    killed, lived = _store_pair(
        store, tmp_path, "yarn-native", ["yarn_pmem_kill", "yarn_pmem_fits"]
    )
    records = store.memory_advice(["yarn-native"])
    # The job's failure and its lost executors recommended the same: one record names both.
    (record,) = records
    assert record.rule == "job-failures, executor-loss"
    (setting,) = record.settings
    assert setting.pop("reason", "").startswith("25% headroom above the larger of the current")
    assert setting == {
        "setting": "spark.executor.memoryOverhead",
        "previous": "384m",
        "recommended": "768m",
        "now": "1536m",
        "applied": "applied",
    }
    assert (record.applied, record.verdict) == ("applied", "helped")
    assert (record.died_before, record.died_after) == (True, False)
    assert record.memory_losses_before == _evidence(killed, "executor-loss", "lost_to_memory") == 2
    assert record.memory_losses_after == 0
    assert record.death_before and record.death_before.endswith(": Container memory limit exceeded")
    # Peaks: the agent's readings; limits: the kill's container (heap + overhead, as YARN sized
    # it) and then what the executor asks for (the cost section: 512m + 1536m).
    assert record.bound == "container"
    assert record.peak_before_bytes == _peak_container(killed)
    assert record.peak_after_bytes == _peak_container(lived)
    assert record.limit_before_bytes == _evidence(killed, "executor-loss", "container_limit_bytes")
    assert record.limit_before_bytes == (512 + 384) << 20
    assert record.limit_after_bytes == int(lived["cost"]["executor_memory_gib"] * (1 << 30))
    assert record.limit_after_bytes == (512 + 1536) << 20
    assert record.peak_after_bytes < record.limit_after_bytes
    assert record.predicted_effect == killed["findings"][0]["expected_impact"]["method"]
    assert record.summary.startswith(
        f"run {record.advised_run_id} -> run {record.applied_run_id}, job-failures, executor-loss: "
        "applied "
        "(spark.executor.memoryOverhead 384m -> 1536m (recommended 768m: applied)); did not die"
    )
    assert "against limit 896.0 MiB -> 2.0 GiB" in record.summary
    # The hit rate counts it: applied and the run lived.
    rates = store.advice_hit_rates(job_key="yarn-native")
    assert [(r.key, r.helped, r.judged) for r in rates if r.key != "resource-wait"] == [
        ("executor-loss", 1, 1),
        ("job-failures", 1, 1),
    ]


def test_cgroup_kill_then_advice_not_taken(store: HistoryStore, tmp_path: Path) -> None:
    """A kernel OOM kill in a 1 GiB cgroup (off-heap 1g; the engine recommends turning off-heap
    off), then the control: off-heap kept on at 256m. Not applied, and it did not die: the
    record says both, and counts nothing in the hit rate."""
    killed, lived = _store_pair(
        store, tmp_path, "cgroup-sort", ["cgroup_memory_kill", "cgroup_memory_fits"]
    )
    records = store.memory_advice(["cgroup-sort"])
    (record,) = records
    assert record.rule == "job-failures, executor-loss"
    assert [s["setting"] for s in record.settings] == ["spark.memory.offHeap.enabled"]
    assert record.settings[0]["recommended"] == "false" and record.settings[0]["now"] == "true"
    assert (record.applied, record.verdict) == ("not applied", "not applied")
    assert (record.died_before, record.died_after) == (True, False)
    cgroup = 1 << 30
    assert record.limit_before_bytes == record.limit_after_bytes == cgroup
    assert all(
        e["memory"]["last"]["container_limit_bytes"] == cgroup
        for e in killed["executors"]["list"] + lived["executors"]["list"]
        if "memory" in e
    )
    assert record.peak_before_bytes == _peak_container(killed)
    assert record.peak_after_bytes == _peak_container(lived)
    assert "executor-loss: not applied" in record.summary and "did not die" in record.summary
    assert all(r.key != "executor-loss" for r in store.advice_hit_rates(job_key="cgroup-sort"))


def test_applied_partly_or_not() -> None:
    """How a recommended value was taken: the same value or past it, towards it, or not."""
    assert applied_how("768m", "384m", "0.75g") == "applied"
    assert applied_how("768m", "384m", "2g") == "applied"  # more than asked for
    assert applied_how("768m", "384m", "512m") == "partly"
    assert applied_how("768m", "384m", "384m") == "not applied"
    assert applied_how("768m", "384m", "256m") == "not applied"  # the other way
    assert applied_how("768m", "384m", None) == "not applied"
    assert applied_how("0.4", "0.1", "0.25") == "partly"
    assert applied_how("256m", "1g", "512m") == "partly"  # a smaller off-heap, half way
    assert applied_how("false", "true", "false") == "applied"
    assert applied_how("2g", "2048", "3g") == "not applied"  # a unitless size: text only
    assert applied_how("768m", None, "1g") == "applied"  # unset: Spark's default, lower
    assert applied_how("768m", None, "512m") == "not applied"


def test_recommend_and_serve_show_the_record(tmp_path: Path) -> None:
    """The user's path: collect the plugin's event logs with its profiles, then `recommend` and
    the serve page show what the next run did with the memory advice."""
    logs, profiles = tmp_path / "logs", tmp_path / "profiles"
    logs.mkdir()
    for name in ("yarn_pmem_kill", "yarn_pmem_fits"):
        log, profile = _profiled(name, tmp_path)
        shutil.copy(log, logs / log.name)
        app_id = sparkprof.analyze(log).application.application.id
        (profiles / app_id).mkdir(parents=True)
        shutil.move(profile, profiles / app_id / "profile.sparkprof")
    url = f"sqlite:///{tmp_path}/history.sqlite"

    def cli(*args: str) -> str:
        done = subprocess.run(
            [*ENTRY, *args, "--store", url], capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    cli("collect", "--event-log-dir", str(logs), "--profile", str(profiles), "--job-key", "yarn")
    text = cli("recommend", "--job", "yarn")
    assert "memory advice and the next run" in text
    assert (
        "job-failures, executor-loss: applied (spark.executor.memoryOverhead 384m -> 1536m" in text
    )
    assert "did not die" in text and "against limit 896.0 MiB -> 2.0 GiB" in text
    # The killed run was shorter only because it died: no example to go back to.
    assert "spark.executor.memoryOverhead=384m" not in text
    result = json.loads(cli("recommend", "--job", "yarn", "--json"))
    loss = result["memory_outcomes"]
    assert [(m["applied"], m["died_before"], m["died_after"]) for m in loss] == [
        ("applied", True, False)
    ]
    assert loss[0]["peak_before_bytes"] > loss[0]["limit_before_bytes"]  # measured at the kill

    token = "test-token-" + "x" * 20
    store = HistoryStore(url)
    client = TestClient(
        create_app(store, access_for("127.0.0.1", token)),
        base_url="http://127.0.0.1:8080",
        headers={"X-Sparkprof-Token": token},
    )
    page = client.get("/").text
    summary = MemoryRecord(**{**loss[0]}).summary
    assert "memory advice and the next run" in page
    assert "data-taken='applied'" in page and html.escape(summary) in page
    advice = client.get("/advice", params={"job": "yarn"}).json()
    assert [(m["rule"], m["applied"]) for m in advice["memory"]] == [
        ("job-failures, executor-loss", "applied")
    ]
    store.close()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_migration_keeps_the_earlier_record(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """A store at revision 0003 with recorded outcomes upgrades to 0004: its rows keep their
    values (not memory records, applied) and new runs get the memory record."""
    from alembic import command
    from alembic.config import Config
    from synthetic_runs import make_run

    from sparkprof.store.history_store import MIGRATIONS

    if backend == "sqlite":
        url = f"sqlite:///{tmp_path}/history.sqlite"
    else:
        url = request.getfixturevalue("postgresql_url")
    demo = request.getfixturevalue("demo_logs")["plain"]
    store = HistoryStore(url)
    magic = {"spark.hadoop.fs.s3a.committer.name": "magic"}
    for day, settings in ((1, None), (2, magic)):
        path = make_run(demo, tmp_path, day, settings=settings)
        store.save_run(next(sparkprof.iter_applications(path)), str(path))
    before = [(o.rule, o.setting, o.verdict) for o in store.advice_outcomes()]
    assert before
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with store._write_engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "0003")
    store.close()
    upgraded = HistoryStore(url)
    rows = upgraded.advice_outcomes()
    assert [(o.rule, o.setting, o.verdict) for o in rows] == before
    assert all(not o.memory and o.applied == "applied" and o.memory_losses_after == 0 for o in rows)
    assert upgraded.memory_advice() == []
    upgraded.close()
