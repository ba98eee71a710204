"""The fleet commands of ``sparkprof``: collect, history, compare, regressions, feedback.

Every figure printed comes from the stored engine reports; numbers are formatted by the engine's
own formatters so they read as in the reports.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from sparkprof import pricing
from sparkprof._native import format_epoch_ms, human_bytes, human_duration_ms
from sparkprof.redaction import redact_cluster_shape
from sparkprof.run_record import JobKeyRule
from sparkprof.storage_options import add_storage_option_argument
from sparkprof.store import (
    HistoryStore,
    Run,
    RunNotFoundError,
    StoreBusyError,
    default_store_url,
)
from sparkprof.terminal_text import sanitize_for_terminal, terminal_safe_json, terminal_safe_lines

EXIT_OK = 0
EXIT_USAGE = 1
EXIT_FAILED = 4  # collect: some logs could not be read (they are retried next time)
EXIT_REGRESSIONS = 3  # regressions: at least one found (a CI gate, like analyze --fail-on)


def _store_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        default=None,
        help=f"run history: an SQLAlchemy URL, e.g. postgresql://user@host/db "
        f"(default: $SPARKPROF_STORE, else {default_store_url()})",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def _open_store(args: argparse.Namespace) -> HistoryStore:
    return HistoryStore(args.store)


def _say(text: object = "", *, file: TextIO | None = None) -> None:
    """Prints a line (or lines) of ours with whatever came from an input made safe for a
    terminal (terminal_text.py: the engine's rule). Fields are sanitised where they are put in,
    so a newline in one cannot start a line of its own; this is the last guard."""
    print(terminal_safe_lines(str(text)), file=file or sys.stdout)


def _t(text: object) -> str:
    """A field from an input (app id, job key, stage name, note, price-file string)."""
    return sanitize_for_terminal(text)


def _print_json(data: Any) -> None:
    sys.stdout.write(terminal_safe_json(data, indent=2, default=str))
    sys.stdout.write("\n")


def _table(rows: list[list[str]], header: list[str]) -> str:
    rows = [[_t(cell) for cell in row] for row in rows]
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(str(cell).ljust(widths[i]) for i, cell in enumerate(row)).rstrip()
        for row in [header, *rows]
    ]
    return "\n".join(lines)


# collect


def _size_argument(text: str) -> int:
    from sparkprof.sizing import parse_size

    try:
        return parse_size(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from error


def collect_command(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="sparkprof collect",
        description="Analyse the new or grown event logs of a folder or a History Server into "
        "the run history.",
    )
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--event-log-dir", metavar="URL", help="a local folder or fsspec URL")
    where.add_argument("--history-server", metavar="URL", help="e.g. http://host:18080")
    where.add_argument(
        "--prometheus",
        metavar="URL",
        help="attach each stored run's live metrics (series with its application_id) from this "
        "Prometheus: the runs named by --run, else --job's, else those without metrics yet",
    )
    where.add_argument(
        "--emr",
        nargs="*",
        metavar="CLUSTER_ID",
        help="Amazon EMR clusters (default: all the API lists): their spark.eventLog.dir on S3, "
        "else a running cluster's History Server",
    )
    where.add_argument(
        "--databricks",
        nargs="*",
        metavar="CLUSTER_ID",
        help="Databricks clusters (default: all): their cluster log delivery's eventlog folder",
    )
    where.add_argument(
        "--dataproc",
        nargs="*",
        metavar="CLUSTER",
        help="Dataproc clusters of --project in --region (default: all): their event-log folder "
        "in the temp bucket",
    )
    _store_argument(parser)
    parser.add_argument("--job-key", help="the job key of every run collected now")
    parser.add_argument(
        "--job-key-property",
        action="append",
        default=[],
        metavar="NAME",
        help="a Spark property naming the job (before spark.sparkprof.jobKey, "
        "spark.openlineage.parentJobName and the application name)",
    )
    parser.add_argument(
        "--profile",
        metavar="DIR",
        help="--event-log-dir: the Spark plugin's output directory (spark.sparkprof.outputDir), "
        "each application's agent profile under its id, as analyze --profile: the runs keep the "
        "agent's memory peaks (the memory advice record) and task time by stack",
    )
    parser.add_argument(
        "--logs",
        metavar="PATH_OR_URL",
        help="--event-log-dir: the executors' and the driver's own logs (a standalone work "
        "directory, yarn logs output, pod logs, Databricks log delivery; a folder or an fsspec "
        "URL), as analyze --logs: each application reads its own, and the kill causes name what "
        "they say",
    )
    parser.add_argument("--workers", type=int, default=1, help="applications analysed at once")
    parser.add_argument("--limit", type=int, help="at most this many new logs now; the rest later")
    parser.add_argument("--page-size", type=int, default=100, help="History Server list page")
    parser.add_argument(
        "--include-running", action="store_true", help="History Server: also running applications"
    )
    parser.add_argument(
        "--retries", type=int, default=5, help="History Server: retries per request"
    )
    parser.add_argument(
        "--max-download-bytes",
        type=_size_argument,
        default=None,
        metavar="SIZE",
        help="History Server: the most collect reads of one attempt's logs zip "
        "(default 4GiB; docs/limits.md); a larger one is recorded as failed, naming its URL",
    )
    add_storage_option_argument(
        parser, help="fsspec storage option (VALUE as JSON when it parses), e.g. anon=true"
    )
    cloud = parser.add_argument_group("cloud platforms")
    cloud.add_argument("--region", help="EMR / Dataproc region (EMR default: boto3's)")
    cloud.add_argument("--project", help="Dataproc: the Google Cloud project")
    cloud.add_argument("--endpoint-url", help="EMR: another API endpoint (a VPC endpoint)")
    cloud.add_argument(
        "--emr-history-port", type=int, default=18080, help="EMR: the History Server's port"
    )
    cloud.add_argument("--databricks-profile", help="Databricks: a ~/.databrickscfg profile")
    live = parser.add_argument_group("--prometheus")
    live.add_argument("--run", action="append", default=[], help="a run id or application id")
    live.add_argument("--job", help="every run of this job key")
    live.add_argument(
        "--step", type=float, default=15.0, help="seconds between samples, at least (default 15)"
    )
    args = parser.parse_args(argv)
    for given, flag in ((args.profile, "--profile"), (args.logs, "--logs")):
        if given is not None and not args.event_log_dir:
            # Said, not ignored: the other sources read no profile or process logs yet.
            parser.error(f"{flag} goes with --event-log-dir (the other sources do not read it)")
    if args.prometheus:
        return _collect_prometheus(args)
    if args.emr is not None or args.databricks is not None or args.dataproc is not None:
        return _collect_cloud(parser, args)
    from sparkprof.collect import (
        EventLogDirCollector,
        HistoryServerClient,
        HistoryServerCollector,
    )

    store = _open_store(args)
    job_keys = JobKeyRule(args.job_key, tuple(args.job_key_property))
    if args.event_log_dir:
        summary = EventLogDirCollector(
            store,
            args.event_log_dir,
            job_keys=job_keys,
            workers=args.workers,
            limit=args.limit,
            storage_options=dict(args.option),
            profile=args.profile,
            logs=args.logs,
        ).collect()
    else:
        import requests

        from sparkprof.collect.history_server import DEFAULT_MAX_DOWNLOAD_BYTES

        client = HistoryServerClient(
            args.history_server,
            retries=args.retries,
            max_download_bytes=args.max_download_bytes or DEFAULT_MAX_DOWNLOAD_BYTES,
        )
        try:
            summary = HistoryServerCollector(
                store,
                client,
                job_keys=job_keys,
                include_running=args.include_running,
                page_size=args.page_size,
                limit=args.limit,
            ).collect()
        except (OSError, requests.RequestException) as error:  # listing the applications
            _say(f"sparkprof: {args.history_server}: {_t(error)}", file=sys.stderr)
            return EXIT_FAILED
    if args.json:
        _print_json(vars(summary))
    else:
        _say(summary.line())
        for location, why in summary.failed:
            _say(f"  failed: {_t(location)}: {_t(why)}", file=sys.stderr)
    return EXIT_FAILED if summary.failed else EXIT_OK


def _collect_cloud(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from sparkprof.collect.cloud import Resolution, collect_locations

    options = dict(args.option)
    resolution: Resolution
    try:
        if args.emr is not None:
            from sparkprof.collect.emr import EmrResolver

            emr = EmrResolver.connect(args.region, args.endpoint_url, args.emr_history_port)
            resolution = emr.resolve(args.emr or None)
        elif args.databricks is not None:
            from sparkprof.collect.databricks import DatabricksResolver

            databricks = DatabricksResolver.connect(args.databricks_profile)
            resolution = databricks.resolve(args.databricks or None)
            options = {**databricks.storage_options(), **options}
        else:
            if not args.project or not args.region:
                parser.error("--dataproc needs --project and --region")
            from sparkprof.collect.dataproc import DataprocResolver

            dataproc = DataprocResolver.connect(args.project, args.region)
            resolution = dataproc.resolve(args.dataproc or None)
    except ImportError as error:
        _say(
            f"sparkprof: install the platform's extra, e.g. pip install 'sparkprof[emr]' ({error})",
            file=sys.stderr,
        )
        return EXIT_USAGE
    except Exception as error:  # the control plane refused or could not be reached
        _say(f"sparkprof: {type(error).__name__}: {_t(error)}", file=sys.stderr)
        return EXIT_FAILED
    for location in resolution.locations:
        _say(
            f"{location.platform} {_t(location.cluster)}: {location.kind} {_t(location.url)} "
            f"({_t(location.reason)})",
            file=sys.stderr,
        )
    for cluster in resolution.unreachable:
        _say(
            f"{cluster.platform} {_t(cluster.cluster)}: no readable event logs: "
            f"{_t(cluster.reason)}",
            file=sys.stderr,
        )
    summary = collect_locations(
        _open_store(args),
        resolution,
        job_keys=JobKeyRule(args.job_key, tuple(args.job_key_property)),
        workers=args.workers,
        limit=args.limit,
        storage_options=options,
        retries=args.retries,
    )
    if args.json:
        _print_json(
            {
                **vars(summary),
                "locations": [vars(location) for location in resolution.locations],
                "unreachable": [vars(cluster) for cluster in resolution.unreachable],
            }
        )
    else:
        _say(summary.line())
        for place, why in summary.failed:
            _say(f"  failed: {_t(place)}: {_t(why)}", file=sys.stderr)
    nothing = not resolution.locations and bool(resolution.unreachable)
    return EXIT_FAILED if summary.failed or nothing else EXIT_OK


def _collect_prometheus(args: argparse.Namespace) -> int:
    from sparkprof.collect.prometheus import PrometheusClient, PrometheusError, run_metrics

    store = _open_store(args)
    try:
        if args.run:
            runs = [store.run(reference) for reference in args.run]
        elif args.job:
            runs = store.runs(args.job, limit=args.limit)
        else:
            runs = store.runs_without_metrics(args.limit or 100)
    except RunNotFoundError as error:
        _say(f"sparkprof: {_t(error)}", file=sys.stderr)
        return EXIT_USAGE
    client = PrometheusClient(args.prometheus, retries=args.retries)
    answers: list[dict[str, Any]] = []
    failures = 0
    for run in runs:
        try:
            metrics = run_metrics(client, run.app_id, run.start_ms, run.end_ms, args.step)
        except PrometheusError as error:
            failures += 1
            _say(f"sparkprof: run {run.id} ({_t(run.app_id)}): {_t(error)}", file=sys.stderr)
            continue
        store.save_run_metrics(run.id, args.prometheus, metrics.to_json())
        answers.append(
            {
                "run": run.id,
                "app_id": run.app_id,
                "series": len(metrics.series),
                "samples": metrics.samples,
                "series_left_out": metrics.series_left_out,
            }
        )
        if not args.json:
            left_out = (
                f" ({metrics.series_left_out} series left out)" if metrics.series_left_out else ""
            )
            _say(
                f"run {run.id} ({_t(run.app_id)}): {len(metrics.series)} series, "
                f"{metrics.samples} samples every {metrics.step_s:g} s{left_out}"
            )
    if args.json:
        _print_json(answers)
    return EXIT_FAILED if failures else EXIT_OK


# history


def _run_row(run: Run) -> list[str]:
    top = run.findings[0] if run.findings else None
    return [
        str(run.id),
        run.app_id + (f"/{run.attempt_id}" if run.attempt_id else ""),
        format_epoch_ms(run.start_ms),
        human_duration_ms(run.duration_ms),
        str(len(run.findings)),
        f"{top.severity} {top.rule}" if top else "-",
    ]


def _run_json(run: Run) -> dict[str, Any]:
    return {
        "id": run.id,
        "app_id": run.app_id,
        "attempt_id": run.attempt_id,
        "job_key": run.job_key,
        "app_name": run.app_name,
        "start_ms": run.start_ms,
        "duration_ms": run.duration_ms,
        "complete": run.complete,
        "source": run.source,
        "cluster": redact_cluster_shape(json.loads(run.cluster_json)),
        "findings": [
            {
                "rule": f.rule,
                "severity": f.severity,
                "stage_ids": json.loads(f.stage_ids_json),
                "title": f.title,
                "cost_ms": f.cost_ms,
            }
            for f in run.findings
        ],
    }


def history_command(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="sparkprof history",
        description="The jobs in the run history, or the runs of one job over time.",
    )
    parser.add_argument("job", nargs="?", help="a job key (see 'sparkprof history' for them)")
    parser.add_argument("--limit", type=int, default=50, help="the latest N runs")
    _store_argument(parser)
    args = parser.parse_args(argv)
    store = _open_store(args)
    if args.job is None:
        jobs = store.jobs()
        if args.json:
            _print_json([{"job_key": k, "runs": n, "latest_start_ms": t} for k, n, t in jobs])
        else:
            _say(
                _table(
                    [[k, str(n), format_epoch_ms(t)] for k, n, t in jobs],
                    ["job", "runs", "latest start"],
                )
            )
        return EXIT_OK
    runs = store.runs(args.job, limit=args.limit)
    if not runs:
        _say(f"sparkprof: no runs of job {args.job!r}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        _print_json([_run_json(run) for run in runs])
    else:
        _say(f"job {_t(args.job)}: {len(runs)} runs")
        _say(
            _table(
                [_run_row(run) for run in runs],
                ["run", "application", "start", "duration", "findings", "top finding"],
            )
        )
    return EXIT_OK


# compare


def _change_text(change: Any, human: Callable[[int], str]) -> str:
    if change.before is None:
        return f"- -> {human(int(change.after))}"
    if change.after is None:
        return f"{human(int(change.before))} -> -"
    text = f"{human(int(change.before))} -> {human(int(change.after))}"
    if change.ratio is not None and change.before != change.after:
        text += f" ({(change.ratio - 1) * 100:+.0f}%)"
    return text


def compare_command(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="sparkprof compare",
        description="Per stage (duration, bytes, spill, skew) and per finding (appeared, "
        "resolved) what changed from RUN_A to RUN_B. A run is its id in the history or its "
        "application id.",
    )
    parser.add_argument("run_a")
    parser.add_argument("run_b")
    _store_argument(parser)
    args = parser.parse_args(argv)
    from sparkprof.compare import compare

    store = _open_store(args)
    try:
        run_a, run_b = store.run(args.run_a), store.run(args.run_b)
    except RunNotFoundError as error:
        _say(f"sparkprof: {_t(error)}", file=sys.stderr)
        return EXIT_USAGE
    comparison = compare(run_a, run_b)
    if args.json:
        _print_json(comparison.to_json())
        return EXIT_OK
    _say(
        f"run {run_a.id} ({_t(run_a.app_id)}, {format_epoch_ms(run_a.start_ms)}) -> "
        f"run {run_b.id} ({_t(run_b.app_id)}, {format_epoch_ms(run_b.start_ms)})"
    )
    _say(f"duration: {_change_text(comparison.duration_ms, human_duration_ms)}")
    rows = []
    for stage in comparison.stages:
        skew = stage.skew_max_over_median
        rows.append(
            [
                str(stage.stage_id),
                (stage.name_b or stage.name_a or "")[:40],
                _change_text(stage.duration_ms, human_duration_ms),
                _change_text(stage.input_bytes, human_bytes),
                _change_text(stage.shuffle_read_bytes, human_bytes),
                _change_text(stage.disk_bytes_spilled, human_bytes),
                _change_text(stage.task_max_ms, human_duration_ms),
                "-"
                if skew.before is None and skew.after is None
                else f"{skew.before or 0:.1f}x -> {skew.after or 0:.1f}x",
            ]
        )
    _say(
        _table(
            rows,
            [
                "stage",
                "name",
                "duration",
                "input",
                "shuffle read",
                "disk spill",
                "longest task",
                "skew (max/median)",
            ],
        )
    )
    for title, changes in (
        ("resolved", comparison.resolved),
        ("appeared", comparison.appeared),
        ("still there", comparison.remaining),
    ):
        _say(f"findings {title}: {len(changes)}")
        for change in changes:
            stages = f" stages {list(change.stage_ids)}" if change.stage_ids else ""
            _say(
                f"  {change.severity_b or change.severity_a} {_t(change.rule)}{stages}: "
                f"{_t(change.title)} (cost {_change_text(change.cost_ms, human_duration_ms)})"
            )
    for item in comparison.feedback:
        _say(
            f"feedback on run {item['run']}: {item['verdict']} {_t(item['rule'])} "
            f"{_t(item['note'])}"
        )
    return EXIT_OK


# regressions


def regressions_command(argv: Sequence[str]) -> int:
    from sparkprof.regressions import RegressionRule, describe, find_regressions

    defaults = RegressionRule()
    parser = argparse.ArgumentParser(
        prog="sparkprof regressions",
        description="Stages (and runs) of each job's latest run slower than its recent runs beyond "
        "their noise, with the likely cause. Exit code 3 when there is one.",
    )
    parser.add_argument("--job", help="only this job key")
    parser.add_argument("--window", type=int, default=defaults.window, help="earlier runs compared")
    parser.add_argument("--min-history", type=int, default=defaults.min_history)
    parser.add_argument(
        "--min-slowdown",
        type=float,
        default=defaults.min_slowdown,
        help="fraction slower than the median (0.2 = 20%%)",
    )
    parser.add_argument("--min-extra-ms", type=int, default=defaults.min_extra_ms)
    _store_argument(parser)
    args = parser.parse_args(argv)
    rule = RegressionRule(args.window, args.min_history, args.min_slowdown, args.min_extra_ms)
    found = find_regressions(_open_store(args), args.job, rule)
    if args.json:
        _print_json([{**vars(r), "slowdown": r.slowdown} for r in found])
    else:
        if not found:
            _say("no regressions")
        for regression in found:
            _say(_t(describe(regression)))
            for cause in regression.likely_causes:
                _say(f"  likely cause: {_t(cause)}")
    return EXIT_REGRESSIONS if found else EXIT_OK


# feedback


def _finding_index(run: Run, finding: str) -> int:
    if finding.startswith("#") and finding[1:].isascii() and finding[1:].isdigit():
        index = int(finding[1:]) - 1
        if 0 <= index < len(run.findings):
            return index
        raise LookupError(f"run {run.id} has {len(run.findings)} findings, no {finding}")
    rule, _, stage = finding.partition("@")
    for index, row in enumerate(run.findings):
        if row.rule == rule and (not stage or int(stage) in json.loads(row.stage_ids_json)):
            return index
    raise LookupError(f"run {run.id} has no finding {finding!r}")


def feedback_command(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="sparkprof feedback",
        description="Say whether a finding of a run was right (accept) or wrong (reject); "
        "without a verdict, list the run's findings and the feedback given.",
    )
    parser.add_argument("run", help="run id in the history, or application id")
    parser.add_argument("finding", nargs="?", help="RULE, RULE@STAGE or #N (Nth finding)")
    parser.add_argument("verdict", nargs="?", choices=["accept", "reject"])
    parser.add_argument("--note", default="", help="why (kept with the verdict)")
    _store_argument(parser)
    args = parser.parse_args(argv)
    store = _open_store(args)
    try:
        run = store.run(args.run)
    except RunNotFoundError as error:
        _say(f"sparkprof: {_t(error)}", file=sys.stderr)
        return EXIT_USAGE
    if args.finding is not None:
        if args.verdict is None:
            parser.error("a verdict (accept or reject) must follow the finding")
        try:
            row = run.findings[_finding_index(run, args.finding)]
        except (LookupError, ValueError) as error:
            _say(f"sparkprof: {_t(error)}", file=sys.stderr)
            return EXIT_USAGE
        store.add_feedback(run, row.rule, json.loads(row.stage_ids_json), args.verdict, args.note)
        run = store.run(str(run.id))
    given = [
        {
            "rule": f.rule,
            "stage_ids": json.loads(f.stage_ids_json),
            "verdict": f.verdict,
            "note": f.note,
            "at": f.created_at.isoformat(),
        }
        for f in run.feedback
    ]
    if args.json:
        _print_json({"run": run.id, "feedback": given})
        return EXIT_OK
    for position, row in enumerate(run.findings, start=1):
        verdicts = [
            g
            for g in given
            if g["rule"] == row.rule and g["stage_ids"] == json.loads(row.stage_ids_json)
        ]
        marks = "; ".join(
            f"{g['verdict']}{': ' + _t(g['note']) if g['note'] else ''}" for g in verdicts
        )
        _say(
            f"#{position} {row.severity} {_t(row.rule)}: {_t(row.title)}"
            + (f"  [{marks}]" if marks else "")
        )
    return EXIT_OK


# recommend


def recommend_command(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="sparkprof recommend",
        description="Settings for a job's next run (--job): the engine's recommendations that "
        "keep coming back, and what its faster comparable runs used. Or, with --input-size, "
        "executors and shuffle partitions for an input of that size, from the stored runs that "
        "read the most similar amount, each checked with the what-if simulator on its own log. "
        "Every answer lists its evidence runs and a confidence.",
    )
    parser.add_argument("--job", help="a job key (see 'sparkprof history')")
    parser.add_argument(
        "--input-size", metavar="SIZE", help="the input of the run to size: 10GB, 512MiB, 2t"
    )
    parser.add_argument(
        "--job-type",
        help="with --input-size: only runs of this type (spark.sparkprof.jobType, else etl or "
        "query from what the run read and wrote)",
    )
    parser.add_argument("--window", type=int, default=10, help="recent runs considered (--job)")
    add_storage_option_argument(
        parser, help="fsspec storage option for reading the evidence runs' logs again"
    )
    pricing.add_arguments(parser)
    _store_argument(parser)
    args = parser.parse_args(argv)
    if args.input_size is None:
        if args.job is None:
            parser.error("give --job JOB, or --input-size SIZE (with --job-type or --job)")
        if args.job_type is not None:
            parser.error("--job-type goes with --input-size")
        if pricing.from_arguments(args) != pricing.CostOptions():
            parser.error("the cost options go with --input-size (--job reads the stored reports)")
        return _recommend_for_job(args)
    return _recommend_for_input(parser, args)


def _recommend_for_job(args: argparse.Namespace) -> int:
    from sparkprof.recommend import recommend

    try:
        result = recommend(_open_store(args), args.job, args.window)
    except LookupError as error:
        _say(f"sparkprof: {_t(error)}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        record = {
            name: [{**vars(rate), "judged": rate.judged, "rate": rate.rate} for rate in rates]
            for name, rates in (
                ("job_record", result.job_record),
                ("rule_record", result.rule_record),
            )
        }
        _print_json({**vars(result), "items": [vars(item) for item in result.items], **record})
        return EXIT_OK
    _say(
        f"job {_t(result.job_key)}: latest run {result.latest_run_id}, "
        f"{result.runs_considered} runs considered"
    )
    if not result.items:
        _say("no recommendation")
    for item in result.items:
        now = "unset" if item.current is None else item.current
        runs = ", ".join(map(str, item.evidence_run_ids))
        _say(f"[{item.confidence}] {_t(item.setting)}={_t(item.value)} (now {_t(now)})")
        _say(f"    from {_t(item.source)} (runs {runs}): {_t(item.reason)}")
    from sparkprof.advice_record import describe_rate

    if result.job_record:
        _say("the advisor's record for this job (advice a later run applied), per rule:")
        for rate in result.job_record:
            _say(f"    {_t(describe_rate(rate))}")
    if result.rule_record:
        _say("the same rules over every job in the history:")
        for rate in result.rule_record:
            _say(f"    {_t(describe_rate(rate))}")
    if result.memory_outcomes:
        _say("memory advice and the next run (applied / partly / not applied; died or not; peak):")
    for memory in result.memory_outcomes:
        _say(f"    {_t(memory['summary'])}")
    return EXIT_OK


def _recommend_for_input(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from sparkprof.sizing import parse_size, recommend_for_input

    try:
        size = parse_size(args.input_size)
    except ValueError as error:
        parser.error(str(error))
    try:
        result = recommend_for_input(
            _open_store(args),
            size,
            args.job_type,
            args.job,
            storage_options=dict(args.option),
            cost=pricing.from_arguments(args),
        )
    except LookupError as error:
        _say(f"sparkprof: {_t(error)}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        _print_json(asdict(result))
        return EXIT_OK
    kind = f" {_t(result.job_type)}" if result.job_type else ""
    job = f" of job {_t(result.job_key)}" if result.job_key else ""
    _say(f"a{kind} run{job} reading {human_bytes(size)}: [{result.confidence}] confidence")
    for setting, value in result.settings.items():
        _say(f"  {_t(setting)}={_t(value)}")
    if result.expected_wall_ms is not None:
        _say(f"  expected wall time ~{human_duration_ms(result.expected_wall_ms)}")
    if result.expected_cost is not None:
        _say(f"  expected cost ~{result.expected_cost:.2f} {_t(result.currency)} per run")
    _say("  confidence: " + "; ".join(_t(r) for r in result.confidence_reasons))
    _say("evidence runs:")
    rows = [
        [
            str(e.run_id),
            e.app_id,
            human_bytes(e.input_bytes),
            f"{e.scale:.2f}x",
            human_duration_ms(e.duration_ms),
            f"{e.executors} x {e.cores_per_executor}",
            str(e.efficient_executors) if e.simulated else "-",
            human_duration_ms(e.predicted_wall_ms) if e.simulated else "-",
            f"{100 * e.self_prediction_error:.1f}%" if e.self_prediction_error is not None else "-",
        ]
        for e in result.evidence
    ]
    header = [
        "run",
        "application",
        "input",
        "scale",
        "duration",
        "executors",
        "efficient",
        "predicted",
        "self-error",
    ]
    _say(_table(rows, header))
    for e in result.evidence:
        if e.note:
            _say(f"  run {e.run_id}: {_t(e.note)}")
    if result.backtest is not None:
        _say("back-test (each evidence run sized from the others):")
        backtest_rows = [
            [
                str(b.run_id),
                human_bytes(b.input_bytes),
                f"{b.executors} -> {b.recommended_executors}",
                human_duration_ms(b.duration_ms),
                human_duration_ms(b.expected_wall_ms),
                f"{100 * b.wall_error:.0f}%",
            ]
            for b in result.backtest.runs
        ]
        header = ["run", "input", "executors (had -> sized)", "took", "expected", "error"]
        _say(_table(backtest_rows, header))
    _say("assumptions:")
    for assumption in result.assumptions:
        _say(f"  - {_t(assumption)}")
    return EXIT_OK


# serve


# serve's limit flags: (flag, the serve_guard.ServeLimits field it sets, type, metavar, help).
_SERVE_LIMIT_FLAGS: tuple[tuple[str, str, Callable[[str], Any], str, str], ...] = (
    ("--max-upload-bytes", "max_upload_bytes", _size_argument, "SIZE", "largest /analyze upload"),
    ("--max-body-bytes", "max_body_bytes", _size_argument, "SIZE", "largest other request body"),
    ("--header-timeout", "header_timeout_s", float, "S", "seconds to send the request headers"),
    ("--body-timeout", "body_read_timeout_s", float, "S", "seconds to send each piece of a body"),
    ("--max-connections", "max_connections", int, "N", "connections held at once"),
)


def serve_command(argv: Sequence[str]) -> int:
    from sparkprof.serve_guard import ServeLimits

    defaults = ServeLimits()
    parser = argparse.ArgumentParser(
        prog="sparkprof serve",
        description="A REST API over the run history (OpenAPI at /openapi.json, docs at /docs) "
        "and a page listing jobs and runs at /. Writes need the token (printed at start, or "
        "$SPARKPROF_SERVE_TOKEN, or --token-file); so do reads unless bound to loopback. "
        "Behind a proxy: docs/python.md#serve. Needs ./python[serve].",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default loopback)")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument(
        "--token-file",
        metavar="PATH",
        help="read the token from this file (default: $SPARKPROF_SERVE_TOKEN, else a new random "
        "one, printed with the page's address)",
    )
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests whose Host is NAME (a proxy's public name; '*': any). "
        "Default: the bound address and the loopback names",
    )
    parser.add_argument(
        "--allowed-origin",
        action="append",
        default=[],
        metavar="URL",
        help="also accept writes from pages of this origin (e.g. https://runs.example.com "
        "when a proxy rewrites Host)",
    )
    limits = parser.add_argument_group("limits (docs/limits.md)")
    for flag, name, kind, metavar, text in _SERVE_LIMIT_FLAGS:
        limits.add_argument(
            flag,
            dest=name,
            type=kind,
            default=getattr(defaults, name),
            metavar=metavar,
            help=f"{text} (default %(default)s)",
        )
    _store_argument(parser)
    args = parser.parse_args(argv)
    for flag, name, *_ in _SERVE_LIMIT_FLAGS:
        if getattr(args, name) <= 0:
            parser.error(f"{flag} must be positive")
    try:
        import uvicorn

        from sparkprof.serve_guard import access_for, guarded_http_protocol, new_token
        from sparkprof.server import create_app
    except ImportError as error:
        _say(f"sparkprof: serve needs pip install 'sparkprof[serve]' ({error})", file=sys.stderr)
        return EXIT_USAGE
    token, told = new_token(), ""
    try:
        if args.token_file:
            with open(args.token_file, encoding="utf-8") as file:
                token, told = file.read().strip(), f"the token in {args.token_file}"
        elif os.environ.get("SPARKPROF_SERVE_TOKEN"):
            token, told = os.environ["SPARKPROF_SERVE_TOKEN"].strip(), "$SPARKPROF_SERVE_TOKEN"
    except OSError as error:
        _say(f"sparkprof: --token-file: {_t(error)}", file=sys.stderr)
        return EXIT_USAGE
    if len(token) < 16:
        _say(f"sparkprof: {told} is too short: a token has at least 16 characters", file=sys.stderr)
        return EXIT_USAGE
    serve_limits = ServeLimits(**{name: getattr(args, name) for _, name, *_ in _SERVE_LIMIT_FLAGS})
    access = access_for(args.host, token, args.allowed_host, args.allowed_origin)
    shown_host = f"[{args.host}]" if ":" in args.host else args.host
    address = f"http://{shown_host}:{args.port}/"
    if told:
        _say(
            f"sparkprof serve: {address} (token: {told}; open {address}?token=TOKEN once)",
            file=sys.stderr,
        )
    else:
        _say(f"sparkprof serve: {address}?token={token}", file=sys.stderr)
    sys.stderr.flush()
    uvicorn.run(
        create_app(_open_store(args), access, serve_limits),
        host=args.host,
        port=args.port,
        http=guarded_http_protocol(serve_limits),
        timeout_keep_alive=int(serve_limits.keep_alive_s),
        h11_max_incomplete_event_size=serve_limits.max_header_bytes,
    )
    return EXIT_OK


# reports


def reports_command(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="sparkprof reports",
        description="Analyse every application under SOURCE (a folder or fsspec URL of many logs) "
        "one at a time, writing each one's report into --output-dir as soon as it is done, and "
        "index.jsonl (one line per log). Memory stays bounded by --workers applications.",
    )
    parser.add_argument("source", help="a local folder, file or fsspec URL")
    parser.add_argument("-o", "--output-dir", required=True)
    parser.add_argument(
        "--format",
        action="append",
        choices=["json", "html", "md", "text"],
        help="report formats (repeatable; default json)",
    )
    parser.add_argument(
        "--workers", type=int, help="applications analysed at once (default: every core)"
    )
    add_storage_option_argument(parser, help="fsspec storage option (VALUE as JSON when it parses)")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only the summary")
    args = parser.parse_args(argv)
    from sparkprof.report_files import write_reports

    if args.workers is not None and args.workers < 1:
        parser.error("--workers must be at least 1")
    written = failed = 0
    try:
        for outcome in write_reports(
            args.source,
            args.output_dir,
            args.format or ["json"],
            workers=args.workers,
            **dict(args.option),
        ):
            if outcome.error:
                failed += 1
                _say(f"sparkprof: {_t(outcome.log)}: {_t(outcome.error)}", file=sys.stderr)
                continue
            written += 1
            if not args.quiet:
                _say(f"{_t(outcome.app_id)}: {_t(', '.join(outcome.files))}")
    except OSError as error:
        _say(f"sparkprof: {_t(error)}", file=sys.stderr)
        return EXIT_USAGE
    _say(f"{written} reports written to {args.output_dir}, {failed} logs not analysable")
    return EXIT_OK if written else 2


def _store_errors(command: Callable[[Sequence[str]], int]) -> Callable[[Sequence[str]], int]:
    """A run history that is locked too long or cannot be reached is a message, not a
    traceback (StoreBusyError says what to do)."""

    def run(argv: Sequence[str]) -> int:
        from sqlalchemy.exc import OperationalError

        try:
            return command(argv)
        except StoreBusyError as error:
            _say(f"sparkprof: {_t(error)}", file=sys.stderr)
            return EXIT_FAILED
        except OperationalError as error:
            _say(f"sparkprof: the run history cannot be used: {_t(error.orig)}", file=sys.stderr)
            return EXIT_FAILED

    return run


COMMANDS: dict[str, Callable[[Sequence[str]], int]] = {
    name: _store_errors(command)
    for name, command in {
        "collect": collect_command,
        "history": history_command,
        "compare": compare_command,
        "regressions": regressions_command,
        "feedback": feedback_command,
        "recommend": recommend_command,
        "serve": serve_command,
        "reports": reports_command,
    }.items()
}
