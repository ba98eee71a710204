"""``sparkprof.analyze(..., logs=...)``: the executors' own logs of a real run
(tests/workloads/process_logs), from a local directory and from an fsspec URL, reach the report
and the kill causes the same way ``sparkprof analyze --logs`` does."""

from __future__ import annotations

from pathlib import Path

import fsspec
import pytest

import sparkprof
from sparkprof import _native

RECORDED = Path(__file__).resolve().parents[2] / "tests/workloads/process_logs"


def recorded_runs() -> list[Path]:
    return sorted(RECORDED.glob("*/cgroup_memory_kill")) if RECORDED.is_dir() else []


def loss_explanation(report: sparkprof.Report) -> str:
    (application,) = report.applications
    findings = [f for f in application.report.raw["findings"] if f["rule"] == "executor-loss"]
    assert findings, [f["rule"] for f in application.report.raw["findings"]]
    return str(findings[0]["explanation"])


@pytest.mark.parametrize("run", recorded_runs(), ids=lambda p: p.parent.name)
def test_logs_name_the_kernels_kill_from_a_path_and_a_url(run: Path) -> None:
    event_log = str(run / "eventlog.zstd")
    assert "cause unknown" in loss_explanation(sparkprof.analyze(event_log))
    local = sparkprof.analyze(event_log, logs=run / "logs")
    assert "Container memory limit exceeded" in loss_explanation(local)
    logs = local.applications[0].report.raw["logs"]
    assert logs["available"] and "kernel" in logs["layouts"]
    assert any(hit["signal"] == "kernel-oom-kill" for hit in logs["hits"])

    memory = fsspec.filesystem("memory")
    for path in (run / "logs").rglob("*"):
        if path.is_file():
            memory.pipe(f"/process-logs/{path.relative_to(run / 'logs')}", path.read_bytes())
    memory.pipe("/process-logs/not-a-log.jar", b"PK")
    remote = sparkprof.analyze(event_log, logs="memory://process-logs")
    remote_hits = remote.applications[0].report.raw["logs"]["hits"]
    assert [(h["signal"], h["executor_id"], h["line"]) for h in remote_hits] == [
        (h["signal"], h["executor_id"], h["line"]) for h in logs["hits"]
    ]
    assert "Container memory limit exceeded" in loss_explanation(remote)


def test_missing_logs_are_said_not_fatal(tmp_path: Path) -> None:
    runs = recorded_runs()
    if not runs:
        pytest.skip("no recorded logs")
    report = sparkprof.analyze(str(runs[0] / "eventlog.zstd"), logs=tmp_path / "nope")
    logs = report.applications[0].report.raw["logs"]
    assert logs["available"] is False
    assert "no such file or directory" in logs["reason"]


def test_the_engine_names_what_it_reads() -> None:
    assert _native.is_executor_log_name("stderr")
    assert _native.is_executor_log_name("stderr--2026-11-29--10-00.gz")
    assert not _native.is_executor_log_name("app.jar")
    assert _native.executor_log_limits()["max_files"] == 10_000


def test_collect_reads_each_applications_own_logs(tmp_path: Path) -> None:
    """`sparkprof collect --event-log-dir DIR --logs PATH`: the stored run's report carries the
    logs and the kill cause they name, as `analyze --logs` gives it; an application whose logs are
    not there says so; --logs beside another source is refused, not ignored."""
    import json
    import shutil
    import subprocess
    import sys

    from sparkprof.store import HistoryStore

    runs = recorded_runs()
    if not runs:
        pytest.skip("no recorded logs")
    run = runs[0]
    logs_dir = tmp_path / "eventlogs"
    logs_dir.mkdir()
    shutil.copy(run / "eventlog.zstd", logs_dir / "killed.zstd")
    # Another application of the same folder, whose process logs are not under --logs.
    other = RECORDED / run.parent.name / "executor_oom" / "eventlog.zstd"
    if other.is_file():
        shutil.copy(other, logs_dir / "other.zstd")
    url = f"sqlite:///{tmp_path}/history.sqlite"
    entry = [sys.executable, "-m", "sparkprof.cli"]
    done = subprocess.run(
        [
            *entry,
            "collect",
            "--event-log-dir",
            str(logs_dir),
            "--logs",
            str(run / "logs"),
            "--job-key",
            "killed",
            "--store",
            url,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    store = HistoryStore(url)
    try:
        reports = {}
        for stored in store.runs(job_key="killed"):
            reports[stored.app_id] = json.loads(stored.report_json)
    finally:
        store.close()
    killed_id = sparkprof.analyze(str(run / "eventlog.zstd")).application.application.id
    killed = reports[killed_id]
    assert killed["logs"]["available"] and any(
        hit["signal"] == "kernel-oom-kill" for hit in killed["logs"]["hits"]
    )
    (loss,) = [f for f in killed["findings"] if f["rule"] == "executor-loss"]
    assert "Container memory limit exceeded" in loss["explanation"]
    for app_id, raw in reports.items():
        if app_id == killed_id:
            continue
        # The host's kernel lines name no application (they are listed, unattributed); no line
        # of the killed run's executors is taken for this one, and its causes stay its own.
        assert not [h for h in raw["logs"]["hits"] if h["executor_id"]], raw["logs"]["hits"]
        alone = sparkprof.analyze(str(other)).applications[0].report.raw
        assert [f["explanation"] for f in raw["findings"]] == [
            f["explanation"] for f in alone["findings"]
        ]

    refused = subprocess.run(
        [
            *entry,
            "collect",
            "--history-server",
            "http://127.0.0.1:9",
            "--logs",
            str(run / "logs"),
            "--store",
            url,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert refused.returncode == 2 and "--logs goes with --event-log-dir" in refused.stderr
