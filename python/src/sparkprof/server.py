"""``sparkprof serve``: a small REST API over the run history (FastAPI; OpenAPI at /openapi.json),
and a page listing the jobs and their runs.

Every figure served is a stored engine report figure; /analyze runs the engine on an upload.
"""

from __future__ import annotations

import html
import json
from typing import Annotated, Any, Literal

from fastapi import FastAPI, File, HTTPException, Query, UploadFile
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel, Field

from sparkprof._native import format_epoch_ms, human_duration_ms
from sparkprof.analysis import NothingAnalysableError, analyze
from sparkprof.compare import compare
from sparkprof.regressions import RegressionRule, find_regressions
from sparkprof.store import Feedback, HistoryStore, Run, RunNotFoundError


class FindingSummary(BaseModel):
    rule: str
    severity: str
    stage_ids: list[int]
    title: str
    cost_ms: int


class RunSummary(BaseModel):
    id: int
    app_id: str
    attempt_id: str
    job_key: str
    app_name: str
    start_ms: int
    duration_ms: int
    complete: bool
    source: str
    findings: list[FindingSummary]


class RunDetail(RunSummary):
    settings: dict[str, str]
    cluster: dict[str, Any]


class Job(BaseModel):
    job_key: str
    runs: int
    latest_start_ms: int


class FeedbackIn(BaseModel):
    run: str = Field(description="run id in the history, or application id")
    rule: str = Field(min_length=1, max_length=64)
    stage_ids: list[int] = Field(default_factory=list)
    verdict: Literal["accept", "reject"]
    note: str = Field(default="", max_length=4000)


class FeedbackOut(BaseModel):
    run_id: int
    rule: str
    stage_ids: list[int]
    verdict: str
    note: str


class RegressionOut(BaseModel):
    job_key: str
    run_id: int
    app_id: str
    stage_id: int | None
    stage_name: str
    duration_ms: int
    baseline_ms: float
    earlier_run_ids: list[int]
    likely_causes: list[str]


class AnalyzeOut(BaseModel):
    reports: list[dict[str, Any]] = Field(
        description="the engine's report object (sparkprof.report/v1) of each application; "
        "empty when no Spark event could be read (what the CLI exits 2 for)"
    )
    stored_run_ids: list[int]
    problems: list[str]
    skipped: list[str] = Field(description="logs in which no Spark event could be read")


def _findings(run: Run) -> list[FindingSummary]:
    return [
        FindingSummary(
            rule=row.rule,
            severity=row.severity,
            stage_ids=json.loads(row.stage_ids_json),
            title=row.title,
            cost_ms=row.cost_ms,
        )
        for row in run.findings
    ]


def _feedback(row: Feedback) -> FeedbackOut:
    return FeedbackOut(
        run_id=row.run_id,
        rule=row.rule,
        stage_ids=json.loads(row.stage_ids_json),
        verdict=row.verdict,
        note=row.note,
    )


def _summary(run: Run) -> RunSummary:
    return RunSummary(
        id=run.id,
        app_id=run.app_id,
        attempt_id=run.attempt_id,
        job_key=run.job_key,
        app_name=run.app_name,
        start_ms=run.start_ms,
        duration_ms=run.duration_ms,
        complete=run.complete,
        source=run.source,
        findings=_findings(run),
    )


