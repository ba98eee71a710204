"""Collectors against real servers: a folder (local and on an S3 API, moto's server mode), and a
real Spark History Server over real logs. Stored reports are the CLI's reports of the same logs."""

from __future__ import annotations

import http.server
import json
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import fsspec
import pytest
import requests
from servers import HISTORY_SERVER_LOGS, HistoryServer, copy_logs, s3_options

from sparkprof._tree import LocalTree
from sparkprof.collect import EventLogDirCollector, HistoryServerClient, HistoryServerCollector
from sparkprof.store import HistoryStore


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[HistoryStore]:
    opened = HistoryStore(f"sqlite:///{tmp_path}/history.sqlite")
    yield opened
    opened.close()


def _without_file_names(report: dict[str, Any], *, zipped: bool = False) -> dict[str, Any]:
    """The report without where its files were; ``zipped``: nor their stored sizes (a History
    Server zip holds each file deflated again, and ``bytes`` is the size in the archive)."""
    copy = json.loads(json.dumps(report))
    for file in copy["input"]["files"]:
        file.pop("file")
        if zipped:
            file.pop("bytes")
    for bad in copy["input"]["bad_lines"]:
        bad.pop("file")
    return copy


def _count_opens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    opened: list[str] = []
    original = LocalTree.open

    def counting(self: LocalTree, path: str) -> Any:
        opened.append(path)
        return original(self, path)

    monkeypatch.setattr(LocalTree, "open", counting)
    return opened


