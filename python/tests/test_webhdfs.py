"""webhdfs:// against a real HDFS on loopback (MiniDFSCluster from Maven Central's
hadoop-minicluster, started by the fixture): ``sparkprof.analyze`` of a URL gives the CLI's report
of the same log, and ``collect --event-log-dir`` stores every application and reads nothing the
second time."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import fsspec
import pytest
from servers import HISTORY_SERVER_LOGS, copy_logs, webhdfs_endpoint
from test_collect import _without_file_names, store

import sparkprof
from sparkprof.collect import EventLogDirCollector
from sparkprof.store import HistoryStore

__all__ = ["store", "webhdfs_endpoint"]

pytestmark = pytest.mark.slow
OPTIONS = {"user": "sparkprof"}


@pytest.fixture()
def events(webhdfs_endpoint: str, shared_eventlogs: Path, tmp_path: Path) -> tuple[str, Path]:
    """(URL of a folder holding five real logs, the local copy)."""
    local = tmp_path / "logs"
    copy_logs(shared_eventlogs, HISTORY_SERVER_LOGS, local)
    host, port = webhdfs_endpoint.split(":")
    fs = fsspec.filesystem("webhdfs", host=host, port=int(port), **OPTIONS)
    folder = f"/{tmp_path.name}"
    for path in sorted(local.rglob("*")):
        if path.is_file():
            fs.pipe_file(f"{folder}/{path.relative_to(local).as_posix()}", path.read_bytes())
    return f"webhdfs://{webhdfs_endpoint}{folder}", local


def test_analyze_url_gives_the_cli_report(
    events: tuple[str, Path], cli_report: Callable[..., str]
) -> None:
    url, local = events
    for name in sorted(p.name for p in local.iterdir()):
        report = sparkprof.analyze(f"{url}/{name}", **OPTIONS)
        expected = json.loads(cli_report(local / name))
        assert _without_file_names(json.loads(report.json)) == _without_file_names(expected), name
    assert len(sparkprof.analyze(url, **OPTIONS).applications) == 5


def test_collect_event_log_dir(
    events: tuple[str, Path], store: HistoryStore, cli_report: Callable[..., str]
) -> None:
    url, local = events
    first = EventLogDirCollector(store, url, storage_options=OPTIONS).collect()
    assert (first.found, len(first.stored)) == (5, 5)
    expected = sorted(
        json.dumps(_without_file_names(json.loads(cli_report(local / p.name))), sort_keys=True)
        for p in local.iterdir()
    )
    stored = sorted(
        json.dumps(_without_file_names(json.loads(run.report_json)), sort_keys=True)
        for run in store.runs()
    )
    assert stored == expected
    again = EventLogDirCollector(store, url, storage_options=OPTIONS).collect()
    assert (len(again.stored), again.unchanged) == (0, 5)
