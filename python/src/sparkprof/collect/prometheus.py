"""``collect --prometheus URL``: a stored run's live metrics (what the sparkprof plugin's driver
exported while the application ran, docs/metrics.md) from Prometheus' HTTP API, kept with the run.

For each run: the series carrying the run's ``application_id`` label over its lifetime
(``/api/v1/series``), then one range query per metric name (``/api/v1/query_range``) at a step
that keeps every series under ``MAX_POINTS`` samples (and no finer than the scrape interval asked
for). Bounded: at most ``MAX_SERIES`` series per run; a run with more keeps the first ones and
says how many it left out.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import requests

from sparkprof.collect.history_server import retrying_session

MAX_SERIES = 2000
MAX_POINTS = 1000  # per series; Prometheus refuses more than 11,000
APPLICATION_LABEL = "application_id"


class PrometheusError(RuntimeError):
    """Prometheus answered with an error, or not at all after the retries."""


@dataclass(frozen=True)
class Series:
    labels: dict[str, str]  # __name__ included
    points: list[tuple[float, float]]  # (epoch seconds, value)


@dataclass(frozen=True)
class RunMetrics:
    """What Prometheus held for one run."""

    prometheus: str
    app_id: str
    start_s: float
    end_s: float
    step_s: float
    series: list[Series] = field(default_factory=list)
    series_left_out: int = 0

    @property
    def samples(self) -> int:
        return sum(len(s.points) for s in self.series)

    def to_json(self) -> dict[str, Any]:
        return {
            "prometheus": self.prometheus,
            "app_id": self.app_id,
            "start_s": self.start_s,
            "end_s": self.end_s,
            "step_s": self.step_s,
            "series_left_out": self.series_left_out,
            "series": [{"labels": s.labels, "points": s.points} for s in self.series],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunMetrics:
        return cls(
            prometheus=data["prometheus"],
            app_id=data["app_id"],
            start_s=data["start_s"],
            end_s=data["end_s"],
            step_s=data["step_s"],
            series=[
                Series(s["labels"], [(float(t), float(v)) for t, v in s["points"]])
                for s in data["series"]
            ],
            series_left_out=data.get("series_left_out", 0),
        )


class PrometheusClient:
    """Prometheus' HTTP API, retried with backoff as the History Server's (a restarting server is
    not a missing run)."""

    def __init__(
        self, base_url: str, *, retries: int = 5, backoff_s: float = 0.5, timeout_s: float = 60.0
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.retries = retries
        self.timeout_s = timeout_s
        self.session = retrying_session(retries, backoff_s)

    def get(self, path: str, params: list[tuple[str, str]]) -> Any:
        try:
            answer = self.session.get(self.base_url + path, params=params, timeout=self.timeout_s)
        except requests.RequestException as error:
            raise PrometheusError(
                f"{self.base_url}{path}: no answer after {self.retries} retries: "
                f"{type(error).__name__}: {error}"
            ) from None
        try:
            body = answer.json()
        except ValueError:
            raise PrometheusError(
                f"{path}: HTTP {answer.status_code}, not JSON: {answer.text[:200]!r}"
            ) from None
        if body.get("status") != "success":
            raise PrometheusError(f"{path}: {body.get('errorType')}: {body.get('error')}")
        return body["data"]


def _selector_value(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def run_metrics(
    client: PrometheusClient,
    app_id: str,
    start_ms: int,
    end_ms: int,
    min_step_s: float = 1.0,
    now_s: float | None = None,
) -> RunMetrics:
    """The series of application ``app_id`` between its start and end (or now, if sooner)."""
    start_s = start_ms / 1000
    end_s = min(end_ms / 1000 if end_ms > start_ms else start_s, now_s or time.time())
    end_s = max(end_s, start_s)
    step_s = max(min_step_s, math.ceil((end_s - start_s) / MAX_POINTS) or 1.0)
    match = f'{{{APPLICATION_LABEL}="{_selector_value(app_id)}"}}'
    window = [("start", f"{start_s:.3f}"), ("end", f"{end_s:.3f}")]
    found = client.get("/api/v1/series", [("match[]", match), *window])
    names = sorted({entry["__name__"] for entry in found if "__name__" in entry})
    series: list[Series] = []
    left_out = 0
    for name in names:
        selector = f'{{__name__="{_selector_value(name)}",{match[1:]}'
        data = client.get(
            "/api/v1/query_range", [("query", selector), *window, ("step", f"{step_s:g}")]
        )
        for result in data.get("result", []):
            if len(series) >= MAX_SERIES:
                left_out += 1
                continue
            points = [(float(t), float(v)) for t, v in result.get("values", [])]
            series.append(Series(dict(result["metric"]), points))
    return RunMetrics(client.base_url, app_id, start_s, end_s, step_s, series, left_out)
