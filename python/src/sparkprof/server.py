"""``sparkprof serve``: a small REST API over the run history (FastAPI; OpenAPI at /openapi.json),
and a page listing the jobs and their runs.

Every figure served is a stored engine report figure; /analyze runs the engine on an upload.
Who may read and write, and how much a client may send, is serve_guard.py's.
"""

from __future__ import annotations

import html
import json
from typing import Annotated, Any, Literal

from fastapi import FastAPI, File, HTTPException, Query, Request, Security, UploadFile
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from fastapi.security import APIKeyHeader
from pydantic import BaseModel, Field

from sparkprof._native import format_epoch_ms, human_duration_ms
from sparkprof.advice_record import HitRate, MemoryRecord, describe_rate
from sparkprof.analysis import NothingAnalysableError, analyze
from sparkprof.compare import compare
from sparkprof.redaction import redact_cluster_shape, redact_properties
from sparkprof.regressions import RegressionRule, find_regressions
from sparkprof.serve_guard import (
    TOKEN_GIVEN,
    ServeAccess,
    ServeGuard,
    ServeLimits,
    access_for,
    new_token,
)
from sparkprof.store import Feedback, HistoryStore, Run, RunNotFoundError, StoreBusyError

# Declares the token in the OpenAPI schema (the /docs page's "Authorize"); ServeGuard checks it.
_TOKEN = APIKeyHeader(name="X-Sparkprof-Token", auto_error=False, description="serve's token")


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
    stage_ids: list[int] = Field(default_factory=list, max_length=1000)
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


class HitRateOut(BaseModel):
    key: str = Field(description="the rule, or the job key")
    helped: int
    no_effect: int
    worse: int
    not_comparable: int
    judged: int = Field(description="helped + no_effect + worse")
    rate: float | None = Field(description="helped / judged; null when nothing was judged")
    within_prediction: int
    predicted: int


class AdviceOutcomeOut(BaseModel):
    job_key: str
    advised_run_id: int
    applied_run_id: int
    rule: str
    setting: str
    recommended: str
    previous: str | None
    predicted_low_ms: float
    predicted_high_ms: float
    before_ms: int
    after_ms: int
    input_ratio: float | None
    spill_before_bytes: int
    spill_after_bytes: int
    finding_gone: bool
    died_before: bool
    died_after: bool
    measured_peak_bytes: int | None
    verdict: str
    within_prediction: bool | None
    memory: bool
    applied: str
    applied_value: str | None
    bound: str | None
    peak_before_bytes: int | None
    limit_before_bytes: int | None
    limit_after_bytes: int | None
    memory_losses_before: int
    memory_losses_after: int
    death_before: str | None
    death_after: str | None
    predicted_effect: str | None
    reason: str | None


class AdviceOut(BaseModel):
    by_rule: list[HitRateOut]
    by_job: list[HitRateOut]
    outcomes: list[AdviceOutcomeOut] = Field(description="the latest 100, newest applied first")
    memory: list[MemoryRecord] = Field(
        description="the closed loop on memory advice: per job its latest memory findings and "
        "what the next run did with each, newest applied first"
    )


def _rate_out(rate: HitRate) -> HitRateOut:
    return HitRateOut(**vars(rate), judged=rate.judged, rate=rate.rate)


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


