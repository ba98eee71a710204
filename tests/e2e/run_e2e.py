#!/usr/bin/env python3
"""End-to-end test of the Spark plugin with a real Prometheus, without a Spark runtime.

Starts the e2e driver JVM (E2eDriver, with -agentpath), which plays Spark's driver and launches
executor JVMs (E2eExecutor, with -agentpath) after a deliberate delay; starts Prometheus on
loopback with a generated config scraping the driver's endpoint every second; then asks
Prometheus's HTTP API for the metrics and checks them against what the harness did (result.json),
and checks the stage flame graphs the driver wrote.

Exit codes: 0 all checks passed, 1 a check failed, 77 skipped (java or prometheus missing).
Usage: run_e2e.py --java JAVA --agent LIBSPARKPROF --classpath CP --work-dir DIR [--sparkprof CLI]
"""

import argparse
import ctypes
import html
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

SKIPPED = 77
CATEGORIES = ["compute", "serialization", "s3a_write", "s3a_read", "shuffle_write",
              "shuffle_read", "spill", "file_io", "gc", "other"]
EXECUTORS = 2
CORES_PER_EXECUTOR = 3
EXECUTOR_DELAY_MS = 1500
# The driver's resource wait is computed from the event times the harness posted, so it should
# match them closely; the tolerance covers rounding and the scrape seeing a value updated later.
RESOURCE_WAIT_TOLERANCE_S = 0.25

failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what, flush=True)
    if not condition:
        failures.append(what)
    return condition


def die_with_parent():
    """preexec_fn: the child gets SIGKILL when this script dies (a ctest timeout kills only us)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, timeout=5.0):
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.status, response.read().decode("utf-8", "replace")


def wait_for(what, predicate, timeout_s, interval_s=0.1, process=None):
    """Bounded poll: predicate() until truthy; gives up at the deadline or when process exits."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{what}: process exited with {process.returncode}")
        time.sleep(interval_s)
    raise RuntimeError(f"{what}: not within {timeout_s} s")


class Prometheus:
    def __init__(self, binary, work_dir, metrics_port):
        self.binary = binary
        self.work_dir = work_dir
        self.metrics_port = metrics_port
        self.process = None
        self.url = None
        self.log_path = os.path.join(work_dir, "prometheus.log")

    def start(self, job):
        config = os.path.join(self.work_dir, "prometheus.yml")
        with open(config, "w") as f:
            f.write(
                "global:\n"
                "  scrape_interval: 1s\n"
                "  scrape_timeout: 900ms\n"
                "  evaluation_interval: 1s\n"
                "scrape_configs:\n"
                f"  - job_name: {job}\n"
                "    static_configs:\n"
                f"      - targets: ['127.0.0.1:{self.metrics_port}']\n")
        # A port picked free can be taken before Prometheus binds it: try a few.
        last_error = None
        for _ in range(3):
            port = free_port()
            storage = os.path.join(self.work_dir, "prometheus-data")
            shutil.rmtree(storage, ignore_errors=True)
            log = open(self.log_path, "w")
            self.process = subprocess.Popen(
                [self.binary, f"--config.file={config}", f"--storage.tsdb.path={storage}",
                 f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn",
                 "--storage.tsdb.retention.time=1h"],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                preexec_fn=die_with_parent)
            log.close()
            self.url = f"http://127.0.0.1:{port}"
            try:
                wait_for("Prometheus ready", self.ready, 60, 0.2, self.process)
                return
            except RuntimeError as e:
                last_error = e
                self.stop()
        raise RuntimeError(f"Prometheus did not start: {last_error}; log: {self.log_tail()}")

    def ready(self):
        try:
            return http_get(self.url + "/-/ready", 2)[0] == 200
        except OSError:
            return False

    def query(self, expression, at_ms=None):
        """Instant query: list of (labels, value)."""
        params = {"query": expression}
        if at_ms is not None:
            params["time"] = f"{at_ms / 1000:.3f}"
        status, body = http_get(self.url + "/api/v1/query?" + urllib.parse.urlencode(params))
        answer = json.loads(body)
        if answer.get("status") != "success":
            raise RuntimeError(f"query {expression} failed: {body[:300]}")
        return [(r["metric"], float(r["value"][1])) for r in answer["data"]["result"]]

    def scalar(self, expression, at_ms=None):
        """The single value of expression, or None when there is no series."""
        result = self.query(expression, at_ms)
        return result[0][1] if len(result) == 1 else (None if not result else result)

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self.process = None

    def log_tail(self):
        try:
            with open(self.log_path) as f:
                return f.read()[-2000:]
        except OSError:
            return ""