def test_event_log_dir_reads_only_new_or_grown_logs(
    tmp_path: Path,
    shared_eventlogs: Path,
    store: HistoryStore,
    cli_report: Callable[..., str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    logs = tmp_path / "logs"
    copy_logs(shared_eventlogs, HISTORY_SERVER_LOGS, logs)
    first = EventLogDirCollector(store, str(logs)).collect()
    assert (first.found, len(first.stored), first.unchanged) == (5, 5, 0)
    for run in store.runs():  # the CLI's report of the same log, byte for byte
        assert run.report_json == cli_report(run.source)

    opened = _count_opens(monkeypatch)
    again = EventLogDirCollector(store, str(logs)).collect()
    assert (len(again.stored), again.unchanged) == (0, 5)
    assert opened == [], "an unchanged folder costs a listing, not a read"

    # A log still being written, then finished; and a new log.
    full = (shared_eventlogs / HISTORY_SERVER_LOGS[1]).read_bytes()
    growing = logs / "local-1422981759269.inprogress"
    (logs / "local-1422981759269").unlink()
    growing.write_bytes(full[: len(full) // 2])
    (logs / "extra").mkdir()
    shutil.copyfile(
        shared_eventlogs / "apache+spark/core/src/test/resources/spark-events/local-1426533911241",
        logs / "extra" / "local-1426533911241",
    )
    third = EventLogDirCollector(store, str(logs)).collect()
    assert (len(third.stored), third.unchanged) == (2, 4)
    partial = store.run("local-1422981759269")
    assert not partial.complete
    growing.write_bytes(full)
    fourth = EventLogDirCollector(store, str(logs)).collect()
    assert (fourth.stored, fourth.unchanged) == ([partial.id], 5)
    assert store.run("local-1422981759269").complete
    assert len(store.runs()) == 6


def test_event_log_dir_on_an_s3_api(
    s3_endpoint: str,
    shared_eventlogs: Path,
    tmp_path: Path,
    store: HistoryStore,
    cli_report: Callable[..., str],
) -> None:
    options = s3_options(s3_endpoint)
    boto3.client(
        "s3",
        endpoint_url=s3_endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    ).create_bucket(Bucket="spark-logs")
    s3 = fsspec.filesystem("s3", **options)
    local = tmp_path / "logs"
    copy_logs(shared_eventlogs, HISTORY_SERVER_LOGS, local)
    s3.put(str(local) + "/", "spark-logs/events/", recursive=True)
    url = "s3://spark-logs/events"
    first = EventLogDirCollector(store, url, storage_options=options, workers=2).collect()
    assert (first.found, len(first.stored)) == (5, 5)
    for run in store.runs():
        assert run.source.startswith(url + "/")
        local_path = local / run.source[len(url) + 1 :]
        expected = json.loads(cli_report(local_path))
        assert _without_file_names(json.loads(run.report_json)) == _without_file_names(expected)
    again = EventLogDirCollector(store, url, storage_options=options).collect()
    assert (len(again.stored), again.unchanged) == (0, 5)
    s3.put(
        str(
            shared_eventlogs
            / "apache+spark/core/src/test/resources/spark-events/local-1426533911241"
        ),
        "spark-logs/events/local-1426533911241",
    )
    third = EventLogDirCollector(store, url, storage_options=options).collect()
    assert (len(third.stored), third.unchanged) == (1, 5)


def test_history_server_collects_every_attempt(
    history_server: HistoryServer,
    store: HistoryStore,
    cli_report: Callable[..., str],
) -> None:
    client = HistoryServerClient(history_server.url)
    listed = [app["id"] for app in client.applications(page_size=2)]
    assert sorted(listed) == sorted(history_server.app_ids)
    assert [app["id"] for app in client.applications(page_size=1)] == listed
    summary = HistoryServerCollector(store, client, page_size=2).collect()
    assert (summary.found, len(summary.stored)) == (5, 5)
    for run in store.runs():
        assert run.source == client.logs_url(run.app_id, run.attempt_id or None)
        log = history_server.log_dir / json.loads(run.report_json)["input"]["name"]
        expected = _without_file_names(json.loads(cli_report(log)), zipped=True)
        assert _without_file_names(json.loads(run.report_json), zipped=True) == expected


def test_history_server_collect_resumes(history_server: HistoryServer, store: HistoryStore) -> None:
    client = HistoryServerClient(history_server.url)
    first = HistoryServerCollector(store, client, limit=2).collect()
    assert (len(first.stored), first.deferred) == (2, 3)
    second = HistoryServerCollector(store, client, limit=10).collect()
    assert (len(second.stored), second.unchanged, second.deferred) == (3, 2, 0)
    third = HistoryServerCollector(store, client).collect()
    assert (len(third.stored), third.unchanged) == (0, 5)


class _FlakyProxy(http.server.ThreadingHTTPServer):
    """Forwards to the History Server, but answers the first listing requests with 503 and cuts
    the first download of each application halfway."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.failures_left = 2
        self.cut: set[str] = set()
        self.requests: list[tuple[str, int]] = []
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _ProxyHandler)


class _ProxyHandler(http.server.BaseHTTPRequestHandler):
    server: _FlakyProxy

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        proxy = self.server
        with proxy.lock:
            fail = self.path.startswith("/api/v1/applications?") and proxy.failures_left > 0
            if fail:
                proxy.failures_left -= 1
            cut = self.path.endswith("/logs") and self.path not in proxy.cut
            if cut:
                proxy.cut.add(self.path)
        if fail:
            proxy.requests.append((self.path, 503))
            self.send_error(503)
            return
        upstream = requests.get(proxy.target + self.path, timeout=30)
        body = upstream.content
        proxy.requests.append((self.path, upstream.status_code))
        self.send_response(upstream.status_code)
        self.send_header("Content-Type", upstream.headers.get("Content-Type", "application/json"))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body[: len(body) // 2] if cut else body)
        if cut:
            self.close_connection = True


def test_history_server_retries_with_backoff(
    history_server: HistoryServer, store: HistoryStore
) -> None:
    proxy = _FlakyProxy(history_server.url)
    thread = threading.Thread(target=proxy.serve_forever, daemon=True)
    thread.start()
    try:
        pauses: list[float] = []
        client = HistoryServerClient(
            f"http://127.0.0.1:{proxy.server_address[1]}", backoff_s=0.01, sleep=pauses.append
        )
        summary = HistoryServerCollector(store, client).collect()
    finally:
        proxy.shutdown()
    assert (len(summary.stored), summary.failed) == (5, [])
    assert [status for _, status in proxy.requests].count(503) == 2
    assert len(proxy.cut) == 5 and pauses == [0.01] * 5  # each cut download was fetched again
