"""``collect --prometheus URL``: a stored run's live metrics from a real Prometheus (Debian's
package) that scraped an exporter with the plugin's metric names while the run was live."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from fastapi.testclient import TestClient
from servers import Prometheus, free_port
from synthetic_runs import make_run

import sparkprof
from sparkprof.collect.prometheus import PrometheusClient, PrometheusError, RunMetrics, run_metrics
from sparkprof.server import create_app
from sparkprof.store import HistoryStore

ENTRY = [sys.executable, "-m", "sparkprof.cli"]
APP = "application_1700000000000_0001"


def _exposition(tick: int) -> str:
    return (
        "# TYPE spark_task_time_seconds_total counter\n"
        f'spark_task_time_seconds_total{{application_id="{APP}",application_name="nightly",'
        f'category="compute"}} {10 * tick}\n'
        f'spark_task_time_seconds_total{{application_id="{APP}",application_name="nightly",'
        f'category="gc"}} {tick}\n'
        "# TYPE spark_executor_count gauge\n"
        f'spark_executor_count{{application_id="{APP}",application_name="nightly"}} 2\n'
        f'spark_executor_count{{application_id="app-other",application_name="other"}} 7\n'
    )


def _samples(prometheus: Prometheus, selector: str) -> int:
    answer = requests.get(
        prometheus.url + "/api/v1/query",
        params={"query": f"count_over_time({selector}[5m])"},
        timeout=10,
    ).json()
    result = answer["data"]["result"]
    return int(float(result[0]["value"][1])) if result else 0


def test_a_runs_series_attached(
    prometheus_server: Prometheus, demo_logs: dict[str, Path], tmp_path: Path
) -> None:
    start_ms = int(time.time() * 1000) - 2000
    for tick in range(1, 100):
        prometheus_server.exporter.text = _exposition(tick)
        time.sleep(1.0)
        if (
            _samples(prometheus_server, f'spark_task_time_seconds_total{{application_id="{APP}"}}')
            >= 8
        ):
            break  # four scrapes of each of the two series
    log = make_run(demo_logs["plain"], tmp_path, 1, start_ms=start_ms)
    store = HistoryStore(f"sqlite:///{tmp_path}/history.sqlite")
    run = store.save_run(next(sparkprof.iter_applications(log)), str(log))
    assert run.app_id == APP and run.start_ms == start_ms

    command = [*ENTRY, "collect", "--prometheus", prometheus_server.url, "--store", store.url]
    done = subprocess.run(
        [*command, "--run", str(run.id), "--step", "1", "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (answer,) = json.loads(done.stdout)
    assert (answer["run"], answer["series"]) == (run.id, 3)
    kept = store.run_metrics(run.id)
    assert kept is not None
    metrics = RunMetrics.from_json(kept)
    assert {s.labels["application_id"] for s in metrics.series} == {APP}  # not app-other's
    by_name = {(s.labels["__name__"], s.labels.get("category", "")): s for s in metrics.series}
    assert set(by_name) == {
        ("spark_task_time_seconds_total", "compute"),
        ("spark_task_time_seconds_total", "gc"),
        ("spark_executor_count", ""),
    }
    compute = by_name[("spark_task_time_seconds_total", "compute")].points
    assert len(compute) >= 3 and metrics.step_s == 1
    assert all(b[1] >= a[1] for a, b in itertools.pairwise(compute))  # a counter
    assert all(start_ms / 1000 <= t <= metrics.end_s for t, _ in compute)
    assert {v for _, v in by_name[("spark_executor_count", "")].points} == {2.0}
    assert answer["samples"] == metrics.samples

    # Served by the REST API; runs without metrics are the default target.
    client = TestClient(create_app(store), base_url="http://127.0.0.1")
    assert client.get(f"/applications/{run.id}/metrics").json() == kept
    assert client.get("/applications/999/metrics").status_code == 404
    assert store.runs_without_metrics(10) == []
    again = subprocess.run([*command], capture_output=True, text=True, check=False)
    assert again.returncode == 0 and again.stdout == ""


def test_a_run_prometheus_knows_nothing_of(prometheus_server: Prometheus) -> None:
    client = PrometheusClient(prometheus_server.url)
    metrics = run_metrics(client, 'app-"quoted"\\', 1_000, 60_000)
    assert metrics.series == [] and metrics.samples == 0


def test_errors_are_clear(prometheus_server: Prometheus, tmp_path: Path) -> None:
    with pytest.raises(PrometheusError, match="bad_data"):
        PrometheusClient(prometheus_server.url).get("/api/v1/query", [("query", "sum(")])
    down = PrometheusClient(f"http://127.0.0.1:{free_port()}", retries=2, backoff_s=0.01)
    with pytest.raises(PrometheusError, match="no answer after 2 retries"):
        run_metrics(down, APP, 0, 1000)