def create_app(
    store: HistoryStore, access: ServeAccess | None = None, limits: ServeLimits | None = None
) -> FastAPI:
    """The API over ``store``. ``access``: who may read and write (default: bound to loopback,
    a new random token, in ``app.state.access.token``); ``limits``: serve_guard.ServeLimits."""
    access = access or access_for("127.0.0.1", new_token())
    limits = limits or ServeLimits()
    app = FastAPI(
        title="sparkprof",
        version="0.1.0",
        description="Spark runs analysed by the sparkprof engine: reports, comparisons, "
        "regressions, feedback. Writes need serve's token (X-Sparkprof-Token or Authorization: "
        "Bearer); so do reads when the server is not bound to loopback.",
    )
    app.state.access = access
    app.state.limits = limits
    app.add_middleware(ServeGuard, access=access, limits=limits, upload_paths={"/analyze"})

    @app.exception_handler(StoreBusyError)
    async def store_busy(_request: Request, error: StoreBusyError) -> JSONResponse:
        return JSONResponse({"detail": str(error)}, status_code=503, headers={"Retry-After": "5"})

    write_responses: dict[int | str, dict[str, Any]] = {
        401: {"description": "no token, or not serve's (X-Sparkprof-Token)"},
        403: {"description": "a cross-origin write"},
        413: {"description": "the body is larger than serve's limit"},
        503: {"description": "the run history is locked by other writers: try again"},
    }
    token_needed = [Security(_TOKEN)]
    not_found: dict[int | str, dict[str, Any]] = {404: {"description": "no such run"}}
    bad_body: dict[int | str, dict[str, Any]] = {400: {"description": "the body cannot be parsed"}}

    def find(reference: str) -> Run:
        try:
            return store.run(reference)
        except RunNotFoundError as error:
            raise HTTPException(status_code=404, detail=str(error)) from error

    @app.get("/jobs", response_model=list[Job])
    def jobs(
        limit: Annotated[int, Query(ge=1, le=1000)] = 1000,
        offset: Annotated[int, Query(ge=0, le=2**62)] = 0,
    ) -> list[Job]:
        return [
            Job(job_key=k, runs=n, latest_start_ms=t)
            for k, n, t in store.jobs(limit=limit, offset=offset)
        ]

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
            # Redacted again when served: runs stored before the history redacted them.
            settings=redact_properties(json.loads(found.settings_json)),
            cluster=redact_cluster_shape(json.loads(found.cluster_json)),
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

    @app.get(
        "/applications/{run}/report.html",
        response_class=HTMLResponse,
        responses={
            200: {
                "description": "the engine's self-contained HTML report, as rendered when the "
                "run was stored"
            },
            404: {"description": "no such run, or a run stored before HTML reports were kept"},
        },
    )
    def report_html(run: str) -> HTMLResponse:
        found = find(run)
        text = store.run_html(found.id)
        if text is None:
            raise HTTPException(
                status_code=404,
                detail=f"run {found.id} was stored without its HTML report: collect it again",
            )
        return HTMLResponse(text)

    @app.get(
        "/applications/{run}/metrics",
        responses={
            200: {
                "content": {"application/json": {"schema": {"type": "object"}}},
                "description": "the run's live metrics from Prometheus (collect --prometheus): "
                "every series of its application id, with (epoch seconds, value) points",
            },
            404: {"description": "no such run, or no metrics were collected for it"},
        },
    )
    def metrics(run: str) -> dict[str, Any]:
        found = find(run)
        kept = store.run_metrics(found.id)
        if kept is None:
            raise HTTPException(
                status_code=404,
                detail=f"no live metrics for run {found.id}: sparkprof collect --prometheus URL",
            )
        return kept

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

    @app.get("/advice", response_model=AdviceOut)
    def advice(job: str | None = None) -> AdviceOut:
        """The advisor's own record (advice_record.py): how often a recommendation a later run
        applied helped, per rule and per job, and the latest outcomes; of one job with ``job``."""
        by_rule, by_job = store.advice_hit_rates_by_rule_and_job(job)
        return AdviceOut(
            by_rule=[_rate_out(r) for r in by_rule],
            by_job=[_rate_out(r) for r in by_job],
            outcomes=[
                AdviceOutcomeOut(**{k: getattr(o, k) for k in AdviceOutcomeOut.model_fields})
                for o in store.advice_outcomes(job)
            ],
            memory=store.memory_advice(None if job is None else [job]),
        )

    @app.get("/metrics", response_class=PlainTextResponse)
    def metrics_exposition() -> Response:
        """Prometheus: the advisor's hit rate per rule and per job (prometheus_client)."""
        return Response(
            advice_exposition(store), media_type="text/plain; version=0.0.4; charset=utf-8"
        )

    @app.post(
        "/feedback",
        response_model=FeedbackOut,
        responses={**not_found, **bad_body, **write_responses},
        dependencies=token_needed,
    )
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
        responses={**bad_body, **write_responses},
        dependencies=token_needed,
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
    def page(request: Request, page: Annotated[int, Query(ge=1, le=2**40)] = 1) -> str:
        # The token goes into the page only for a request that had it (serve_guard.py).
        token = access.token if request.scope.get(TOKEN_GIVEN) else None
        return _page(store, page, token)

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> Response:  # browsers ask for it on every page; there is none
        return Response(status_code=204)

    return app


