"""S3A metrics, dashboards and alerts against real servers: one short real Spark run.

A standalone Master and two Workers on loopback, moto's S3 server (the AWS S3 API, on loopback),
a real Prometheus scraping the driver's /metrics every second, and tests/e2e/observability_job.py
submitted with the agent, the plugin and hadoop-aws of the Hadoop version this Spark ships
(scripts/install-s3a.sh). The job writes Parquet through s3a:// with a 5 MB multipart size and
the driver kills an executor mid-run; Airflow's AIRFLOW_CTX_* and TRACEPARENT are in the driver's
environment, as Airflow's SparkSubmitOperator leaves them.

Checks: the S3A bytes and multipart counts the driver exports equal what moto holds (bytes of the
Parquet parts, one multipart upload of >= 3 blocks); the write stage's own S3A row in the saved
profile (per-thread figures, attributed to the stage); executor lifecycle, peak memory per
executor, phase timeline and Airflow info series; then EVERY panel query of the generated
Grafana dashboards (helm/sparkprof/dashboards) run over the run's time range must return data,
and EVERY alert expression (helm/sparkprof/files) must evaluate and the series it reads exist --
but the Structured Streaming dashboard and alerts, which tests/e2e/run_streaming.py checks over a
streaming query.

Exit 77 (skipped) when Spark, java, prometheus, the hadoop-aws jars or moto are missing.
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dashboard_checks import (STREAMING_ALERTS, STREAMING_BOARD, check_alerts,  # noqa: E402
                              check_dashboards)
from e2e_checks import broke_off, check, verdict  # noqa: E402
from prometheus_server import Prometheus  # noqa: E402
from spark_cluster import (SparkCluster, die_with_parent, free_port,  # noqa: E402
                           http_get, sparkprof_conf, wait_driver, wait_for)
from sparkprof_outputs import read_profile_batches  # noqa: E402

SKIPPED = 77
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRAPE_JOB = "sparkprof-driver"
BUCKET = "sparkprof-e2e"
PART_BYTES = 5 * 1024 * 1024
AIRFLOW_ENV = {
    "AIRFLOW_CTX_DAG_ID": "nightly_sales",
    "AIRFLOW_CTX_TASK_ID": "write_parquet",
    "AIRFLOW_CTX_DAG_RUN_ID": "scheduled__2026-11-24T00:00:00+00:00",
    "AIRFLOW_CTX_TRY_NUMBER": "1",
    "TRACEPARENT": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
}

class MotoS3:
    """moto's S3 server on loopback; boto3 from the same environment lists what was written."""

    def __init__(self, moto_server, work_dir):
        self.moto_server = moto_server
        self.python = os.path.join(os.path.dirname(moto_server), "python")
        self.log_path = os.path.join(work_dir, "moto.log")
        self.process = None
        self.url = None

    def start(self):
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        with open(self.log_path, "w") as log:
            self.process = subprocess.Popen(
                [self.moto_server, "-H", "127.0.0.1", "-p", str(port)], stdout=log,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                preexec_fn=die_with_parent)

        def up():
            try:
                return http_get(self.url + "/moto-api/", 2)[0] == 200
            except OSError:
                return False
        wait_for("moto's S3 server", up, 60, 0.2, self.process)
        self.boto("s3.create_bucket(Bucket=BUCKET)")

    def boto(self, statement):
        """Runs one boto3 statement against the server; returns what it printed (JSON)."""
        code = ("import boto3, json, sys\n"
                f"BUCKET = {BUCKET!r}\n"
                f"s3 = boto3.client('s3', endpoint_url={self.url!r}, aws_access_key_id='test', "
                "aws_secret_access_key='test', region_name='us-east-1')\n" + statement + "\n")
        done = subprocess.run([self.python, "-c", code], capture_output=True, text=True,
                              timeout=60)
        if done.returncode != 0:
            raise RuntimeError(f"boto3 against moto failed: {done.stderr[-800:]}")
        return done.stdout

    def objects(self, prefix):
        listed = self.boto(
            "pages = s3.get_paginator('list_objects_v2').paginate(Bucket=BUCKET, "
            f"Prefix={prefix!r})\n"
            "print(json.dumps({o['Key']: o['Size'] for p in pages "
            "for o in p.get('Contents', [])}))")
        return json.loads(listed)

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.process = None


def last(prometheus, app_id, metric, labels, end_s):
    selector = f'{metric}{{application_id="{app_id}"{"," + labels if labels else ""}}}'
    return {tuple(sorted(l.items())): v for l, v in
            prometheus.query(f"last_over_time({selector}[1h])", end_s)}


