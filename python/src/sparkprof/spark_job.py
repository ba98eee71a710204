"""Past one machine: a PySpark job that runs ``sparkprof.analyze`` on a Spark cluster's executors,
one task per group of event-log URLs, and writes one row per analysed application to Parquet.

    spark-submit --conf spark.pyspark.python=/path/to/venv/bin/python \\
        "$(python -c 'import sparkprof.spark_job as j; print(j.__file__)')" \\
        URLS.txt s3://bucket/sparkprof/runs.parquet [--partitions N] [--option KEY=VALUE ...]

``URLS.txt``: one event log per line (a path every executor can read, or any fsspec URL: s3://,
gs://, abfs://, hdfs://); a local path is read by the driver, a ``*.txt`` URL through fsspec.
Every executor needs the sparkprof package in the Python it runs (``spark.pyspark.python``, a
packed venv with ``spark.archives``, or ``pip install`` on the nodes) and the storage clients for
the URLs (s3fs, gcsfs, adlfs).

A row: the URL, the application's identity and duration, its counts and totals, the findings'
rules and the whole engine report (``report_json``, ``sparkprof.report/v1``); a URL that cannot be
read or holds no Spark event gives one row with ``error`` set, so one bad log never fails the job.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from sparkprof.storage_options import add_storage_option_argument

# The Parquet schema, as (column, Spark SQL type).
COLUMNS: list[tuple[str, str]] = [
    ("url", "string"),
    ("error", "string"),
    ("app_id", "string"),
    ("attempt_id", "string"),
    ("app_name", "string"),
    ("spark_version", "string"),
    ("start_ms", "bigint"),
    ("duration_ms", "bigint"),
    ("complete", "boolean"),
    ("jobs", "bigint"),
    ("stages", "bigint"),
    ("task_attempts", "bigint"),
    ("executor_run_time_ms", "bigint"),
    ("input_bytes", "bigint"),
    ("shuffle_read_bytes", "bigint"),
    ("disk_bytes_spilled", "bigint"),
    ("findings", "bigint"),
    ("finding_rules", "array<string>"),
    ("top_finding", "string"),
    ("report_json", "string"),
]


def rows_for(url: str, storage_options: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per application in ``url``; one row with ``error`` when none could be analysed."""
    import sparkprof

    empty: dict[str, Any] = {name: None for name, _ in COLUMNS}
    try:
        applications = list(sparkprof.iter_applications(url, **storage_options))
    except Exception as error:  # storage errors, nothing analysable: a row, never a failed job
        return [{**empty, "url": url, "error": f"{type(error).__name__}: {error}"}]
    if not applications:
        return [{**empty, "url": url, "error": "no Spark events could be read"}]
    rows = []
    for analysed in applications:
        report = analysed.report
        info, counts, totals = report.application, report.counts, report.totals
        rows.append(
            {
                **empty,
                "url": url,
                "app_id": info.id,
                "attempt_id": info.attempt_id,
                "app_name": info.name,
                "spark_version": info.spark_version,
                "start_ms": info.start_ms,
                "duration_ms": info.duration_ms,
                "complete": info.complete,
                "jobs": counts.jobs,
                "stages": counts.stages,
                "task_attempts": counts.task_attempts,
                "executor_run_time_ms": totals.executor_run_time_ms,
                "input_bytes": totals.input_bytes,
                "shuffle_read_bytes": totals.shuffle_read_bytes,
                "disk_bytes_spilled": totals.disk_bytes_spilled,
                "findings": len(report.findings),
                "finding_rules": [finding.rule for finding in report.findings],
                "top_finding": report.findings[0].rule if report.findings else None,
                "report_json": report.json,
            }
        )
    return rows


def analyse_partition(
    urls: Iterable[str], storage_options: dict[str, Any]
) -> Iterator[dict[str, Any]]:
    """What each Spark task runs: its URLs one at a time (one application in memory)."""
    for url in urls:
        yield from rows_for(url, storage_options)


def read_urls(listing: str, storage_options: dict[str, Any]) -> list[str]:
    """The non-empty, non-comment lines of a local file or an fsspec URL."""
    if "://" in listing:
        import fsspec

        with fsspec.open(listing, "rt", **storage_options) as handle:
            text = handle.read()
    else:
        with open(listing, encoding="utf-8") as handle:
            text = handle.read()
    return [line.strip() for line in text.splitlines() if line.strip() and line[0] != "#"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="sparkprof.spark_job",
        description="Analyse event logs on a Spark cluster; one Parquet row per application.",
    )
    parser.add_argument("urls", help="a file (local or fsspec URL) listing one event log per line")
    parser.add_argument("output", help="the Parquet folder to write (overwritten)")
    parser.add_argument(
        "--partitions", type=int, help="Spark tasks (default: one per log, at most 10,000)"
    )
    add_storage_option_argument(
        parser,
        help="fsspec storage option for the logs and the listing (VALUE as JSON when it parses)",
    )
    args = parser.parse_args(argv)
    options = dict(args.option)
    urls = read_urls(args.urls, options)
    if not urls:
        print(f"sparkprof.spark_job: no event logs listed in {args.urls}", file=sys.stderr)
        return 1

    from pyspark.sql import SparkSession

    spark = SparkSession.builder.appName("sparkprof analyze").getOrCreate()
    try:
        partitions = args.partitions or min(len(urls), 10_000)
        schema = ", ".join(f"{name} {kind}" for name, kind in COLUMNS)
        rows = (
            spark.sparkContext.parallelize(urls, partitions)
            .mapPartitions(lambda part: analyse_partition(part, options))
            .map(lambda row: tuple(row[name] for name, _ in COLUMNS))
        )
        frame = spark.createDataFrame(rows, schema)
        frame.write.mode("overwrite").parquet(args.output)
        written = spark.read.parquet(args.output)
        failed = written.where("error IS NOT NULL").count()
        print(
            f"sparkprof.spark_job: {written.count()} rows ({failed} with an error) in {args.output}"
        )
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