def read_text(path, limit=4000):
    try:
        with open(path, errors="replace") as f:
            return f.read()[-limit:]
    except OSError:
        return "(none)"


def dump_logs(work, prometheus):
    print("--- driver log\n" + read_text(os.path.join(work, "driver.log")))
    for i in range(1, EXECUTORS + 1):
        print(f"--- executor {i} log\n" + read_text(os.path.join(work, f"executor-{i}.log")))
    if prometheus is not None:
        print("--- prometheus log\n" + prometheus.log_tail())


def flame_graph_data(path):
    """The profile JSON embedded in a flame graph page, or None."""
    with open(path, encoding="utf-8") as f:
        page = f.read()
    match = re.search(r'<script type="application/json" id="profile-data">(.*?)</script>',
                      page, re.S)
    if not match:
        return None
    text = match.group(1)
    # The renderer escapes '<' and '/' inside the script block; JSON accepts both escapes as is.
    return json.loads(html.unescape(text) if "&quot;" in text else text)


def frames_with_category(data, needle):
    """(frame name, category name, total) of every node whose frame name contains needle."""
    names, categories, nodes = data["names"], data["categories"], data["nodes"]
    found = []
    for i in range(0, len(nodes), 5):
        name = names[nodes[i]]
        if needle in name:
            found.append((name, categories[nodes[i + 1]], nodes[i + 2]))
    return found


def category_share(data, category):
    totals = data["categoryTotals"]
    whole = sum(totals)
    return totals[data["categories"].index(category)] / whole if whole else 0.0


def check_flame_graphs(result, app_dir):
    stage0 = os.path.join(app_dir, "stage-0-attempt-0.html")
    if check(os.path.exists(stage0), f"serialization stage flame graph written: {stage0}"):
        data = flame_graph_data(stage0)
        if check(data is not None, "stage 0 flame graph embeds its profile data"):
            oos = frames_with_category(data, "ObjectOutputStream")
            serialized = [f for f in oos if f[1] == "serialization"]
            check(len(serialized) > 0,
                  f"stage 0 flame graph shows ObjectOutputStream frames with the serialization "
                  f"category ({len(serialized)} of {len(oos)} such frames; e.g. "
                  f"{serialized[:2] or oos[:2]})")
            share = category_share(data, "serialization")
            check(share >= 0.5, f"serialization is the main category of stage 0's flame graph "
                                f"({share:.0%} of its samples)")
    stage1 = os.path.join(app_dir, "stage-1-attempt-0.html")
    if check(os.path.exists(stage1), f"skewed stage flame graph written: {stage1}"):
        data = flame_graph_data(stage1)
        aggregate = frames_with_category(data, "E2eWorkloads.aggregate") if data else []
        check(any(f[1] == "compute" for f in aggregate),
              f"stage 1 flame graph shows the aggregation frames as compute: {aggregate[:2]}")
    stage2 = os.path.join(app_dir, "stage-2-attempt-0.html")
    if check(os.path.exists(stage2), f"writing stage flame graph written: {stage2}"):
        data = flame_graph_data(stage2)
        writes = frames_with_category(data, "E2eWorkloads.writeFiles") if data else []
        check(len(writes) > 0, f"stage 2 flame graph shows the file-writing frames: {writes[:2]}")