def create_app(store: HistoryStore) -> FastAPI:
    app = FastAPI(
        title="sparkprof",
        version="0.1.0",
        description="Spark runs analysed by the sparkprof engine: reports, comparisons, "
        "regressions, feedback.",
    )
    not_found: dict[int | str, dict[str, Any]] = {404: {"description": "no such run"}}
    bad_body: dict[int | str, dict[str, Any]] = {400: {"description": "the body cannot be parsed"}}

    def find(reference: str) -> Run:
        try:
            return store.run(reference)
        except RunNotFoundError as error:
            raise HTTPException(status_code=404, detail=str(error)) from error

    @app.get("/jobs", response_model=list[Job])
    def jobs() -> list[Job]:
        return [Job(job_key=k, runs=n, latest_start_ms=t) for k, n, t in store.jobs()]

    @app.get("/applications", response_model=list[RunSummary])
    def applications(
        job: str | None = None, limit: Annotated[int, Query(ge=1, le=1000)] = 100
    ) -> list[RunSummary]:
        return [_summary(run) for run in store.runs(job, limit=limit)]

    @app.get("/applications/{run}", response_model=RunDetail, responses=not_found)
    def application(run: str) -> RunDetail:
        found = find(run)
        return RunDetail(
            **_summary(found).model_dump(),
            settings=json.loads(found.settings_json),
            cluster=json.loads(found.cluster_json),
        )

    @app.get(
        "/applications/{run}/report",
        responses={
            200: {
                "content": {"application/json": {"schema": {"type": "object"}}},
                "description": "the engine's report (sparkprof.report/v1), as written",
            },
            **not_found,
        },
    )
    def report(run: str) -> Response:
        return Response(find(run).report_json, media_type="application/json")

    @app.get("/compare", responses=not_found)
    def compare_runs(a: str, b: str) -> dict[str, Any]:
        return compare(find(a), find(b)).to_json()

    @app.get("/regressions", response_model=list[RegressionOut])
    def regressions(
        job: str | None = None,
        window: Annotated[int, Query(ge=1, le=100)] = 5,
        min_history: Annotated[int, Query(ge=1, le=100)] = 3,
    ) -> list[RegressionOut]:
        rule = RegressionRule(window=window, min_history=min_history)
        return [
            RegressionOut(**{k: v for k, v in vars(r).items()})
            for r in find_regressions(store, job, rule)
        ]

    @app.post("/feedback", response_model=FeedbackOut, responses={**not_found, **bad_body})
    def feedback(given: FeedbackIn) -> FeedbackOut:
        run = find(given.run)
        row = store.add_feedback(run, given.rule, given.stage_ids, given.verdict, given.note)
        return _feedback(row)

    @app.get("/applications/{run}/feedback", response_model=list[FeedbackOut], responses=not_found)
    def run_feedback(run: str) -> list[FeedbackOut]:
        return [_feedback(row) for row in find(run).feedback]

    @app.post(
        "/analyze",
        response_model=AnalyzeOut,
        responses=bad_body,
    )
    async def analyze_upload(
        log: Annotated[UploadFile, File(description="an event log: any codec, or a zip")],
        keep: bool = False,
    ) -> AnalyzeOut:
        name = log.filename or "upload"

        def run_engine() -> AnalyzeOut:
            try:
                result = analyze(log.file, name=name)
            except NothingAnalysableError as error:
                return AnalyzeOut(
                    reports=[], stored_run_ids=[], problems=[str(error)], skipped=error.skipped
                )
            stored = []
            if keep:
                stored = [store.save_run(a, f"upload:{name}").id for a in result.applications]
            return AnalyzeOut(
                reports=[a.report.raw for a in result.applications],
                stored_run_ids=stored,
                problems=[p.message for p in result.problems],
                skipped=result.skipped,
            )

        return await run_in_threadpool(run_engine)

    @app.get("/", response_class=HTMLResponse)
    def page() -> str:
        return _page(store)

    return app


def _page(store: HistoryStore) -> str:
    """Jobs and their latest runs (durations over time), each run linking its JSON report."""
    sections = []
    for key, count, _ in store.jobs():
        runs = store.runs(key, limit=20)
        longest = max((run.duration_ms for run in runs), default=1) or 1
        rows = "".join(
            f"<tr><td><a href='/applications/{run.id}/report'>{html.escape(run.app_id)}</a></td>"
            f"<td>{html.escape(format_epoch_ms(run.start_ms))}</td>"
            f"<td>{html.escape(human_duration_ms(run.duration_ms))}</td>"
            f"<td><span class='bar' style='width:{200 * max(run.duration_ms, 0) // longest}px'>"
            f"</span></td><td>{len(run.findings)}</td></tr>"
            for run in reversed(runs)
        )
        sections.append(
            f"<h2>{html.escape(key)} <small>({count} runs)</small></h2><table><tr><th>run</th>"
            f"<th>start</th><th>duration</th><th></th><th>findings</th></tr>{rows}</table>"
        )
    body = "".join(sections) or "<p>No runs yet: sparkprof collect ...</p>"
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>sparkprof runs</title>"
        "<style>body{font-family:sans-serif;margin:2em}td,th{padding:2px 8px;text-align:left}"
        ".bar{display:inline-block;height:10px;background:#4a7}</style></head><body>"
        f"<h1>sparkprof runs</h1>{body}</body></html>"
    )