def advice_exposition(store: HistoryStore) -> bytes:
    """The advisor's record as Prometheus gauges, read from the store at each scrape."""
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.core import GaugeMetricFamily
    from prometheus_client.registry import Collector

    class AdviceCollector(Collector):
        def collect(self) -> Any:
            by_rule, by_job = store.advice_hit_rates_by_rule_and_job()
            ratio = GaugeMetricFamily(
                "sparkprof_advice_hit_ratio",
                "Share of the recommendations a later run of the job applied that helped "
                "(helped / judged; runs with other input not judged), per rule",
                labels=["rule"],
            )
            outcomes = GaugeMetricFamily(
                "sparkprof_advice_outcomes",
                "Recommendations a later run applied, per rule and verdict",
                labels=["rule", "verdict"],
            )
            for rate in by_rule:
                if rate.rate is not None:
                    ratio.add_metric([rate.key], rate.rate)
                for verdict, count in (
                    ("helped", rate.helped),
                    ("no effect", rate.no_effect),
                    ("worse", rate.worse),
                    ("not comparable", rate.not_comparable),
                ):
                    outcomes.add_metric([rate.key, verdict], count)
            job_ratio = GaugeMetricFamily(
                "sparkprof_advice_job_hit_ratio",
                "Share of the applied recommendations that helped, per job",
                labels=["job"],
            )
            for rate in by_job:
                if rate.rate is not None:
                    job_ratio.add_metric([rate.key], rate.rate)
            yield ratio
            yield outcomes
            yield job_ratio

    registry = CollectorRegistry(auto_describe=False)
    registry.register(AdviceCollector())
    exposition: bytes = generate_latest(registry)
    return exposition


TREND_RUNS = 30  # runs per job on the page, latest last
_TREND_WIDTH, _TREND_HEIGHT, _TREND_PAD = 600, 120, 8


def _trend_svg(key: str, runs: list[Run]) -> str:
    """The job's run durations over its runs (oldest left): a line through one point per run,
    each point linking that run's HTML report."""
    longest = max((run.duration_ms for run in runs), default=0) or 1
    step = (_TREND_WIDTH - 2 * _TREND_PAD) / max(len(runs) - 1, 1)
    points = []
    for index, run in enumerate(runs):
        x = _TREND_PAD + index * step
        y = _TREND_PAD + (_TREND_HEIGHT - 2 * _TREND_PAD) * (1 - max(run.duration_ms, 0) / longest)
        points.append((x, y, run))
    line = " ".join(f"{x:.1f},{y:.1f}" for x, y, _ in points)
    dots = "".join(
        f"<a href='/applications/{run.id}/report.html'><circle class='run' cx='{x:.1f}' "
        f"cy='{y:.1f}' r='4' data-run='{run.id}'><title>run {run.id}: "
        f"{html.escape(human_duration_ms(run.duration_ms))}, "
        f"{html.escape(format_epoch_ms(run.start_ms))}</title></circle></a>"
        for x, y, run in points
    )
    return (
        f"<svg class='trend' role='img' width='{_TREND_WIDTH}' height='{_TREND_HEIGHT}' "
        f"aria-label='durations of the runs of {html.escape(key, quote=True)}'>"
        f"<polyline points='{line}'/>{dots}</svg>"
    )


