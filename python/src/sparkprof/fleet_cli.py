"""The fleet commands of ``sparkprof``: collect, history, compare, regressions, feedback.

Every figure printed comes from the stored engine reports; numbers are formatted by the engine's
own formatters so they read as in the reports.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from sparkprof._native import format_epoch_ms, human_bytes, human_duration_ms
from sparkprof.run_record import JobKeyRule
from sparkprof.store import HistoryStore, Run, RunNotFoundError, default_store_url

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


def _print_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, ensure_ascii=False, default=str)
    sys.stdout.write("\n")


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(str(cell).ljust(widths[i]) for i, cell in enumerate(row)).rstrip()
        for row in [header, *rows]
    ]
    return "\n".join(lines)


# collect


def _storage_option(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"--option wants KEY=VALUE, got {text!r}")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def collect_command(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="sparkprof collect",
        description="Analyse the new or grown event logs of a folder or a History Server into "
        "the run history.",
    )
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--event-log-dir", metavar="URL", help="a local folder or fsspec URL")
    where.add_argument("--history-server", metavar="URL", help="e.g. http://host:18080")
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
        "--option",
        action="append",
        default=[],
        type=_storage_option,
        metavar="KEY=VALUE",
        help="fsspec storage option (VALUE as JSON when it parses), e.g. anon=true",
    )
    args = parser.parse_args(argv)
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
        ).collect()
    else:
        client = HistoryServerClient(args.history_server, retries=args.retries)
        summary = HistoryServerCollector(
            store,
            client,
            job_keys=job_keys,
            include_running=args.include_running,
            page_size=args.page_size,
            limit=args.limit,
        ).collect()
    if args.json:
        _print_json(vars(summary))
    else:
        print(summary.line())
        for location, why in summary.failed:
            print(f"  failed: {location}: {why}", file=sys.stderr)
    return EXIT_FAILED if summary.failed else EXIT_OK


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
        "cluster": json.loads(run.cluster_json),
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
            print(
                _table(
                    [[k, str(n), format_epoch_ms(t)] for k, n, t in jobs],
                    ["job", "runs", "latest start"],
                )
            )
        return EXIT_OK
    runs = store.runs(args.job, limit=args.limit)
    if not runs:
        print(f"sparkprof: no runs of job {args.job!r}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        _print_json([_run_json(run) for run in runs])
    else:
        print(f"job {args.job}: {len(runs)} runs")
        print(
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
        print(f"sparkprof: {error}", file=sys.stderr)
        return EXIT_USAGE
    comparison = compare(run_a, run_b)
    if args.json:
        _print_json(comparison.to_json())
        return EXIT_OK
    print(
        f"run {run_a.id} ({run_a.app_id}, {format_epoch_ms(run_a.start_ms)}) -> "
        f"run {run_b.id} ({run_b.app_id}, {format_epoch_ms(run_b.start_ms)})"
    )
    print(f"duration: {_change_text(comparison.duration_ms, human_duration_ms)}")
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
    print(
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
        print(f"findings {title}: {len(changes)}")
        for change in changes:
            stages = f" stages {list(change.stage_ids)}" if change.stage_ids else ""
            print(
                f"  {change.severity_b or change.severity_a} {change.rule}{stages}: "
                f"{change.title} (cost {_change_text(change.cost_ms, human_duration_ms)})"
            )
    for item in comparison.feedback:
        print(f"feedback on run {item['run']}: {item['verdict']} {item['rule']} {item['note']}")
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
            print("no regressions")
        for regression in found:
            print(describe(regression))
            for cause in regression.likely_causes:
                print(f"  likely cause: {cause}")
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
        print(f"sparkprof: {error}", file=sys.stderr)
        return EXIT_USAGE
    if args.finding is not None:
        if args.verdict is None:
            parser.error("a verdict (accept or reject) must follow the finding")
        try:
            row = run.findings[_finding_index(run, args.finding)]
        except (LookupError, ValueError) as error:
            print(f"sparkprof: {error}", file=sys.stderr)
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
            f"{g['verdict']}{': ' + g['note'] if g['note'] else ''}" for g in verdicts
        )
        print(
            f"#{position} {row.severity} {row.rule}: {row.title}"
            + (f"  [{marks}]" if marks else "")
        )
    return EXIT_OK


# recommend


def recommend_command(argv: Sequence[str]) -> int:
    from sparkprof.recommend import recommend

    parser = argparse.ArgumentParser(
        prog="sparkprof recommend",
        description="Settings for a job's next run: the engine's recommendations that keep coming "
        "back, and what its faster comparable runs used; each with its evidence runs and a "
        "confidence.",
    )
    parser.add_argument("--job", required=True, help="a job key (see 'sparkprof history')")
    parser.add_argument("--window", type=int, default=10, help="recent runs considered")
    _store_argument(parser)
    args = parser.parse_args(argv)
    try:
        result = recommend(_open_store(args), args.job, args.window)
    except LookupError as error:
        print(f"sparkprof: {error}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        _print_json({**vars(result), "items": [vars(item) for item in result.items]})
        return EXIT_OK
    print(
        f"job {result.job_key}: latest run {result.latest_run_id}, "
        f"{result.runs_considered} runs considered"
    )
    if not result.items:
        print("no recommendation")
    for item in result.items:
        now = "unset" if item.current is None else item.current
        runs = ", ".join(map(str, item.evidence_run_ids))
        print(f"[{item.confidence}] {item.setting}={item.value} (now {now})")
        print(f"    from {item.source} (runs {runs}): {item.reason}")
    return EXIT_OK


# serve


def serve_command(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="sparkprof serve",
        description="A REST API over the run history (OpenAPI at /openapi.json, docs at /docs) "
        "and a page listing jobs and runs at /. Needs ./python[serve].",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    _store_argument(parser)
    args = parser.parse_args(argv)
    try:
        import uvicorn

        from sparkprof.server import create_app
    except ImportError as error:
        print(f"sparkprof: serve needs pip install 'sparkprof[serve]' ({error})", file=sys.stderr)
        return EXIT_USAGE
    uvicorn.run(create_app(_open_store(args)), host=args.host, port=args.port)
    return EXIT_OK


COMMANDS: dict[str, Callable[[Sequence[str]], int]] = {
    "collect": collect_command,
    "history": history_command,
    "compare": compare_command,
    "regressions": regressions_command,
    "feedback": feedback_command,
    "recommend": recommend_command,
    "serve": serve_command,
}
