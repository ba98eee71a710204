"""The PySpark job that distributes ``sparkprof.analyze`` over event-log URLs
(sparkprof/spark_job.py): its rows without Spark, then the job itself on the real local Spark
3.5.9 (scripts/install-spark.sh) over shared logs and the demo logs, its Parquet read back by
Spark."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from servers import HISTORY_SERVER_LOGS

import sparkprof
from sparkprof import spark_job

REPO = Path(__file__).resolve().parents[2]
SPARK_VERSION = "3.5.9"

READ_BACK = """
import json, sys
from sparkprof import spark_job
code = spark_job.main(sys.argv[1:4])
from pyspark.sql import SparkSession
spark = SparkSession.builder.getOrCreate()
rows = [row.asDict() for row in spark.read.parquet(sys.argv[2]).collect()]
spark.stop()
with open(sys.argv[4], "w") as out:
    json.dump({"code": code, "rows": rows, "types": dict(spark_job.COLUMNS)}, out)
"""


def test_rows_without_spark(demo_logs: dict[str, Path], tmp_path: Path) -> None:
    (row,) = spark_job.rows_for(str(demo_logs["zstd"]), {})
    report = sparkprof.analyze(demo_logs["zstd"]).application
    assert row["error"] is None and row["report_json"] == report.json
    assert (row["app_id"], row["duration_ms"]) == (
        report.application.id,
        report.application.duration_ms,
    )
    assert row["finding_rules"] == [f.rule for f in report.findings]
    assert set(row) == {name for name, _ in spark_job.COLUMNS}
    (missing,) = spark_job.rows_for(str(tmp_path / "missing"), {})
    assert missing["url"].endswith("missing") and missing["error"] and missing["app_id"] is None
    junk = tmp_path / "junk"
    junk.write_text("not a log\n" * 100)
    (nothing,) = spark_job.rows_for(str(junk), {})
    assert "no Spark events" in nothing["error"] or "NothingAnalysable" in nothing["error"]
    listing = tmp_path / "urls.txt"
    listing.write_text(f"# logs\n{demo_logs['plain']}\n\n  {demo_logs['gz']}  \n")
    assert spark_job.read_urls(str(listing), {}) == [str(demo_logs["plain"]), str(demo_logs["gz"])]


@pytest.mark.slow
def test_on_local_spark(shared_eventlogs: Path, demo_logs: dict[str, Path], tmp_path: Path) -> None:
    spark_home = REPO / "build" / "spark" / SPARK_VERSION / "home"
    if not (spark_home / "bin" / "spark-submit").exists():
        pytest.skip(f"no Spark {SPARK_VERSION} in {spark_home} (scripts/install-spark.sh)")
    urls = [str(shared_eventlogs / name) for name in HISTORY_SERVER_LOGS]
    urls += [str(demo_logs[codec]) for codec in ("zstd", "lz4", "snappy")]
    urls.append(str(tmp_path / "missing-log"))
    listing = tmp_path / "urls.txt"
    listing.write_text("\n".join(urls) + "\n")
    script = tmp_path / "run_job.py"
    script.write_text(READ_BACK)
    output, answer = tmp_path / "runs.parquet", tmp_path / "answer.json"
    # pyspark and py4j from Spark's own venv; sparkprof from this interpreter's.
    env = {
        **os.environ,
        "SPARK_HOME": str(spark_home),
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "PYTHONPATH": str(spark_home.resolve().parent),
    }
    done = subprocess.run(
        [
            str(spark_home / "bin" / "spark-submit"),
            "--master",
            "local[2]",
            "--conf",
            "spark.ui.enabled=false",
            "--conf",
            f"spark.local.dir={tmp_path / 'spark-local'}",
            str(script),
            str(listing),
            str(output),
            "--partitions=3",
            str(answer),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    result = json.loads(answer.read_text())
    assert result["code"] == 0
    rows = result["rows"]
    by_url: dict[str, list[dict[str, object]]] = {}
    for row in rows:
        by_url.setdefault(str(row["url"]), []).append(row)
    assert set(by_url) == set(urls)
    (missing,) = by_url[str(tmp_path / "missing-log")]
    assert missing["error"] and missing["app_id"] is None
    for url in urls[:-1]:
        expected = {a.report.application.id: a.report for a in sparkprof.iter_applications(url)}
        assert {row["app_id"] for row in by_url[url]} == set(expected)
        for row in by_url[url]:
            report = expected[str(row["app_id"])]
            assert row["error"] is None
            assert row["report_json"] == report.json
            assert row["duration_ms"] == report.application.duration_ms
            assert row["finding_rules"] == [f.rule for f in report.findings]
    assert "rows (1 with an error)" in done.stdout