def _change(run: Run, previous: Run | None) -> str:
    if previous is None or previous.duration_ms <= 0:
        return ""
    change = (run.duration_ms - previous.duration_ms) / previous.duration_ms
    return f"{change * 100:+.0f}%"


JOBS_PER_PAGE = 20  # jobs on one page of /, most recently run first
MEMORY_RECORDS_ON_PAGE = 3  # memory findings per job on the page, the newest first


# The page's one write: an upload analysed (and kept) by POST /analyze, with the token this page
# was served with in the header (never a cookie: see serve_guard.py).
_UPLOAD_FORM = """<form id='upload'><label>Analyse an event log or zip
<input type='file' name='log' required></label> <label><input type='checkbox' name='keep'
checked> keep it in the history</label> <button>Analyse</button>
<output id='upload-result'></output></form>
<script>
document.getElementById('upload').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.target;
  const out = document.getElementById('upload-result');
  const token = document.querySelector("meta[name='sparkprof-token']").content;
  const body = new FormData();
  body.append('log', form.log.files[0]);
  out.textContent = 'analysing...';
  const answer = await fetch('/analyze?keep=' + form.keep.checked,
    {method: 'POST', headers: {'X-Sparkprof-Token': token}, body});
  const result = await answer.json();
  if (!answer.ok) {
    out.textContent = 'refused: ' + result.detail;
    return;
  }
  const stored = result.stored_run_ids;
  out.textContent = stored.length ? 'stored run ' + stored.join(', ')
    : (result.problems.join('; ') || 'analysed, not kept');
  if (stored.length) location.reload();
});
</script>"""


def _advice_section(rates: list[HitRate]) -> str:
    """The advisor's record per rule, when any advice was applied."""
    if not rates:
        return ""
    rows = "".join(
        f"<tr data-rule='{html.escape(r.key, quote=True)}'><td>{html.escape(r.key)}</td>"
        f"<td>{r.helped} of {r.judged}</td>"
        f"<td>{'-' if r.rate is None else f'{100 * r.rate:.0f}%'}</td>"
        f"<td>{r.no_effect}</td><td>{r.worse}</td>"
        f"<td>{f'{r.within_prediction} of {r.predicted}' if r.predicted else '-'}</td>"
        f"<td>{r.not_comparable}</td></tr>"
        for r in rates
    )
    return (
        "<section class='advice'><h2>The advisor's record</h2><p>Recommendations a later run of "
        "the same job applied, and what happened (<a href='/advice'>json</a>, "
        "<a href='/metrics'>metrics</a>):</p><table><tr><th>rule</th><th>helped</th>"
        "<th>hit rate</th><th>no effect</th><th>worse</th><th>saving as predicted</th>"
        f"<th>other input (not judged)</th></tr>{rows}</table></section>"
    )


def _memory_advice_list(records: list[MemoryRecord]) -> str:
    """A job's latest memory findings and what its next run did with each (advice_record.py)."""
    if not records:
        return ""
    items = "".join(
        f"<li data-advised='{r.advised_run_id}' data-applied='{r.applied_run_id}' "
        f"data-taken='{html.escape(r.applied, quote=True)}'>{html.escape(r.summary)}</li>"
        for r in records
    )
    return f"<div class='memory-advice'>memory advice and the next run:<ul>{items}</ul></div>"


