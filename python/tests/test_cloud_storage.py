"""gs:// and abfs:// against real emulators on loopback: fake-gcs-server (GCS's JSON API, through
gcsfs) and Azurite (Azure Blob Storage, through adlfs), both installed by
scripts/install-storage-emulators.sh. ``sparkprof.analyze`` of a URL gives the CLI's report of
the same log, streamed (never a whole copy in memory or a temporary file); ``collect
--event-log-dir`` stores every application and reads nothing the second time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fsspec
import pytest
from servers import (
    HISTORY_SERVER_LOGS,
    azurite_endpoint,
    copy_logs,
    fake_gcs_endpoint,
)
from test_collect import _without_file_names, store

import sparkprof
from sparkprof.collect import EventLogDirCollector
from sparkprof.store import HistoryStore

__all__ = ["azurite_endpoint", "fake_gcs_endpoint", "store"]


def _gcs(endpoint: str) -> tuple[str, dict[str, Any]]:
    return "gs", {"endpoint_url": endpoint, "token": "anon", "project": "sparkprof-test"}


def _abfs(endpoint: str) -> tuple[str, dict[str, Any]]:
    account = "devstoreaccount1"
    # Azurite's well-known development account (documented by Azure; not a secret).
    key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
    connection = (
        f"DefaultEndpointsProtocol=http;AccountName={account};AccountKey={key};"
        f"BlobEndpoint={endpoint}/{account};"
    )
    # adlfs reads in 50 MiB blocks by default (held in memory while read); a smaller block shows
    # the stream is bounded by it, not by the log (test_analyze_streams_a_large_log).
    return "abfs", {"connection_string": connection, "blocksize": 4 << 20}


STORES = {"gs": (_gcs, "fake_gcs_endpoint"), "abfs": (_abfs, "azurite_endpoint")}


@pytest.fixture(params=sorted(STORES))
def bucket(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, dict[str, Any]]:
    """(URL of an empty bucket/container, storage options) on the emulator of the store."""
    options_for, endpoint_fixture = STORES[request.param]
    protocol, options = options_for(request.getfixturevalue(endpoint_fixture))
    fs = fsspec.filesystem(protocol, skip_instance_cache=True, **options)
    name = f"logs-{tmp_path.name.replace('_', '-').lower()[-40:]}".rstrip("-")
    fs.mkdir(name)
    return f"{protocol}://{name}", options


def _upload_logs(
    bucket: tuple[str, dict[str, Any]], shared: Path, names: list[str], local: Path, into: str
) -> tuple[str, dict[str, Any]]:
    """Copies shared logs to ``local`` and uploads them under ``into``; (its URL, options)."""
    url, options = bucket
    copy_logs(shared, names, local)
    fs, root = fsspec.core.url_to_fs(url, **options)
    for path in sorted(local.rglob("*")):
        if path.is_file():
            fs.pipe_file(f"{root}/{into}/{path.relative_to(local).as_posix()}", path.read_bytes())
    return f"{url}/{into}", options


def test_analyze_url_gives_the_cli_report(
    bucket: tuple[str, dict[str, Any]],
    shared_eventlogs: Path,
    tmp_path: Path,
    cli_report: Callable[..., str],
) -> None:
    local = tmp_path / "logs"
    events, options = _upload_logs(bucket, shared_eventlogs, HISTORY_SERVER_LOGS, local, "events")
    for name in sorted(p.name for p in local.iterdir()):
        report = sparkprof.analyze(f"{events}/{name}", **options)
        expected = json.loads(cli_report(local / name))
        assert _without_file_names(json.loads(report.json)) == _without_file_names(expected), name
        files = json.loads(report.json)["input"]["files"]
        assert all(f["file"].startswith(f"{events}/{name}") for f in files)
    # The folder of all five: the CLI's grouping of the same folder.
    assert len(sparkprof.analyze(events, **options).applications) == 5


def test_analyze_streams_a_large_log(
    bucket: tuple[str, dict[str, Any]], demo_logs: dict[str, Path], tmp_path: Path
) -> None:
    """64 MiB of events (the demo log, then many more lines), analysed in a fresh process: the
    peak of Python's own allocations stays well below the log's size (no whole copy; the storage
    client holds a few blocks of 4 MiB) and no file appears in the temporary directory."""
    url, options = bucket
    line = b'{"Event":"SparkListenerLogStart","Spark Version":"3.5.1"}\n'
    big = demo_logs["plain"].read_bytes() + line * (64 * (1 << 20) // len(line))
    fs, root = fsspec.core.url_to_fs(url, **options)
    fs.pipe_file(f"{root}/big/app-big", big)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    fs.pipe_file(f"{root}/small/app-small", demo_logs["plain"].read_bytes())
    # The storage client is imported and warmed up on a small log first: its import's own
    # allocations are not the stream's.
    script = (
        "import json, os, sys, tracemalloc, sparkprof\n"
        "options = json.loads(sys.argv[2])\n"
        "sparkprof.analyze(sys.argv[1].replace('big/app-big', 'small/app-small'), **options)\n"
        "tracemalloc.start()\n"
        "report = sparkprof.analyze(sys.argv[1], **options)\n"
        "print(json.dumps({'peak': tracemalloc.get_traced_memory()[1],\n"
        "  'files': os.listdir(sys.argv[3]), 'lines': report.application.input.lines}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, f"{url}/big/app-big", json.dumps(options), str(temporary)],
        capture_output=True,
        text=True,
        env={**os.environ, "TMPDIR": str(temporary)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["lines"] == big.count(b"\n")
    assert answer["peak"] < len(big) / 3, (answer["peak"], len(big))
    assert answer["files"] == []


def test_collect_event_log_dir(
    bucket: tuple[str, dict[str, Any]],
    shared_eventlogs: Path,
    tmp_path: Path,
    store: HistoryStore,
    cli_report: Callable[..., str],
) -> None:
    local = tmp_path / "logs"
    events, options = _upload_logs(
        bucket, shared_eventlogs, HISTORY_SERVER_LOGS, local, "spark-events"
    )
    first = EventLogDirCollector(store, events, storage_options=options, workers=2).collect()
    assert (first.found, len(first.stored)) == (5, 5)
    for run in store.runs():
        assert run.source.startswith(events + "/")
        expected = json.loads(cli_report(local / run.source[len(events) + 1 :]))
        assert _without_file_names(json.loads(run.report_json)) == _without_file_names(expected)
    again = EventLogDirCollector(store, events, storage_options=options).collect()
    assert (len(again.stored), again.unchanged) == (0, 5)


def test_collect_command_over_the_url(
    bucket: tuple[str, dict[str, Any]], shared_eventlogs: Path, tmp_path: Path
) -> None:
    """`sparkprof collect --event-log-dir URL --option ...`, the command users run."""
    events, options = _upload_logs(
        bucket, shared_eventlogs, HISTORY_SERVER_LOGS[:2], tmp_path / "logs", "events"
    )
    store = f"sqlite:///{tmp_path / 'history.sqlite'}"
    words = [f"--option={key}={json.dumps(value)}" for key, value in options.items()]
    command = [sys.executable, "-m", "sparkprof.cli", "collect", "--event-log-dir"]
    done = subprocess.run(
        [*command, events, *words, "--store", store, "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert len(HistoryStore(store).runs()) == 2
