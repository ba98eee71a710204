"""``sparkprof analyze URL``: the native ``analyze`` command for sources only Python can open
(any fsspec URL). Same options, output and exit codes as the native command; the report is the
engine's (rendered by it), read through ``sparkprof.analyze``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from sparkprof import pricing
from sparkprof.analysis import NothingAnalysableError, analyze
from sparkprof.storage_options import add_storage_option_argument

# The native CLI's exit codes (cli/commands.h, README.md).
EXIT_OK = 0
EXIT_USAGE = 1
EXIT_NOTHING_ANALYSABLE = 2
EXIT_FINDINGS_AT_THRESHOLD = 3
MAX_PROBLEMS_PRINTED = 20


def analyze_url_command(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="sparkprof analyze",
        description="Read Spark event logs at an fsspec URL (s3://, gs://, abfs://, hdfs://, "
        "http(s)://) and report what is slow and why",
    )
    parser.add_argument("path", help="event log file, directory or zip (a URL)")
    parser.add_argument("--format", default="text", choices=["text", "md", "json", "html"])
    parser.add_argument("-o", "--output", help="write the report here instead of stdout")
    parser.add_argument("--fail-on", choices=["warning", "critical"])
    parser.add_argument("-q", "--quiet", action="store_true")
    parser.add_argument(
        "--logs",
        help="the executors' and the driver's own logs: a directory, a file or a URL "
        "(as the native command's --logs; a URL's log files are copied first)",
    )
    add_storage_option_argument(parser, help="fsspec storage option (Python only)")
    pricing.add_arguments(parser)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit:
        return EXIT_OK if exit.code == 0 else EXIT_USAGE
    try:
        report = analyze(
            args.path,
            on_read_error="report",
            cost=pricing.from_arguments(args),
            logs=args.logs,
            **dict(args.option),
        )
    except FileNotFoundError:
        print(f"sparkprof: no such file or directory: {args.path}", file=sys.stderr)
        return EXIT_NOTHING_ANALYSABLE
    except NothingAnalysableError as error:
        for warning in error.warnings:
            print(f"sparkprof: {warning.path}: {warning.message}", file=sys.stderr)
        for name in error.skipped:
            print(
                f"sparkprof: {name}: no Spark events could be read; not analysed", file=sys.stderr
            )
        if not error.skipped:
            print(f"sparkprof: no event logs found under {args.path}", file=sys.stderr)
        return EXIT_NOTHING_ANALYSABLE
    for warning in report.warnings:
        print(f"sparkprof: {warning.path}: {warning.message}", file=sys.stderr)
    if not args.quiet:
        for application in report.applications:
            per_line = 0
            for problem in application.problems:
                per_line += problem.per_line
                if not problem.per_line or per_line <= MAX_PROBLEMS_PRINTED:
                    print(f"sparkprof: {problem.message}", file=sys.stderr)
    for name in report.skipped:
        print(f"sparkprof: {name}: no Spark events could be read; not analysed", file=sys.stderr)
    text = report.render(args.format)
    if args.output and args.output != "-":
        try:
            with open(args.output, "w", encoding="utf-8", newline="") as file:
                file.write(text)
        except OSError:
            print(f"sparkprof: cannot write {args.output}", file=sys.stderr)
            return EXIT_USAGE
    else:
        sys.stdout.flush()
        sys.stdout.buffer.write(text.encode("utf-8"))
        sys.stdout.buffer.flush()
    if args.fail_on and report.any_finding_at_or_above(args.fail_on):
        return EXIT_FINDINGS_AT_THRESHOLD
    return EXIT_OK
