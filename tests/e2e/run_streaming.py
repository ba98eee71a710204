"""The live Structured Streaming metrics in real Spark: one streaming query, scraped while it runs.

A standalone Master and a Worker on loopback, a real Prometheus scraping the driver's /metrics
every second, and tests/e2e/streaming_job.py submitted with the agent and the plugin: a named
query reading Spark's rate source (200 rows/s) into a windowed count with a watermark, on a 3 s
trigger, stopped after its seventh batch.

Checks, on the driver's own /metrics scraped every second by this test while the query runs: the
query's series appear labelled with its name; between two scrapes its batches and input rows
counters grow; the latest batch's input and processed rates are above 0 and the input rate near
the source's 200 rows/s; its duration equals its six steps' sum or more; state rows and bytes
and the watermark's lag are there; the trigger read from the schedule is 3 s; at the end the
engine does not judge it falling behind and its busy ratio is below 1. After the stop: its gauges
are gone, its counters stay. Then every panel query of the "Spark Structured Streaming" dashboard
has data in Prometheus and every streaming alert expression evaluates
(tests/e2e/dashboard_checks.py).

Exit 77 (skipped) when Spark, its pyspark environment, java or prometheus is missing.
"""

import argparse
import json
import os
import re
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dashboard_checks import (STREAMING_ALERTS, STREAMING_BOARD, check_alerts,  # noqa: E402
                              check_dashboards)
from e2e_checks import broke_off, check, verdict  # noqa: E402
from prometheus_server import Prometheus  # noqa: E402
from spark_cluster import (SparkCluster, free_port, http_get, sparkprof_conf,  # noqa: E402
                           wait_driver)

SKIPPED = 77
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRAPE_JOB = "sparkprof-driver"
QUERY = "rate_windows"
ROWS_PER_SECOND = 200
TRIGGER_S = 3.0
STEPS = ("latest_offset", "get_batch", "query_planning", "add_batch", "wal_commit",
         "commit_offsets")
SERIES = re.compile(r"^([a-z_][a-z0-9_]*)(?:\{(.*)\})? (\S+)$")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_exposition(text):
    """{(name, ((label, value), ...)): value} of a Prometheus text exposition."""
    series = {}
    for line in text.splitlines():
        match = SERIES.match(line)
        if match:
            labels = tuple(sorted(LABEL.findall(match.group(2) or "")))
            series[(match.group(1), labels)] = float(match.group(3))
    return series


def query_value(scrape, name, **labels):
    """The value of the query's series `name` (with these extra labels), None when absent."""
    for (series_name, series_labels), value in scrape.items():
        found = dict(series_labels)
        if series_name == name and found.get("query") == QUERY and all(
                found.get(k) == v for k, v in labels.items()):
            return value
    return None


class Scraper:
    """The driver's /metrics, read every second while the driver runs (wait_driver's tick)."""

    def __init__(self, url):
        self.url = url
        self.scrapes = []  # (monotonic seconds, parsed exposition) with the query's counter
        self.last_text = ""

    def __call__(self):
        try:
            status, body = http_get(self.url, 2)
        except OSError:
            return
        if status != 200:
            return
        scrape = parse_exposition(body)
        if query_value(scrape, "spark_streaming_batches_total") is not None:
            self.scrapes.append((time.monotonic(), scrape))
            self.last_text = body