def check_report(result, app_dir):
    """The end-of-application report (same engine as `sparkprof analyze`) describes the run."""
    path = os.path.join(app_dir, "report.json")
    if not check(os.path.exists(path), f"the end-of-application report is written: {path}"):
        return
    with open(path) as f:
        report = json.load(f)
    attempts = [t for s in result["stages"] for t in s["tasks"]]
    failed = sum(1 for t in attempts if not t["success"])
    counts = report.get("counts", {})
    check(report.get("schema") == "sparkprof.report/v1" and counts.get("jobs") == 3
          and counts.get("stages") == 3 and counts.get("task_attempts") == len(attempts),
          f"the report counts 3 jobs, 3 stages and the {len(attempts)} task attempts the harness "
          f"ran: {counts}")
    check(report.get("task_end_reasons") == {"Success": len(attempts) - failed,
                                             "ExceptionFailure": failed},
          f"the report's task end reasons: {report.get('task_end_reasons')}")
    application = report.get("application", {})
    wait_ms = result["first_executor_added_ms"] - result["application_start_ms"]
    check(application.get("duration_ms") ==
          result["application_end_ms"] - result["application_start_ms"]
          and report.get("phases", {}).get("resource_wait", {}).get("ms") == wait_ms,
          f"the report's duration and resource wait are the harness's "
          f"({application.get('duration_ms')} ms, resource wait "
          f"{report.get('phases', {}).get('resource_wait')}; waited {wait_ms} ms)")
    for name in ("report.txt", "report.md", "report.html"):
        check(os.path.exists(os.path.join(app_dir, name)), f"{name} is written")


def check_saved_profile(app_dir, sparkprof):
    profile = os.path.join(app_dir, "profile.sparkprof")
    if not check(os.path.exists(profile) and os.path.getsize(profile) > 0,
                 f"saved profile written: {profile}"):
        return
    if not sparkprof or not os.access(sparkprof, os.X_OK):
        print("note: no sparkprof CLI given; the saved profile is not read back")
        return
    run = subprocess.run([sparkprof, "flamegraph", profile, "--stage", "0", "--category",
                          "serialization", "--format", "collapsed", "-o", "-"],
                         capture_output=True, text=True, timeout=60)
    lines = [l for l in run.stdout.splitlines() if "ObjectOutputStream" in l]
    check(run.returncode == 0 and len(lines) > 0,
          f"sparkprof flamegraph reads stage 0's serialization stacks from the saved profile "
          f"({len(lines)} stacks with ObjectOutputStream; exit {run.returncode})")


