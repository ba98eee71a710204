"""``sparkprof serve`` against hostile clients, as a real server (the command, over HTTP on
loopback): forged cross-origin writes, DNS rebinding (a foreign Host), writes without the token,
reads off loopback, the browser's token cookie; bodies past their limits, clients that send
their headers or body too slowly, more connections than it holds."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

import sparkprof
from sparkprof.serve_guard import TOKEN_COOKIE, access_for
from sparkprof.server import create_app
from sparkprof.store import HistoryStore

TOKEN = "serve-test-token-0123456789abcdef"
ENTRY = [sys.executable, "-m", "sparkprof.cli"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


Serve = Callable[..., str]


@pytest.fixture()
def serve(tmp_path: Path) -> Iterator[Serve]:
    """Starts ``sparkprof serve`` with the test's token and extra flags; returns its URL."""
    started: list[subprocess.Popen[bytes]] = []

    def start(*flags: str) -> str:
        port = _free_port()
        store = f"sqlite:///{tmp_path}/history.sqlite"
        process = subprocess.Popen(
            [*ENTRY, "serve", "--port", str(port), "--store", store, *flags],
            env={**os.environ, "SPARKPROF_SERVE_TOKEN": TOKEN},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        started.append(process)
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, process.communicate()[1].decode()
            try:
                httpx.get(f"http://127.0.0.1:{port}/favicon.ico", timeout=1)
                return f"http://127.0.0.1:{port}"
            except httpx.TransportError:
                assert time.monotonic() < deadline, "serve did not start"
                time.sleep(0.1)

    yield start
    for process in started:
        process.terminate()
        process.wait(timeout=30)


def _upload(path: Path) -> dict[str, tuple[str, bytes]]:
    return {"log": (path.name, path.read_bytes())}


def _stored_runs(url: str) -> list[dict[str, object]]:
    answer = httpx.get(f"{url}/applications")
    assert answer.status_code == 200
    runs: list[dict[str, object]] = answer.json()
    return runs


def test_forged_writes_are_refused(serve: Serve, demo_logs: dict[str, Path]) -> None:
    url = serve()
    authorised = {"X-Sparkprof-Token": TOKEN}
    kept = httpx.post(
        f"{url}/analyze?keep=true", files=_upload(demo_logs["plain"]), headers=authorised
    )
    assert kept.status_code == 200, kept.text
    (run_id,) = kept.json()["stored_run_ids"]
    before = _stored_runs(url)
    attacks = {
        # A cross-origin page's form post (what the Chromium page did): no token.
        "form from another origin": {"Origin": "http://evil.example"},
        # The same with the token (leaked or guessed): still another origin.
        "another origin with the token": {"Origin": "http://evil.example", **authorised},
        "origin null (sandboxed frame)": {"Origin": "null", **authorised},
        # No Origin (not a browser) and no token.
        "no token": {},
        "a wrong token": {"X-Sparkprof-Token": "not-the-token"},
        # The cookie a browser holds is for reads: a forged write carrying it is refused.
        "the cookie": {"Cookie": f"{TOKEN_COOKIE}={TOKEN}"},
        # DNS rebinding: the attacker's name resolved to 127.0.0.1.
        "a foreign Host": {"Host": "evil.example:8080", **authorised},
    }
    for attack, headers in attacks.items():
        answer = httpx.post(
            f"{url}/analyze?keep=true", files=_upload(demo_logs["lz4"]), headers=headers
        )
        assert answer.status_code in (400, 401, 403), (attack, answer.status_code)
        assert "detail" in answer.json(), attack
        feedback = httpx.post(
            f"{url}/feedback",
            json={"run": str(run_id), "rule": "x", "verdict": "reject"},
            headers=headers,
        )
        assert feedback.status_code in (400, 401, 403), (attack, feedback.status_code)
    assert _stored_runs(url) == before
    assert httpx.get(f"{url}/applications/{run_id}/feedback").json() == []
    # A same-origin write with the token (the page's own) and a Bearer token are accepted.
    same_origin = httpx.post(
        f"{url}/feedback",
        json={"run": str(run_id), "rule": "x", "verdict": "reject"},
        headers={"Origin": url, **authorised},
    )
    assert same_origin.status_code == 200, same_origin.text
    bearer = httpx.post(
        f"{url}/feedback",
        json={"run": str(run_id), "rule": "y", "verdict": "accept"},
        headers={"Authorization": f"Bearer {TOKEN}"},
    )
    assert bearer.status_code == 200


def test_dns_rebinding_reads_nothing(serve: Serve) -> None:
    url = serve()
    for path in ("/", "/applications", "/jobs", "/openapi.json"):
        rebound = httpx.get(url + path, headers={"Host": "attacker.example"})
        assert rebound.status_code == 400, path
        assert "not a name of this server" in rebound.json()["detail"]
    for host in ("127.0.0.1", "localhost", f"localhost:{url.rsplit(':', 1)[1]}"):
        assert httpx.get(url + "/jobs", headers={"Host": host}).status_code == 200
    allowed = serve("--allowed-host", "runs.example.com")
    assert httpx.get(allowed + "/jobs", headers={"Host": "runs.example.com"}).status_code == 200


def test_the_browser_gets_the_token_once_and_the_page_uses_it(serve: Serve) -> None:
    url = serve()
    anonymous = httpx.get(url + "/").text
    assert TOKEN not in anonymous and "id='upload'" not in anonymous
    opened = httpx.get(f"{url}/?token={TOKEN}")
    assert opened.status_code == 303 and opened.headers["location"] == "/"
    cookie = opened.headers["set-cookie"]
    assert cookie.startswith(f"{TOKEN_COOKIE}={TOKEN};")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    page = httpx.get(url + "/", headers={"Cookie": f"{TOKEN_COOKIE}={TOKEN}"}).text
    assert f"<meta name='sparkprof-token' content='{TOKEN}'>" in page
    assert "id='upload'" in page and "'X-Sparkprof-Token': token" in page
    assert httpx.get(f"{url}/?token=wrong").status_code == 200  # not a way in; just the page


def test_reads_need_the_token_off_loopback(demo_logs: dict[str, Path], tmp_path: Path) -> None:
    store = HistoryStore(f"sqlite:///{tmp_path}/history.sqlite")
    store.save_run(next(sparkprof.iter_applications(demo_logs["plain"])), "test")
    app = create_app(store, access_for("10.1.2.3", TOKEN))
    client = TestClient(app, base_url="http://10.1.2.3:8080")
    for path in ("/", "/jobs", "/applications", "/applications/1", "/openapi.json"):
        refused = client.get(path)
        assert refused.status_code == 401, path
        assert refused.headers["www-authenticate"] == "Bearer"
        assert "?token=TOKEN" in refused.json()["detail"]
        assert client.get(path, headers={"X-Sparkprof-Token": TOKEN}).status_code == 200
        cookie = {"Cookie": f"{TOKEN_COOKIE}={TOKEN}"}
        assert client.get(path, headers=cookie).status_code == 200
    wrong = {"Cookie": f"{TOKEN_COOKIE}=wrong"}
    assert client.get("/jobs", headers=wrong).status_code == 401
    store.close()


def test_bodies_past_their_limits(serve: Serve, demo_logs: dict[str, Path]) -> None:
    url = serve("--max-upload-bytes", "1MiB")
    authorised = {"X-Sparkprof-Token": TOKEN}
    big = b"0" * (2 << 20)
    declared = httpx.post(f"{url}/analyze", files={"log": ("big", big)}, headers=authorised)
    assert declared.status_code == 413
    assert "more than 1048576 bytes is refused (serve --max-upload-bytes)" in declared.text

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        boundary = b'--b\r\nContent-Disposition: form-data; name="log"; filename="x"\r\n\r\n'
        yield boundary
        for _ in range(128):
            yield b"0" * (16 << 10)

    streamed = httpx.post(
        f"{url}/analyze",
        content=chunks(),
        headers={"Content-Type": "multipart/form-data; boundary=b", **authorised},
    )
    assert streamed.status_code == 413, streamed.text
    # Under the limit it is analysed.
    assert demo_logs["zstd"].stat().st_size < 1 << 20
    fits = httpx.post(f"{url}/analyze", files=_upload(demo_logs["zstd"]), headers=authorised)
    assert fits.status_code == 200 and fits.json()["reports"]
    # Every other body: 1 MiB; and a feedback row cannot grow past its fields' bounds.
    huge_note = {"run": "1", "rule": "x", "verdict": "reject", "note": "n" * (2 << 20)}
    assert httpx.post(f"{url}/feedback", json=huge_note, headers=authorised).status_code == 413
    many = {"run": "1", "rule": "x", "verdict": "reject", "stage_ids": list(range(5000))}
    assert httpx.post(f"{url}/feedback", json=many, headers=authorised).status_code == 422


def _closed_within(sock: socket.socket, seconds: float) -> bytes | None:
    """What the server sent before closing, or None if it kept the connection open."""
    sock.settimeout(seconds)
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except TimeoutError:
        return None
    return received


def test_slow_clients_are_cut_off(serve: Serve) -> None:
    url = serve("--header-timeout", "1", "--body-timeout", "1")
    host, port = "127.0.0.1", int(url.rsplit(":", 1)[1])
    # Headers that never end (slowloris): closed after --header-timeout.
    with socket.create_connection((host, port)) as slow:
        slow.sendall(b"GET /jobs HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        start = time.monotonic()
        assert _closed_within(slow, 10) == b""
        assert time.monotonic() - start < 5
    # A connection that sends nothing at all.
    with socket.create_connection((host, port)) as silent:
        assert _closed_within(silent, 10) == b""
    # A body that stops coming: answered 408 after --body-timeout.
    with socket.create_connection((host, port)) as stalled:
        body = json.dumps({"run": "1", "rule": "x", "verdict": "reject"}).encode()
        stalled.sendall(
            b"POST /feedback HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + f"X-Sparkprof-Token: {TOKEN}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
            + body[:5]
        )
        answer = _closed_within(stalled, 10)
        assert answer is not None and answer.startswith(b"HTTP/1.1 408"), answer
    assert httpx.get(url + "/jobs").status_code == 200


def test_connections_are_bounded(serve: Serve) -> None:
    url = serve("--max-connections", "8", "--header-timeout", "60")
    host, port = "127.0.0.1", int(url.rsplit(":", 1)[1])
    idle = [socket.create_connection((host, port)) for _ in range(40)]
    try:
        time.sleep(0.5)
        # A real client still gets in (the oldest idle connections make room).
        assert httpx.get(url + "/jobs", timeout=10).status_code == 200
        closed = sum(_closed_within(sock, 0.2) == b"" for sock in idle)
        # At most 8 held: every idle connection past them was closed.
        assert closed >= 40 - 8, closed
    finally:
        for sock in idle:
            sock.close()