def total(values):
    return sum(values.values()) if values else None


def check_s3a(prometheus, moto, app_id, end_s, batches, hadoop_request_counts):
    parts = {k: v for k, v in moto.objects("out/").items() if k.endswith(".parquet")}
    parquet_bytes = sum(parts.values())
    check(parts and parquet_bytes >= 3 * PART_BYTES - 2 * 1024 * 1024,
          f"moto holds the Parquet output: {len(parts)} files, {parquet_bytes} bytes")
    written = total(last(prometheus, app_id, "spark_s3a_bytes_total", 'direction="write"', end_s))
    check(written is not None and parquet_bytes <= written <= parquet_bytes + 256 * 1024,
          f"spark_s3a_bytes_total{{direction=\"write\"}} = {written} is the {parquet_bytes} "
          f"bytes of Parquet moto holds (+ at most 256 KiB of markers and metadata)")
    read = total(last(prometheus, app_id, "spark_s3a_bytes_total", 'direction="read"', end_s))
    check(read is not None and read > 0, f"the read back shows: {read} bytes read from S3A")
    initiated = total(last(prometheus, app_id, "spark_s3a_requests_total",
                           'request="multipart_initiate"', end_s))
    completed = total(last(prometheus, app_id, "spark_s3a_requests_total",
                           'request="multipart_complete"', end_s))
    blocks = total(last(prometheus, app_id, "spark_s3a_block_uploads_total", "", end_s))
    expected_parts = math.ceil(max(parts.values(), default=0) / PART_BYTES)
    # Hadoop 3.5.0 counts 2 initiations for the one upload it completes (measured); 3.3.4 one.
    check(completed == len(parts) and initiated is not None and initiated >= completed,
          f"one completed multipart upload per Parquet file: initiated {initiated}, completed "
          f"{completed}, files {len(parts)}")
    check(blocks is not None and blocks >= expected_parts >= 3,
          f"spark_s3a_block_uploads_total = {blocks} >= the {expected_parts} parts of the "
          f"largest file")
    put_seconds = total(last(prometheus, app_id, "spark_s3a_request_duration_seconds_total",
                             'request="put"', end_s))
    check(put_seconds is not None, f"PUT request time is exported: {put_seconds} s")

    # The per-stage rows: the tasks' per-thread figures, attributed to the write stage.
    stage_rows = {}
    for batch in batches:
        for row in batch.get("s3a", []):
            if row["stage_id"] < 0:
                continue
            key = (row["stage_id"], row["stage_attempt"])
            into = stage_rows.setdefault(key, {"tasks": 0, "bytes_written": 0,
                                               "multipart_initiated": 0, "multipart_completed": 0,
                                               "multipart_parts": 0, "request_counts": True})
            for field in ("tasks", "bytes_written", "multipart_initiated", "multipart_completed",
                          "multipart_parts"):
                into[field] += row[field]
            into["request_counts"] &= row["request_counts"]
    writers = {k: v for k, v in stage_rows.items() if v["bytes_written"] > 0}
    check(len(writers) == 1 and sum(v["bytes_written"] for v in writers.values()) ==
          parquet_bytes,
          f"exactly one stage wrote to S3A, the Parquet bytes moto holds: {writers}")
    if len(writers) == 1:
        # Hadoop >= 3.3.5: the task thread's IOStatisticsContext gives the stage its own request
        # counts, the output stream's multipart upload and parts included.
        (row,) = writers.values()
        check(row["request_counts"] == hadoop_request_counts,
              f"stage rows carry request counts exactly when Hadoop has the per-thread context "
              f"({hadoop_request_counts}): {row}")
        if hadoop_request_counts:
            check(row["multipart_initiated"] == 1 and row["multipart_completed"] == 1
                  and row["multipart_parts"] >= 3,
                  f"the write stage's own row has its multipart upload of >= 3 parts: {row}")