def _page(store: HistoryStore, page_number: int = 1, token: str | None = None) -> str:
    """A page of the jobs (JOBS_PER_PAGE, most recently run first) with their runs' durations
    over time (a trend line) and a table of the latest runs, each linking its HTML report (and
    its JSON); links to the newer and older pages; the advisor's record. The same few queries
    whatever the history holds (the jobs, their runs, one grouped query of the record).
    ``token``: put in the page (and the upload form shown) for a request that carried it."""
    total = store.job_count()
    pages = max(1, -(-total // JOBS_PER_PAGE))
    page_number = min(page_number, pages)
    first = (page_number - 1) * JOBS_PER_PAGE
    listed = store.jobs(limit=JOBS_PER_PAGE, offset=first)
    runs_by_job = store.latest_runs_by_job([key for key, _, _ in listed], TREND_RUNS)
    # The advisor's record per rule and per job: one grouped query.
    rule_rates, job_rate_list = store.advice_hit_rates_by_rule_and_job()
    job_rates = {rate.key: rate for rate in job_rate_list}
    memory_by_job: dict[str, list[MemoryRecord]] = {}
    for record in store.memory_advice([key for key, _, _ in listed], MEMORY_RECORDS_ON_PAGE):
        memory_by_job.setdefault(record.job_key, []).append(record)
    sections = []
    for key, count, _ in listed:
        runs = runs_by_job.get(key, [])
        rows = []
        for index in range(len(runs) - 1, -1, -1):
            run = runs[index]
            top = run.findings[0] if run.findings else None
            rows.append(
                f"<tr data-run='{run.id}'><td><a class='report' "
                f"href='/applications/{run.id}/report.html'>{html.escape(run.app_id)}</a></td>"
                f"<td>{html.escape(format_epoch_ms(run.start_ms))}</td>"
                f"<td>{html.escape(human_duration_ms(run.duration_ms))}</td>"
                f"<td>{_change(run, runs[index - 1] if index else None)}</td>"
                f"<td>{len(run.findings)}</td>"
                f"<td>{html.escape(f'{top.severity} {top.rule}') if top else '-'}</td>"
                f"<td><a href='/applications/{run.id}/report'>json</a></td></tr>"
            )
        sections.append(
            f"<section class='job'><h2>{html.escape(key)} <small>({count} runs)</small></h2>"
            + (
                f"<p class='advice-record'>advice applied: {html.escape(describe_rate(rate))}</p>"
                if (rate := job_rates.get(key)) is not None
                else ""
            )
            + _memory_advice_list(memory_by_job.get(key, []))
            + f"{_trend_svg(key, runs)}<table><tr><th>run</th><th>start</th><th>duration</th>"
            f"<th>vs previous</th><th>findings</th><th>top finding</th><th></th></tr>"
            f"{''.join(rows)}</table></section>"
        )
    body = "".join(sections) or "<p>No runs yet: sparkprof collect ...</p>"
    body = _advice_section(rule_rates) + body
    nav = ""
    if pages > 1:
        links = []
        if page_number > 1:
            links.append(f"<a rel='prev' href='/?page={page_number - 1}'>newer jobs</a>")
        if page_number < pages:
            links.append(f"<a rel='next' href='/?page={page_number + 1}'>older jobs</a>")
        nav = (
            f"<nav class='pages'>jobs {first + 1}-{first + len(listed)} of {total} "
            f"(page {page_number} of {pages}) {' '.join(links)}</nav>"
        )
    head_token = upload = ""
    if token is not None:
        head_token = f"<meta name='sparkprof-token' content='{html.escape(token, quote=True)}'>"
        upload = _UPLOAD_FORM
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>sparkprof runs</title>"
        f"{head_token}"
        "<style>body{font-family:sans-serif;margin:2em}td,th{padding:2px 8px;text-align:left}"
        ".trend{display:block;margin:4px 0 8px;background:#f7f7f7}"
        ".trend polyline{fill:none;stroke:#4a7;stroke-width:2}.trend .run{fill:#275}"
        "</style></head><body>"
        f"<h1>sparkprof runs</h1>{upload}{nav}{body}{nav}</body></html>"
    )
