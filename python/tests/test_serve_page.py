"""``sparkprof serve``'s page: runs and trends per job, each run linking its HTML report; checked
over HTTP here and in Debian's headless Chromium (tests/browser/serve_page.test.js) against a
real uvicorn server on loopback."""

from __future__ import annotations

import contextlib
import gzip
import http.server
import json
import re
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi.testclient import TestClient
from sqlalchemy import delete, event
from synthetic_runs import fill_history, make_run

import sparkprof
from sparkprof.serve_guard import access_for
from sparkprof.server import JOBS_PER_PAGE, TREND_RUNS, create_app
from sparkprof.store import HistoryStore
from sparkprof.store.schema import Run, RunHtml

REPO = Path(__file__).resolve().parents[2]
BROWSER_TEST = REPO / "tests/browser/serve_page.test.js"
HOSTILE_JOB = "<img src=x onerror=alert(1)>nightly"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def runs_store(
    demo_logs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[HistoryStore, list[dict[str, Any]]]]:
    """Two jobs: four runs of one (the third slower), two of one with a hostile key."""
    folder = tmp_path_factory.mktemp("serve-page")
    store = HistoryStore(f"sqlite:///{folder}/history.sqlite")
    expected: list[dict[str, Any]] = []
    for job, factors in (("sales", [1.0, 1.02, 2.5, 0.99]), (HOSTILE_JOB, [1.0, 1.1])):
        runs = []
        for factor in factors:
            day = len(expected) * 10 + len(runs) + 1
            path = make_run(
                demo_logs["plain"],
                folder,
                day,
                stage_factor={0: factor, 1: factor},
                duration_factor=factor,
                settings={"spark.sparkprof.jobKey": job},
            )
            run = store.save_run(next(sparkprof.iter_applications(path)), str(path))
            runs.append(run)
        slowest = max(runs, key=lambda r: r.duration_ms)
        expected.append(
            {
                "job": job,
                "runs": [{"id": r.id, "app_id": r.app_id} for r in reversed(runs)],
                "slowest": slowest.id,
            }
        )
    yield store, expected
    store.close()
    shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def _uvicorn(app: Any) -> Iterator[str]:
    """``app`` served by a real uvicorn on loopback, in a thread; yields its URL."""
    port = _free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not running.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        running.should_exit = True
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def server(runs_store: tuple[HistoryStore, list[dict[str, Any]]]) -> Iterator[str]:
    store, _ = runs_store
    with _uvicorn(create_app(store)) as url:
        yield url


def test_each_run_links_its_stored_html_report(
    server: str, runs_store: tuple[HistoryStore, list[dict[str, Any]]]
) -> None:
    store, expected = runs_store
    page = httpx.get(server + "/").text
    assert HOSTILE_JOB not in page and "&lt;img src=x" in page
    for job in expected:
        for run in job["runs"]:
            assert f"href='/applications/{run['id']}/report.html'" in page
            served = httpx.get(f"{server}/applications/{run['id']}/report.html")
            assert served.status_code == 200
            assert served.headers["content-type"].startswith("text/html")
            analysed = next(sparkprof.iter_applications(store.run(str(run["id"])).source))
            assert served.text == analysed.render("html")
    missing = httpx.get(f"{server}/applications/999999/report.html")
    assert missing.status_code == 404


def test_a_run_stored_before_html_reports_says_so(
    server: str, runs_store: tuple[HistoryStore, list[dict[str, Any]]]
) -> None:
    store, expected = runs_store
    run_id = expected[0]["runs"][0]["id"]
    html = store.run_html(run_id)
    with store.session() as session, session.begin():
        session.execute(delete(RunHtml).where(RunHtml.run_id == run_id))
    try:
        served = httpx.get(f"{server}/applications/{run_id}/report.html")
        assert served.status_code == 404 and "collect it again" in served.json()["detail"]
    finally:
        assert html is not None
        with store.session() as session, session.begin():
            session.add(RunHtml(run_id=run_id, html_gzip=gzip.compress(html.encode())))


def test_in_headless_chromium(
    server: str, runs_store: tuple[HistoryStore, list[dict[str, Any]]]
) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (scripts/install-deps.sh --browser)")
    _, expected = runs_store
    done = subprocess.run(
        [node, str(BROWSER_TEST), server, json.dumps(expected)],
        capture_output=True,
        text=True,
        timeout=170,
        check=False,
    )
    if done.returncode == 77:
        pytest.skip(done.stdout.strip())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FAIL" not in done.stdout