def check_prometheus(prometheus, result):
    app = result["application_id"]
    job = result["scrape_job"]
    stages = {s["stage_id"]: s for s in result["stages"]}
    final_ms = result["final_scrape_ms"]

    check(prometheus.scalar(f'up{{job="{job}"}}', final_ms) == 1.0,
          "Prometheus scraped the driver's endpoint up to the end")

    # Resource wait: from the application start to the first executor (the harness delayed the
    # executors; tasks never waited for a free core since each stage has one task per core).
    expected_wait = (result["first_executor_added_ms"] - result["application_start_ms"]) / 1000
    series = prometheus.query("spark_resource_wait_seconds", final_ms)
    if not series:
        check(False, "metric spark_resource_wait_seconds is missing from Prometheus: the driver "
                     "aggregator does not export it (expected "
                     f"{expected_wait:.3f} s = first ExecutorAdded - ApplicationStart)")
    else:
        mine = [v for labels, v in series if labels.get("application_id", app) == app]
        value = sum(mine)
        check(abs(value - expected_wait) <= RESOURCE_WAIT_TOLERANCE_S,
              f"spark_resource_wait_seconds = {value:.3f} s, the harness waited "
              f"{expected_wait:.3f} s for its first executor (delay {result['executor_delay_ms']}"
              f" ms + JVM start; tolerance {RESOURCE_WAIT_TOLERANCE_S} s; series {series})")

    # The live model's figures, against the event times the harness posted (exact but for ms).
    wall = (result["application_end_ms"] - result["application_start_ms"]) / 1000
    value = prometheus.scalar("spark_phase_wall_seconds", final_ms)
    check(value is not None and abs(value - wall) <= 0.01,
          f"spark_phase_wall_seconds = {value} s, ApplicationStart to ApplicationEnd = {wall:.3f} s")
    ratios = {labels.get("phase"): v for labels, v in
              prometheus.query("spark_phase_breakdown_ratio", final_ms)}
    check(abs(sum(ratios.values()) - 1) <= 0.01,
          f"spark_phase_breakdown_ratio sums to 1 over its phases: {ratios}")
    startup = ratios.get("resource_wait", 0) * wall
    check(abs(startup - expected_wait) <= 0.01,
          f"phase resource_wait x wall = {startup:.3f} s = the wait for the first executor")
    executors = prometheus.scalar("spark_executors", final_ms)
    slots = prometheus.scalar("spark_task_slots", final_ms)
    check(executors == EXECUTORS and slots == EXECUTORS * CORES_PER_EXECUTOR,
          f"spark_executors = {executors}, spark_task_slots = {slots} (ExecutorAdded x "
          f"{EXECUTORS} with {CORES_PER_EXECUTOR} cores)")
    check(prometheus.scalar("spark_running_tasks", final_ms) == 0
          and prometheus.scalar("spark_pending_tasks", final_ms) == 0,
          "no task is running or pending at the end")

    def durations_ms(stage):
        return [t["finish_ms"] - t["launch_ms"] for t in stage["tasks"] if t["success"]]

    # Skew: stage 1 is the only stage with >= 5 successful tasks, and still current at the end.
    skewed = sorted(durations_ms(stages[1]))
    median = skewed[(len(skewed) + 1) // 2 - 1]  # nearest rank
    expected_skew = skewed[-1] / median if median > 0 else 0.0
    skew = prometheus.scalar("spark_stage_skew_ratio", final_ms)
    check(skew is not None and abs(skew - expected_skew) <= 0.01 * max(1.0, expected_skew),
          f"spark_stage_skew_ratio = {skew}, the skewed stage's longest / median task "
          f"({skewed} ms) = {expected_skew:.3f}")
    for kind, stage_ids in (("compute", [0, 1]), ("write", [2])):
        taken = [d for sid in stage_ids for d in durations_ms(stages[sid])]
        count = prometheus.scalar(f'spark_task_duration_seconds_count{{stage_kind="{kind}"}}',
                                  final_ms)
        total_s = prometheus.scalar(f'spark_task_duration_seconds_sum{{stage_kind="{kind}"}}',
                                    final_ms)
        check(count == len(taken) and total_s is not None
              and abs(total_s - sum(taken) / 1000) <= 0.01,
              f"spark_task_duration_seconds{{stage_kind=\"{kind}\"}}: {count} tasks, {total_s} s"
              f" = the {len(taken)} successful tasks of stages {stage_ids}, "
              f"{sum(taken) / 1000:.3f} s")
    accepted_events = prometheus.scalar('sparkprof_driver_events_total{outcome="accepted"}',
                                        final_ms)
    rejected_events = prometheus.scalar('sparkprof_driver_events_total{outcome="rejected"}',
                                        final_ms)
    check(accepted_events is not None and accepted_events >= result["listener_events"]
          and not rejected_events,
          f"the driver parsed every listener event ({accepted_events} accepted, "
          f"{rejected_events} rejected; the bus delivered {result['listener_events']})")

    # Task time by category at the instant after each stage (all its samples in, then scraped).
    def categories_at(at_ms):
        values = {c: 0.0 for c in CATEGORIES}
        for labels, value in prometheus.query("spark_task_time_seconds_total", at_ms):
            if labels.get("category") in values:
                values[labels["category"]] += value
        return values

    before = categories_at(result["before_jobs_scrape_ms"])
    exported = {labels.get("category") for labels, _ in
                prometheus.query("spark_task_time_seconds_total", final_ms)}
    check(set(CATEGORIES) <= exported,
          f"every category series is in Prometheus (missing: {set(CATEGORIES) - exported})")
    previous = before
    deltas = {}
    for stage_id in sorted(stages):
        now = categories_at(stages[stage_id]["scraped_ms"])
        deltas[stage_id] = {c: now[c] - previous[c] for c in CATEGORIES}
        previous = now
    cpu_s = {sid: sum(t["cpu_ns"] for t in s["tasks"]) / 1e9 for sid, s in stages.items()}
    for stage_id, delta in deltas.items():
        shown = ", ".join(f"{c} {v:.2f}" for c, v in delta.items() if v > 0.005)
        print(f"stage {stage_id} ({stages[stage_id]['name']}): task threads used "
              f"{cpu_s[stage_id]:.2f} s CPU; Prometheus task time by category: {shown}")

    ser = deltas[0]["serialization"]
    stage0_total = sum(deltas[0].values())
    check(ser > 0, f"serialization task time of the serialization stage is > 0 ({ser:.2f} s)")
    check(stage0_total > 0 and ser / stage0_total >= 0.5,
          f"serialization is at least half of the serialization stage's task time "
          f"({ser:.2f} of {stage0_total:.2f} s)")
    # CPU-time sampling on shared cores: the sampled time follows the CPU the task threads got.
    # GC pauses are wall time, not task-thread CPU: the upper bound leaves room for them, while
    # counting samples twice would still exceed it.
    check(0.3 * cpu_s[0] <= stage0_total <= 1.5 * cpu_s[0] + 0.1,
          f"the serialization stage's sampled task time ({stage0_total:.2f} s) is within 30%..150%"
          f" of the CPU time its task threads used ({cpu_s[0]:.2f} s)")
    compute = deltas[1]["compute"]
    check(compute >= 0.3 * cpu_s[1] and compute >= 0.5 * sum(deltas[1].values()),
          f"the skewed aggregation stage is mostly compute ({compute:.2f} s of "
          f"{sum(deltas[1].values()):.2f} s sampled, {cpu_s[1]:.2f} s CPU)")
    check(sum(deltas[2].values()) > 0,
          f"the writing stage has sampled task time ({sum(deltas[2].values()):.2f} s)")
    total = sum(sum(d.values()) for d in deltas.values())
    check(total <= 1.5 * sum(cpu_s.values()) + 0.2,
          f"task time sums to at most the CPU time used ({total:.2f} s <= 1.5 x "
          f"{sum(cpu_s.values()):.2f} s): nothing is counted twice")

    # What the executors sent: every plugin message the dispatcher handed over was accepted.
    accepted = prometheus.scalar('sparkprof_driver_batches_total{outcome="accepted"}', final_ms)
    check(accepted == result["plugin_messages"],
          f"batches accepted by the driver ({accepted}) = plugin messages carried over the "
          f"loopback link ({result['plugin_messages']})")
    invalid = prometheus.query('sparkprof_driver_batches_total{outcome!="accepted"} > 0', final_ms)
    check(not invalid, f"no batch was dropped: {invalid}")
    reporting = prometheus.scalar("spark_agent_reporting_executors", final_ms)
    check(reporting == EXECUTORS, f"{EXECUTORS} executors reported agent data ({reporting})")
    samples = prometheus.scalar("spark_agent_samples_total", final_ms)
    check(samples is not None and samples > 50, f"agent samples summed over executors: {samples}")
    info = prometheus.query(
        f'spark_application_info{{application_id="{app}",'
        f'application_name="{result["application_name"]}"}}', final_ms)
    check(len(info) == 1 and info[0][1] == 1.0, f"spark_application_info names the app: {info}")


def check_work(result):
    """The harness really ran what it claims: task attempts, skew, files."""
    stages = {s["stage_id"]: s for s in result["stages"]}
    check(not result["problems"], f"the harness saw no problem: {result['problems']}")
    check(result["listeners"] >= 1, f"the driver plugin registered a listener ({result['listeners']})")
    executors_used = {t["executor_id"] for s in stages.values() for t in s["tasks"]}
    check(len(executors_used) == EXECUTORS, f"tasks ran on {EXECUTORS} executors: {executors_used}")
    skewed = stages[1]["tasks"]
    big = max(skewed, key=lambda t: t["records_read"])
    others = [t["records_read"] for t in skewed if t is not big]
    check(big["records_read"] >= 9 * max(others),
          f"the skewed stage has one partition ~10x the others ({big['records_read']} vs "
          f"{max(others)} records)")
    writes = stages[2]["tasks"]
    failed = [t for t in writes if not t["success"]]
    check(len(failed) == 1 and any(t["index"] == failed[0]["index"] and t["attempt"] == 1
                                   and t["success"] for t in writes),
          "the writing stage had one failed attempt (onTaskFailed) that was retried")
    output_dir = stages[2]["output_dir"]
    files = os.listdir(output_dir) if os.path.isdir(output_dir) else []
    written = sum(t["bytes_written"] for t in writes if t["success"])
    on_disk = sum(os.path.getsize(os.path.join(output_dir, f)) for f in files)
    check(len(files) > 0 and on_disk == written,
          f"the writing stage left its files on disk ({len(files)} files, {on_disk} bytes, "
          f"reported {written})")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--java", default="")
    parser.add_argument("--agent", default="")
    parser.add_argument("--classpath", default="")
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--sparkprof", default="")
    parser.add_argument("--prometheus", default=os.environ.get("SPARKPROF_PROMETHEUS", ""))
    args = parser.parse_args()

    java = args.java or shutil.which("java") or ""
    prometheus_binary = args.prometheus or shutil.which("prometheus") or ""
    if not java or not os.access(java, os.X_OK) or not args.agent or not args.classpath:
        print("SKIPPED: java, the agent or the plugin jar is missing")
        return SKIPPED
    if not prometheus_binary or not os.access(prometheus_binary, os.X_OK):
        print("SKIPPED: prometheus is not installed (scripts/install-deps.sh --browser)")
        return SKIPPED

    work = os.path.abspath(args.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    agent_option = f"-agentpath:{args.agent}=interval=5ms"
    driver_log_path = os.path.join(work, "driver.log")
    driver_log = open(driver_log_path, "w")
    started = time.monotonic()
    driver = subprocess.Popen(
        [java, agent_option, "-Xmx512m", "-XX:+UseSerialGC", "-cp", args.classpath, "E2eDriver",
         work, agent_option, str(EXECUTORS), str(CORES_PER_EXECUTOR), str(EXECUTOR_DELAY_MS)],
        stdout=driver_log, stderr=subprocess.STDOUT, start_new_session=True,
        preexec_fn=die_with_parent)
    driver_log.close()
    prometheus = None
    try:
        ready_path = os.path.join(work, "driver-ready.json")
        wait_for("driver ready", lambda: os.path.exists(ready_path), 60, 0.05, driver)
        with open(ready_path) as f:
            metrics_port = json.load(f)["metrics_port"]
        check(metrics_port > 0, f"the driver aggregator serves metrics on port {metrics_port}")

        prometheus = Prometheus(prometheus_binary, work, metrics_port)
        prometheus.start("sparkprof-driver")
        wait_for("first scrape of the driver",
                 lambda: prometheus.scalar('up{job="sparkprof-driver"}') == 1.0, 30, 0.2)
        go = os.path.join(work, "go")
        with open(go + ".tmp", "w") as f:
            f.write(prometheus.url + "\n")
        os.rename(go + ".tmp", go)

        try:
            code = driver.wait(timeout=150)
        except subprocess.TimeoutExpired:
            check(False, "the driver finished within 150 s")
            return 1
        if not check(code == 0, f"the driver harness exited with {code}"):
            dump_logs(work, prometheus)
            return 1
        with open(os.path.join(work, "result.json")) as f:
            result = json.load(f)
        print(f"harness: application {result['application_id']}, first executor "
              f"{result['first_executor_added_ms'] - result['application_start_ms']} ms after "
              f"the start, {result['plugin_messages']} plugin messages "
              f"({result['plugin_message_bytes']} bytes), {result['listener_events']} listener "
              f"events, aggregator {result['aggregator_status']}")

        check_work(result)
        check_prometheus(prometheus, result)
        app_dir = os.path.join(work, "sparkprof", result["application_id"])
        check_flame_graphs(result, app_dir)
        check_report(result, app_dir)
        check_saved_profile(app_dir, args.sparkprof)
        for name in sorted(os.listdir(work)):
            if name.startswith("hs_err") or (name.endswith(".log") and
                                             "SIGSEGV" in read_text(os.path.join(work, name))):
                check(False, f"a JVM crashed: {name}")
    except (RuntimeError, OSError, ValueError, KeyError) as e:
        check(False, f"the e2e run broke off: {e}")
        dump_logs(work, prometheus)
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
            driver.wait()
        if prometheus is not None:
            prometheus.stop()
    print(f"e2e took {time.monotonic() - started:.1f} s")
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
