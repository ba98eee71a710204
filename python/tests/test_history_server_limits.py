"""A hostile (or broken) History Server: collect reads at most --max-download-bytes of an
attempt's logs and a bounded page of the application list, and says which URL was refused,
never a traceback or a disk filled. The server here is a real HTTP server on loopback that
answers without end."""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from sparkprof.collect.history_server import HistoryServerClient

ENTRY = [sys.executable, "-m", "sparkprof.cli"]
APP = {
    "id": "app-hostile",
    "attempts": [{"endTimeEpoch": 1_700_000_000_000, "lastUpdatedEpoch": 1, "completed": True}],
}


class Hostile:
    """Serves one application whose logs never end (``declare``: with a Content-Length of
    10 GiB, else close-delimited), or a listing that never ends (``endless_listing``)."""

    def __init__(self) -> None:
        self.sent = 0
        self.declare = False
        self.endless_listing = False
        self.listing: object = [APP]
        self.done = threading.Event()
        hostile = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def do_GET(self) -> None:
                hostile.done.clear()
                try:
                    if self.path.startswith("/api/v1/applications?"):
                        if hostile.endless_listing:
                            self._endless(b"[" + b" " * 65536)
                        else:
                            body = json.dumps(hostile.listing).encode()
                            self.send_response(200)
                            self.send_header("Content-Type", "application/json")
                            self.send_header("Content-Length", str(len(body)))
                            self.end_headers()
                            self.wfile.write(body)
                    else:
                        self._endless(b"\0" * 65536)
                finally:
                    hostile.done.set()

            def _endless(self, chunk: bytes) -> None:
                self.send_response(200)
                if hostile.declare:
                    self.send_header("Content-Length", str(10 << 30))
                self.end_headers()
                try:
                    while hostile.sent < 8 << 30:
                        self.wfile.write(chunk)
                        hostile.sent += len(chunk)
                except OSError:  # the client hung up: what this test wants
                    pass

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture()
def hostile() -> Iterator[Hostile]:
    server = Hostile()
    yield server
    server.server.shutdown()
    server.server.server_close()


def _collect(url: str, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    store = f"sqlite:///{tmp_path}/history.sqlite"
    return subprocess.run(
        [*ENTRY, "collect", "--history-server", url, "--store", store, "--retries", "0", *extra],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("declare", [False, True], ids=["streamed", "content-length"])
def test_logs_past_the_limit_are_refused_naming_the_url(
    hostile: Hostile, tmp_path: Path, declare: bool
) -> None:
    hostile.declare = declare
    done = _collect(hostile.url, tmp_path, "--max-download-bytes", "1MiB")
    assert done.returncode == 4, done.stderr
    logs_url = f"{hostile.url}/api/v1/applications/app-hostile/logs"
    assert f"failed: {logs_url}: DownloadLimitError: {logs_url}: sent logs of" in done.stderr
    assert "more than 1 MiB, the limit of what collect reads" in done.stderr
    assert "--max-download-bytes" in done.stderr and "Traceback" not in done.stderr
    assert hostile.done.wait(30), "the server is still sending: the client did not hang up"
    # At most the limit was read; the rest of what was sent sat in the sockets' buffers.
    assert hostile.sent < (1 << 20) + (32 << 20)


def test_a_bad_size_is_a_usage_error(hostile: Hostile, tmp_path: Path) -> None:
    done = _collect(hostile.url, tmp_path, "--max-download-bytes", "lots")
    assert done.returncode == 2 and "not a size: 'lots'" in done.stderr


def test_an_endless_or_wrong_listing_is_named(hostile: Hostile, tmp_path: Path) -> None:
    client = HistoryServerClient(hostile.url, retries=0, max_listing_bytes=1 << 20)
    hostile.endless_listing = True
    with pytest.raises(OSError, match=r"/api/v1/applications: answered more than 1 MiB"):
        list(client.applications())
    assert hostile.done.wait(30)
    hostile.endless_listing = False
    for listing, why in (
        ({"applications": []}, "a JSON dict, not a list"),
        ([{"id": "x"}], "'attempts'"),
        ([{"id": "x", "attempts": [{"endTimeEpoch": "soon"}]}], "invalid literal"),
    ):
        hostile.listing = listing
        with pytest.raises(OSError, match="not the History Server's application list") as caught:
            list(client.applications())
        assert why in str(caught.value)
    done = _collect(hostile.url, tmp_path)
    assert done.returncode == 4 and "Traceback" not in done.stderr
    assert f"sparkprof: {hostile.url}: {hostile.url}/api/v1/applications: not the" in done.stderr