def test_the_page_is_paged_and_its_queries_bounded(
    demo_logs: dict[str, Path], tmp_path: Path
) -> None:
    """A long history: 20 jobs a page (most recently run first), at most TREND_RUNS runs each,
    and the same number of SQL statements for / whether the history holds 45 jobs or 445 (the
    page's cost follows the page, not the history; bench/serve_page_bench.py times it)."""
    store = HistoryStore(f"sqlite:///{tmp_path}/history.sqlite")
    template = store.save_run(next(sparkprof.iter_applications(demo_logs["plain"])), "demo")
    with store.session() as session, session.begin():
        session.execute(delete(Run).where(Run.id == template.id))
    fill_history(store, template, jobs=44, runs_per_job=3)
    fill_history(store, template, jobs=1, runs_per_job=TREND_RUNS + 10, first_job=44)
    client = TestClient(create_app(store, access_for("127.0.0.1", "t" * 32)), "http://127.0.0.1")
    statements: list[str] = []
    event.listen(store.engine, "before_cursor_execute", lambda *a: statements.append(a[2]))

    headings: list[str] = []
    for number, (sections, nav) in enumerate(
        [(20, "jobs 1-20 of 45 (page 1 of 3)"), (20, "jobs 21-40"), (5, "jobs 41-45")], start=1
    ):
        statements.clear()
        page = client.get("/", params={"page": number}).text
        listed = re.findall(r"<h2>(job-\d+) <small>\((\d+) runs\)", page)
        assert len(listed) == sections and nav in page
        assert ("rel='prev'" in page) == (number > 1) and ("rel='next'" in page) == (number < 3)
        headings += [key for key, _ in listed]
        per_page = len(statements)
    # Most recently run first: job-00044 (the long one) ran last.
    assert headings == [f"job-{n:05d}" for n in range(44, -1, -1)]
    first = client.get("/").text
    long_job = first.split("<h2>job-00044")[1].split("</section>")[0]
    assert long_job.count("<tr data-run=") == TREND_RUNS and "(40 runs)" in first
    assert client.get("/", params={"page": 99}).text.count("<section class='job'>") == 5
    assert JOBS_PER_PAGE == 20

    fill_history(store, template, jobs=400, runs_per_job=3, first_job=1000)
    statements.clear()
    assert client.get("/", params={"page": 3}).status_code == 200
    # 4, the advisor's record's grouped query and the listed jobs' memory advice (one query).
    assert len(statements) == per_page <= 6
    store.close()


WRITES_TEST = REPO / "tests/browser/serve_writes.test.js"

_HOSTILE_PAGE = """<!doctype html><html><head><meta charset='utf-8'><title>cute cats</title></head>
<body><form id='form' method='POST' action='{base}/analyze?keep=true'
 enctype='multipart/form-data' target='sink'><input name='log' value='x'></form>
<iframe name='sink'></iframe>
<script>
window.attackOutcomes = {{}};
const forged = {forged};
const body = () => {{
  const data = new FormData();
  data.append('log', new Blob([forged]), 'forged.log');
  return data;
}};
(async () => {{
  try {{
    await fetch('{base}/analyze?keep=true',
      {{method: 'POST', mode: 'no-cors', credentials: 'include', body: body()}});
    window.attackOutcomes.noCors = 'sent';
  }} catch (error) {{ window.attackOutcomes.noCors = 'blocked'; }}
  try {{
    await fetch('{base}/analyze?keep=true', {{method: 'POST', credentials: 'include',
      headers: {{'X-Sparkprof-Token': 'guessed'}}, body: body()}});
    window.attackOutcomes.headerFetch = 'answered';
  }} catch (error) {{ window.attackOutcomes.headerFetch = 'blocked'; }}
  try {{
    await fetch('{base}/applications', {{credentials: 'include'}});
    window.attackOutcomes.read = 'readable';
  }} catch (error) {{ window.attackOutcomes.read = 'blocked'; }}
  document.getElementById('form').submit();
  await new Promise((done) => setTimeout(done, 2000));
  window.attacksDone = true;
}})();
</script></body></html>"""


def test_writes_in_headless_chromium(demo_logs: dict[str, Path], tmp_path: Path) -> None:
    """The page's own upload works in a real browser, and a hostile page of another origin in the
    same browser (which holds the token cookie) stores nothing."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (scripts/install-deps.sh --browser)")
    store = HistoryStore(f"sqlite:///{tmp_path}/history.sqlite")
    token = "browser-test-token-0123456789abcdef"
    uploaded = make_run(demo_logs["plain"], tmp_path, 41)
    forged = make_run(demo_logs["plain"], tmp_path, 99).read_text()
    with _uvicorn(create_app(store, access_for("127.0.0.1", token))) as base:
        page = _HOSTILE_PAGE.format(base=base, forged=json.dumps(forged)).encode()

        class Hostile(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

            def log_message(self, *args: object) -> None:
                pass

        other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
        threading.Thread(target=other.serve_forever, daemon=True).start()
        try:
            done = subprocess.run(
                [
                    node,
                    str(WRITES_TEST),
                    base,
                    token,
                    str(uploaded),
                    uploaded.name,
                    f"http://127.0.0.1:{other.server_address[1]}/cats.html",
                ],
                capture_output=True,
                text=True,
                timeout=170,
                check=False,
            )
        finally:
            other.shutdown()
    if done.returncode == 77:
        pytest.skip(done.stdout.strip())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FAIL" not in done.stdout
    assert [run.app_id for run in store.runs()] == [uploaded.name]
    store.close()