def check_live_series(scrapes):
    running = [s for _, s in scrapes
               if query_value(s, "spark_streaming_batch_duration_seconds") is not None]
    if not check(len(running) >= 2, f"{len(running)} scrapes of the query while it ran"):
        return
    first, last = running[0], running[-1]
    batches = (query_value(first, "spark_streaming_batches_total"),
               query_value(last, "spark_streaming_batches_total"))
    rows = (query_value(first, "spark_streaming_input_rows_total"),
            query_value(last, "spark_streaming_input_rows_total"))
    print(f"batches counter {batches[0]:.0f} -> {batches[1]:.0f}, input rows counter "
          f"{rows[0]:.0f} -> {rows[1]:.0f}", flush=True)
    check(batches[1] > batches[0], f"the batches counter grows between scrapes: {batches}")
    check(rows[1] > rows[0], f"the input rows counter grows between scrapes: {rows}")
    # The latest batch's figures, at the last scrape of the running query.
    input_rate = query_value(last, "spark_streaming_input_rows_per_second")
    processed_rate = query_value(last, "spark_streaming_processed_rows_per_second")
    duration = query_value(last, "spark_streaming_batch_duration_seconds")
    steps = {step: query_value(last, "spark_streaming_batch_step_seconds", step=step)
             for step in STEPS}
    state_rows = query_value(last, "spark_streaming_state_rows")
    state_bytes = query_value(last, "spark_streaming_state_memory_bytes")
    lag = query_value(last, "spark_streaming_watermark_lag_seconds")
    trigger = query_value(last, "spark_streaming_trigger_interval_seconds")
    falling = [query_value(s, "spark_streaming_falling_behind") for s in running]
    busy = query_value(last, "spark_streaming_busy_ratio")
    print(f"latest batch: input {input_rate} rows/s, processed {processed_rate} rows/s, "
          f"{duration} s ({steps}), state {state_rows} rows / {state_bytes} bytes, watermark "
          f"lag {lag} s, trigger {trigger} s, busy ratio {busy}, falling behind {falling}",
          flush=True)
    # A batch on a 3 s trigger holds what arrived since the previous one started: about 3 s of
    # the source's rows, so Spark's input rate is about the source's rate.
    check(input_rate is not None and 0.5 * ROWS_PER_SECOND <= input_rate <= 2 * ROWS_PER_SECOND,
          f"input rows/s near the source's {ROWS_PER_SECOND}: {input_rate}")
    check(processed_rate is not None and processed_rate > 0, f"processed rows/s > 0: {processed_rate}")
    check(all(v is not None for v in steps.values()), f"every step is served: {steps}")
    check(duration is not None and duration > 0
          and duration + 1e-9 >= sum(v or 0 for v in steps.values()),
          f"the batch's duration covers its steps: {duration} >= sum {steps}")
    check(state_rows is not None and state_rows > 0, f"state rows > 0: {state_rows}")
    check(state_bytes is not None and state_bytes > 0, f"state memory > 0: {state_bytes}")
    check(lag is not None and 0 < lag < 120, f"watermark lag of a few seconds: {lag}")
    check(trigger == TRIGGER_S, f"the trigger read from the batches' schedule is 3 s: {trigger}")
    # The first batches (planning, code generation, executors warming up) may overrun the
    # trigger on a busy machine; the recent ones keep up.
    check(busy is not None and 0 < busy < 1, f"busy ratio of a query that keeps up: {busy}")
    check(falling[-1] == 0, f"not judged falling behind at the end: {falling}")
    # After query.stop(): the gauges go, the counters stay.
    last_running = max(i for i, (_, s) in enumerate(scrapes)
                       if query_value(s, "spark_streaming_batch_duration_seconds") is not None)
    after = [query_value(s, "spark_streaming_batches_total") for _, s in scrapes[last_running + 1:]]
    check(len(after) >= 1 and all(v >= batches[1] for v in after),
          f"scrapes after the stop have no gauges and keep the batches counter: {after}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spark-home", required=True)
    parser.add_argument("--python", required=True, help="the pyspark environment's python")
    parser.add_argument("--java-home", default=os.environ.get("JAVA_HOME", ""))
    parser.add_argument("--agent", required=True, help="libsparkprof.so")
    parser.add_argument("--plugin-jar", required=True)
    parser.add_argument("--prometheus", default=os.environ.get("SPARKPROF_PROMETHEUS", ""))
    parser.add_argument("--dashboards", default=os.path.join(REPO, "helm", "sparkprof",
                                                             "dashboards"))
    parser.add_argument("--rules", default=os.path.join(REPO, "helm", "sparkprof", "files",
                                                        "sparkprof-alerts.rules.yaml"))
    parser.add_argument("--work-dir", required=True)
    args = parser.parse_args()

    if not os.access(os.path.join(args.spark_home, "bin", "spark-submit"), os.X_OK) or \
            not os.access(args.python, os.X_OK):
        print(f"SKIPPED: no Spark or pyspark at {args.spark_home} (scripts/install-spark.sh)")
        return SKIPPED
    java = os.path.join(args.java_home, "bin", "java") if args.java_home else shutil.which("java")
    prometheus_binary = args.prometheus or shutil.which("prometheus") or ""
    if not java or not os.access(prometheus_binary, os.X_OK):
        print("SKIPPED: java or prometheus is not installed (scripts/install-deps.sh --browser)")
        return SKIPPED

    work = os.path.abspath(args.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    cluster = SparkCluster(args.spark_home, work, args.java_home or None)
    print(f"real Spark {cluster.version} at {cluster.spark_home}; work dir {work}", flush=True)
    prometheus = Prometheus(prometheus_binary, work)
    started = time.monotonic()
    try:
        cluster.start_master()
        cluster.start_workers(1, 2, "1g")
        metrics_port = free_port()
        prometheus.start(SCRAPE_JOB, f"127.0.0.1:{metrics_port}")
        output_dir = os.path.join(work, "sparkprof")
        marker = os.path.join(work, "job-result.json")
        conf = sparkprof_conf(args.agent, args.plugin_jar, output_dir, metrics_port)
        conf.update({
            # Small stateful batches: 4 state partitions, not the default 200.
            "spark.sql.shuffle.partitions": "4",
        })
        scraper = Scraper(f"http://127.0.0.1:{metrics_port}/metrics")
        start_s = time.time()
        driver = cluster.submit_python(
            os.path.join(REPO, "tests", "e2e", "streaming_job.py"), args.python,
            [os.path.join(work, "checkpoint"), marker], conf,
            log_path=os.path.join(work, "driver.log"))
        exit_code, _ = wait_driver(driver, 300, tick=scraper)
        end_s = time.time()
        print(f"the job ran in {end_s - start_s:.0f} s (exit {exit_code}); "
              f"{len(scraper.scrapes)} scrapes with the query", flush=True)
        result = {}
        if os.path.exists(marker):
            with open(marker) as f:
                result = json.load(f)
        if not check(exit_code == 0 and result.get("last_batch_id", -1) >= 6,
                     f"the query ran 7 batches and stopped ({result})"):
            raise RuntimeError("the job failed")
        with open(os.path.join(work, "last-scrape.txt"), "w") as f:
            f.write(scraper.last_text)
        check_live_series(scraper.scrapes)
        app_ids = [d for d in os.listdir(output_dir) if d.startswith("app-")]
        if not check(len(app_ids) == 1, f"one application's outputs: {app_ids}"):
            raise RuntimeError("no application outputs")
        up = [t for t, v in prometheus.range_values(f'up{{job="{SCRAPE_JOB}"}}[1h]', end_s)
              if v == 1]
        last_scrape = max(up, default=end_s)
        check_dashboards(prometheus, args.dashboards, app_ids[0], start_s, last_scrape,
                         lambda board: board == STREAMING_BOARD)
        check_alerts(prometheus, args.rules, app_ids[0], start_s, last_scrape,
                     lambda alert: alert.startswith(STREAMING_ALERTS))
    except (RuntimeError, OSError, ValueError, KeyError, IndexError, TypeError) as e:
        broke_off(e, os.path.join(work, "driver.log"), cluster)
    finally:
        cluster.stop()
        prometheus.stop()
    return verdict(cluster.version, started, work)


if __name__ == "__main__":
    sys.exit(main())
