"""Concurrent writers of one run history, on SQLite and on a real PostgreSQL server: collects
started together over the same logs (into a store none of them has created yet), and many
threads saving the same application at once. Every writer succeeds and the history holds each
run once."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest
from sqlalchemy import func, select
from synthetic_runs import make_run

import sparkprof
from sparkprof.store import HistoryStore
from sparkprof.store.schema import CollectedLog, Run, RunHtml

ENTRY = [sys.executable, "-m", "sparkprof.cli"]
COLLECTS = 4
SAVERS = 16


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/history.sqlite"
    return str(request.getfixturevalue("postgresql_url"))


def _counts(url: str) -> tuple[int, int, int, int]:
    store = HistoryStore(url)
    try:
        with store.session() as session:
            runs = session.scalar(select(func.count(Run.id)))
            apps = session.scalar(select(func.count(func.distinct(Run.app_id))))
            logs = session.scalar(select(func.count(CollectedLog.id)))
            html = session.scalar(select(func.count(RunHtml.run_id)))
        return int(runs or 0), int(apps or 0), int(logs or 0), int(html or 0)
    finally:
        store.close()


def test_collects_started_together(
    store_url: str, demo_logs: dict[str, Path], tmp_path: Path
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    for day in range(1, 7):
        make_run(demo_logs["plain"], logs, day, stage_factor={0: 1 + day / 100})
    command = [*ENTRY, "collect", "--event-log-dir", str(logs), "--store", store_url]
    collects = [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(COLLECTS)
    ]
    outcomes = [(c.wait(timeout=300), *c.communicate()) for c in collects]
    for code, out, err in outcomes:
        assert code == 0 and "Traceback" not in err, out + err
        assert out.startswith("6 logs:"), out
    assert _counts(store_url) == (6, 6, 6, 6)


def test_the_same_application_saved_by_many_at_once(
    store_url: str, demo_logs: dict[str, Path]
) -> None:
    analysed = next(sparkprof.iter_applications(demo_logs["plain"]))
    store = HistoryStore(store_url)
    start = threading.Barrier(SAVERS)
    ids: list[int] = []
    errors: list[BaseException] = []

    def save() -> None:
        try:
            start.wait()
            ids.append(store.save_run(analysed, "upload").id)
        except BaseException as error:  # every failure is the test's finding
            errors.append(error)

    threads = [threading.Thread(target=save) for _ in range(SAVERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    store.close()
    assert not errors, errors
    assert len(ids) == SAVERS and len(set(ids)) == 1
    assert _counts(store_url)[:2] == (1, 1)


def test_a_write_lock_held_past_the_wait_is_named(
    store_url: str, demo_logs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer holding the store's write lock (SQLite's, PostgreSQL's advisory one) past
    the writer's wait: a StoreBusyError naming the store and the wait, not a traceback; the write
    goes through once the lock is let go."""
    from sqlalchemy import create_engine, text

    from sparkprof.store import history_store

    monkeypatch.setattr(history_store, "WRITER_WAIT_S", 1.0)
    analysed = next(sparkprof.iter_applications(demo_logs["plain"]))
    store = HistoryStore(store_url)
    other = create_engine(history_store._engine_url(store_url))
    try:
        with other.connect() as holder:
            if store_url.startswith("sqlite"):
                holder.exec_driver_sql("BEGIN IMMEDIATE")
            else:
                holder.execute(text(f"SELECT pg_advisory_lock({history_store._WRITE_LOCK})"))
            with pytest.raises(history_store.StoreBusyError) as busy:
                store.save_run(analysed, "upload")
            assert store_url in str(busy.value) and "more than 1 s" in str(busy.value)
            holder.rollback()
            if not store_url.startswith("sqlite"):
                holder.execute(text(f"SELECT pg_advisory_unlock({history_store._WRITE_LOCK})"))
        assert store.save_run(analysed, "upload").id
    finally:
        other.dispose()
        store.close()
    assert _counts(store_url)[:2] == (1, 1)


def test_simultaneous_uploads_of_one_application(
    store_url: str, demo_logs: dict[str, Path], tmp_path: Path
) -> None:
    """16 uploads of the same log at once to a real `sparkprof serve` (the issue: 13 of them
    answered 500): every one is stored, as the same run."""
    import os
    import socket
    import time
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    token = "concurrency-test-token-0123456789"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [*ENTRY, "serve", "--port", str(port), "--store", store_url],
        env={**os.environ, "SPARKPROF_SERVE_TOKEN": token},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, server.communicate()[1].decode()
            try:
                httpx.get(url + "/jobs", timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        body = demo_logs["zstd"].read_bytes()
        start = threading.Barrier(SAVERS)

        def upload(_: int) -> httpx.Response:
            start.wait()
            return httpx.post(
                f"{url}/analyze?keep=true",
                files={"log": ("app.zstd", body)},
                headers={"X-Sparkprof-Token": token},
                timeout=300,
            )

        with ThreadPoolExecutor(SAVERS) as pool:
            answers = list(pool.map(upload, range(SAVERS)))
        assert [a.status_code for a in answers] == [200] * SAVERS, [a.text for a in answers]
        assert len({tuple(a.json()["stored_run_ids"]) for a in answers}) == 1
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert _counts(store_url)[:2] == (1, 1)