def check_context_series(prometheus, app_id, end_s, start_s, killed, replaced):
    added = total(last(prometheus, app_id, "spark_executors_added_total", "", end_s))
    expected_added = 3 if replaced else 2
    check(added == expected_added,
          f"executor lifecycle: {added} executors added (2 at the start"
          f"{', 1 requested after the kill' if replaced else ''})")
    removed = last(prometheus, app_id, "spark_executors_removed_total", "", end_s)
    released = total({k: v for k, v in removed.items() if ("reason", "released") in k})
    check(killed and released is not None and released >= 1,
          f"executor {killed} killed by the driver counts as removed, reason released: {removed}")
    peaks = last(prometheus, app_id, "spark_executor_peak_memory_bytes", 'area="jvm_heap"', end_s)
    # With spark.executor.metrics.pollingInterval set every executor that ran a task reports a
    # positive peak; the one killed mid-run may not have.
    check(len(peaks) >= 2 and sum(1 for v in peaks.values() if v > 0) >= 1,
          f"peak JVM heap per executor: {sorted(peaks.values())}")
    durations = last(prometheus, app_id, "spark_executor_task_duration_seconds_count", "", end_s)
    check(len(durations) >= 2 and total(durations) > 0,
          f"task durations per executor: {len(durations)} executors, {total(durations)} tasks")
    starts = last(prometheus, app_id, "spark_phase_start_timestamp_seconds", "", end_s)
    phases = {dict(k).get("phase"): v for k, v in starts.items()}
    check("compute" in phases and start_s - 5 <= phases["compute"] <= end_s,
          f"the compute phase has a start within the run: {phases}")
    # compute is the tasks' CPU time, task_wait the rest of their work (issue 28): on a loaded host
    # the waits can outgrow the CPU at every refresh, so either one marks the tasks' phase.
    active = prometheus.query(
        f'max_over_time(spark_phase_active{{application_id="{app_id}",'
        f'phase=~"compute|task_wait"}}[1h])', end_s)
    check(any(value == 1 for _, value in active),
          f"spark_phase_active marked the tasks' phase (compute or task_wait): "
          f"{ {labels.get('phase'): value for labels, value in active} }")
    info = prometheus.query(f'last_over_time(spark_airflow_info{{application_id="{app_id}"}}[1h])',
                            end_s)
    labels = info[0][0] if len(info) == 1 else {}
    expected = {"dag_id": AIRFLOW_ENV["AIRFLOW_CTX_DAG_ID"],
                "task_id": AIRFLOW_ENV["AIRFLOW_CTX_TASK_ID"],
                "run_id": AIRFLOW_ENV["AIRFLOW_CTX_DAG_RUN_ID"],
                "try_number": "1", "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"}
    check(all(labels.get(k) == v for k, v in expected.items()),
          f"spark_airflow_info carries the Airflow context and trace id: {labels}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spark-home", required=True)
    parser.add_argument("--python", required=True, help="the pyspark environment's python")
    parser.add_argument("--java-home", default=os.environ.get("JAVA_HOME", ""))
    parser.add_argument("--agent", required=True, help="libsparkprof.so")
    parser.add_argument("--plugin-jar", required=True)
    parser.add_argument("--s3a-root", required=True, help="what scripts/install-s3a.sh installed")
    parser.add_argument("--prometheus", default=os.environ.get("SPARKPROF_PROMETHEUS", ""))
    parser.add_argument("--flatc", default=shutil.which("flatc") or "flatc")
    parser.add_argument("--profile-schema", default=os.path.join(REPO, "schema", "profile.fbs"))
    parser.add_argument("--dashboards", default=os.path.join(REPO, "helm", "sparkprof",
                                                             "dashboards"))
    parser.add_argument("--rules", default=os.path.join(REPO, "helm", "sparkprof", "files",
                                                        "sparkprof-alerts.rules.yaml"))
    parser.add_argument("--work-dir", required=True)
    args = parser.parse_args()

    if not os.access(os.path.join(args.spark_home, "bin", "spark-submit"), os.X_OK):
        print(f"SKIPPED: no Spark at {args.spark_home} (scripts/install-spark.sh)")
        return SKIPPED
    java = os.path.join(args.java_home, "bin", "java") if args.java_home else shutil.which("java")
    prometheus_binary = args.prometheus or shutil.which("prometheus") or ""
    if not java or not os.access(prometheus_binary, os.X_OK):
        print("SKIPPED: java or prometheus is not installed (scripts/install-deps.sh --browser)")
        return SKIPPED
    api = [j for j in os.listdir(os.path.join(args.spark_home, "jars"))
           if j.startswith("hadoop-client-api-")]
    hadoop = api[0][len("hadoop-client-api-"):-len(".jar")] if api else ""
    jars_dir = os.path.join(args.s3a_root, "jars", hadoop)
    moto_server = os.path.join(args.s3a_root, "moto-venv", "bin", "moto_server")
    if not os.path.exists(os.path.join(jars_dir, ".installed")) or not os.path.exists(moto_server):
        print(f"SKIPPED: no hadoop-aws for Hadoop {hadoop} or no moto in {args.s3a_root} "
              "(scripts/install-s3a.sh)")
        return SKIPPED
    hadoop_jars = sorted(os.path.join(jars_dir, j) for j in os.listdir(jars_dir)
                         if j.endswith(".jar"))
    # Hadoop >= 3.3.5 has the per-thread IOStatisticsContext: stage rows carry request counts.
    hadoop_request_counts = tuple(int(x) for x in hadoop.split(".")[:3]) >= (3, 3, 5)

    work = os.path.abspath(args.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    cluster = SparkCluster(args.spark_home, work, args.java_home or None)
    print(f"real Spark {cluster.version} (Hadoop {hadoop}) at {cluster.spark_home}; work dir "
          f"{work}", flush=True)
    moto = MotoS3(moto_server, work)
    prometheus = Prometheus(prometheus_binary, work)
    started = time.monotonic()
    try:
        moto.start()
        cluster.start_master()
        cluster.start_workers(2, 1, "1g")
        metrics_port = free_port()
        prometheus.start(SCRAPE_JOB, f"127.0.0.1:{metrics_port}")
        output_dir = os.path.join(work, "sparkprof")
        marker = os.path.join(work, "job-result.json")
        conf = sparkprof_conf(args.agent, args.plugin_jar, output_dir, metrics_port, hadoop_jars)
        conf.update({
            # Batches every second: the read back's S3A row reaches the driver before it stops.
            "spark.sparkprof.flushInterval": "1s",
            # Executors poll their memory every 100 ms, so each task end carries its own peaks
            # (with the default 0 they come from heartbeat polls and a short run may see none).
            "spark.executor.metrics.pollingInterval": "100ms",
            "spark.sql.shuffle.partitions": "8",
            "spark.hadoop.fs.s3a.endpoint": moto.url,
            "spark.hadoop.fs.s3a.endpoint.region": "us-east-1",
            "spark.hadoop.fs.s3a.access.key": "test",
            "spark.hadoop.fs.s3a.secret.key": "test",
            "spark.hadoop.fs.s3a.path.style.access": "true",
            "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
            "spark.hadoop.fs.s3a.multipart.size": str(PART_BYTES),
            "spark.hadoop.fs.s3a.multipart.threshold": str(PART_BYTES),
        })
        start_s = time.time()
        driver = cluster.submit_python(
            os.path.join(REPO, "tests", "e2e", "observability_job.py"), args.python,
            [f"s3a://{BUCKET}/out", marker], conf, log_path=os.path.join(work, "driver.log"),
            extra_env=AIRFLOW_ENV)
        exit_code, _ = wait_driver(driver, 360)
        end_s = time.time()
        print(f"the job ran in {end_s - start_s:.0f} s (exit {exit_code})", flush=True)
        result = {}
        if os.path.exists(marker):
            with open(marker) as f:
                result = json.load(f)
        if not check(exit_code == 0 and result.get("rows") == 7000,
                     f"the job wrote and read back 7000 rows through s3a:// ({result})"):
            raise RuntimeError("the job failed")
        app_ids = [d for d in os.listdir(output_dir) if d.startswith("app-")]
        if not check(len(app_ids) == 1, f"one application's outputs: {app_ids}"):
            raise RuntimeError("no application outputs")
        app_id = app_ids[0]
        up = [t for t, v in prometheus.range_values(f'up{{job="{SCRAPE_JOB}"}}[1h]', end_s)
              if v == 1]
        check(len(up) >= 10, f"Prometheus scraped the driver {len(up)} times")
        last_scrape = max(up, default=end_s)
        batches = read_profile_batches(os.path.join(output_dir, app_id, "profile.sparkprof"),
                                       args.flatc, args.profile_schema)
        check_s3a(prometheus, moto, app_id, last_scrape, batches, hadoop_request_counts)
        check_context_series(prometheus, app_id, last_scrape, start_s,
                             result.get("killed_executor"), result.get("replaced"))
        # The streaming dashboard and alerts: tests/e2e/run_streaming.py, over a streaming query.
        check_dashboards(prometheus, args.dashboards, app_id, start_s, last_scrape,
                         lambda board: board != STREAMING_BOARD)
        check_alerts(prometheus, args.rules, app_id, start_s, last_scrape,
                     lambda alert: not alert.startswith(STREAMING_ALERTS))
    except (RuntimeError, OSError, ValueError, KeyError, IndexError, TypeError) as e:
        broke_off(e, os.path.join(work, "driver.log"), cluster)
    finally:
        cluster.stop()
        prometheus.stop()
        moto.stop()
    return verdict(cluster.version, started, work)


if __name__ == "__main__":
    sys.exit(main())
