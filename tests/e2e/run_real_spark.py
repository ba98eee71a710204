#!/usr/bin/env python3
"""sparkprof inside a real Spark: a standalone cluster, the demo application, Prometheus, and
Spark's own History Server as the reference.

Test mode (default): starts a Master on loopback, a Prometheus scraping the driver's metrics
port, submits the demo application (demo/) with the agent and the plugin exactly as
docs/quickstart-spark.md says, starts two Workers a few seconds after the Master registered the
application (so it really waits for executors), and after the application starts a History
Server over the event log Spark wrote. Then checks Prometheus's answers, the flame graphs, the
saved profile and the live end-of-application report against Spark's REST API and against
`sparkprof analyze` of Spark's event log. Prints "ok"/"FAIL" lines.

Demo mode (--demo --out DIR): the same run without the checks or Prometheus; copies the live
report, the stage flame graphs, the saved profile, a /metrics snapshot, Spark's event log and
`sparkprof analyze` of it into DIR.

Exit codes: 0 passed (or demo written), 1 a check failed, 77 skipped (no Spark home, java or
prometheus).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from demo_run import JOB_KINDS, SparkprofFiles, run_demo  # noqa: E402
from e2e_checks import check, failures  # noqa: E402
from prometheus_server import Prometheus  # noqa: E402
from spark_cluster import (HistoryRest, SparkCluster, copy_tree, driver_metrics_url,  # noqa: E402
                           free_port, read_tail, rest_time_ms)
from sparkprof_outputs import (category_times, flame_graph_data, frames_with_category,  # noqa: E402
                               read_profile_batches)

SKIPPED = 77
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORKERS = 2
CORES_PER_WORKER = 1
WORKER_MEMORY = "1g"
# The Workers start this long after the Master registered the application: the resource wait.
WORKER_DELAY_S = 4.0
SCRAPE_JOB = "sparkprof-driver"
CATEGORIES = ["compute", "serialization", "s3a_write", "s3a_read", "shuffle_write",
              "shuffle_read", "spill", "file_io", "gc", "other", "jit", "vm", "python_wait",
              "shuffle_fetch_wait", "io_wait", "lock_wait", "sleep", "cpu_starved",
              "off_cpu_other", "python"]
# Time off CPU (agent mode cpu+wall, the default: common/category.h IsOffCpu). Checks of what the
# code did judge the on-CPU categories; a runnable thread's run delay (cpu_starved) says how busy
# the host was, not what the code does.
OFF_CPU = {"python_wait", "shuffle_fetch_wait", "io_wait", "lock_wait", "sleep", "cpu_starved",
           "off_cpu_other"}
# Live report vs `sparkprof analyze` of the event log: the only keys allowed to differ. The live
# feed is not a file: its input section names the application instead of a path ("layout":
# "live", codec "live"), and has no on-disk or compressed size; and only the driver's report has
# "driver" (the live feed's batches by outcome, schema_minor 4). Everything else (counts, lines
# and events read, every figure, every finding) must be equal.
# Both read the same saved profile (the driver its own profile.sparkprof, `analyze --profile`
# the driver's output directory), named by the path each was given.
REPORT_EXCEPTIONS = {
    "/input/name", "/input/layout", "/input/files[]/file", "/input/files[]/codec",
    "/input/files[]/bytes", "/input/files[]/decompressed_bytes", "/driver", "/profile/source",
}

# The driver plugin's log lines that say something went wrong (spark-plugin/src/main/java).
# sparkprof's lines hold "sparkprof: ": the agent's start them, the plugin's come through Spark's
# logger ("26/11/29 06:30:00 WARN sparkprof: ...").
DRIVER_PROBLEMS = ["plugin disabled", "profiling off", "cannot load", "no metrics or flame graphs",
                   "was not recorded", "not written", "further drops are counted",
                   "outputs stay in", "cannot write"]

class SparkFacts:
    """What Spark's History Server says about the application (REST API /api/v1)."""

    def __init__(self, rest):
        app = rest.wait_complete()
        attempt = app["attempts"][0]
        self.start_ms = rest_time_ms(attempt["startTime"])
        self.end_ms = rest_time_ms(attempt["endTime"])
        self.jobs = sorted(rest.get("jobs"), key=lambda j: j["jobId"])
        self.stages = sorted(rest.get("stages"), key=lambda s: (s["stageId"], s["attemptId"]))
        self.executors = [e for e in rest.get("allexecutors") if e["id"] != "driver"]
        self.tasks = {}
        for stage in self.stages:
            if stage["status"] != "SKIPPED":
                key = (stage["stageId"], stage["attemptId"])
                self.tasks[key] = rest.tasks(*key)
        self.kind_of_job = {}
        self.stages_of_kind = {kind: set() for kind in JOB_KINDS}
        for job in self.jobs:
            kind = (job.get("description") or "").split(":")[0]
            if kind in self.stages_of_kind:
                self.kind_of_job[job["jobId"]] = kind
                self.stages_of_kind[kind].update(job["stageIds"])
        run = [s for s in self.stages if s["status"] != "SKIPPED"]
        self.ran = {kind: sorted(s["stageId"] for s in run if s["stageId"] in ids)
                    for kind, ids in self.stages_of_kind.items()}
        added = [rest_time_ms(e["addTime"]) for e in self.executors]
        self.first_executor_ms = min(added) if added else None

    def stage(self, stage_id, attempt=0):
        return next(s for s in self.stages if s["stageId"] == stage_id and s["attemptId"] == attempt)

    def first_stage(self, kind):
        return self.ran[kind][0] if self.ran[kind] else None

    def last_stage(self, kind):
        return self.ran[kind][-1] if self.ran[kind] else None

    def durations_ms(self, stage_id, attempt=0):
        return sorted(t["duration"] for t in self.tasks.get((stage_id, attempt), [])
                      if t["status"] == "SUCCESS")


def nearest_rank_median(values):
    return values[(len(values) + 1) // 2 - 1]


def skew_ratio(durations):
    if len(durations) < 5 or nearest_rank_median(durations) <= 0:
        return 0.0
    return durations[-1] / nearest_rank_median(durations)


# ---- the run itself -------------------------------------------------------------------------

def check_run(run, facts, cluster):
    check(run.exit_code == 0, f"spark-submit of the demo exited with {run.exit_code}")
    driver_log = read_tail(run.driver_log, 50_000_000)
    url = driver_metrics_url(run.driver_log)
    check(url is not None and url.endswith(f":{run.metrics_url.split(':')[-1]}"),
          f"the driver log says the aggregator started, metrics at {url}")
    problems = [line for line in driver_log.splitlines()
                if "sparkprof: " in line and any(p in line for p in DRIVER_PROBLEMS)]
    check(not problems, f"the driver log has no sparkprof problem line: {problems[:3]}")
    executor_logs = []
    for worker in cluster.workers():
        work = os.path.join(cluster.work_dir, worker.name, run.app_id)
        if os.path.isdir(work):
            executor_logs += [os.path.join(work, e, "stderr") for e in sorted(os.listdir(work))]
    profiling = [p for p in executor_logs if "sparkprof: profiling:" in read_tail(p, 50_000_000)]
    check(len(executor_logs) == WORKERS and len(profiling) == WORKERS,
          f"every executor loaded the agent ('sparkprof: profiling:' in {len(profiling)} of "
          f"{len(executor_logs)} executor logs)")
    late = [p for p in executor_logs if "started in the running JVM" in read_tail(p, 50_000_000)]
    expected_late = len(executor_logs) if run.plugin_only else 0
    check(len(late) == expected_late,
          f"{len(late)} of {len(executor_logs)} executors had the plugin start the agent "
          f"(expected {expected_late}: {'plugin-only' if run.plugin_only else '-agentpath'})")
    check_executor_logs(executor_logs, cluster.work_dir)
    check_demo_ran(facts, WORKERS, CORES_PER_WORKER)
    wait_ms = facts.first_executor_ms - facts.start_ms
    check(wait_ms >= WORKER_DELAY_S * 1000,
          f"the application waited {wait_ms} ms for its first executor (Workers started "
          f"{WORKER_DELAY_S} s after it registered)")


def check_executor_logs(executor_logs, work_dir):
    """No executor says profiling is off or a send failed; no JVM below work_dir crashed."""
    broken = [line for p in executor_logs for line in read_tail(p, 50_000_000).splitlines()
              if "sparkprof: " in line and any(
                  problem in line for problem in ("profiling off", "plugin disabled",
                                                  "could not send", "could not pass"))]
    check(not broken, f"no executor log reports profiling off, the plugin disabled or a failed "
                      f"send: {broken}")
    crashes = [os.path.join(d, n) for d, _, names in os.walk(work_dir) for n in names
               if n.startswith("hs_err")]
    check(not crashes, f"no JVM crashed: {crashes}")


def check_demo_ran(facts, executors, cores):
    """Spark (REST) ran every kind of the demo's jobs on the executors asked for, and the planted
    spill and skew happened."""
    kinds = {kind for kind in facts.kind_of_job.values()}
    failed = [j["jobId"] for j in facts.jobs if j["status"] != "SUCCEEDED"]
    check(kinds == set(JOB_KINDS) and not failed,
          f"Spark ran the demo's {len(JOB_KINDS)} kinds of jobs ({len(facts.jobs)} jobs, "
          f"failed: {failed}): " + ", ".join(f"{k} stages {facts.ran[k]}" for k in JOB_KINDS))
    check(len(facts.executors) == executors
          and all(e["totalCores"] == cores for e in facts.executors),
          f"{executors} executors with {cores} core(s) each: "
          f"{[(e['id'], e['totalCores']) for e in facts.executors]}")
    spill = facts.stage(facts.last_stage("spill"))
    check(spill["memoryBytesSpilled"] > 0 and spill["diskBytesSpilled"] > 0,
          f"the spill stage {spill['stageId']} spilled (REST: {spill['memoryBytesSpilled']} "
          f"bytes in memory, {spill['diskBytesSpilled']} on disk)")
    skewed = facts.durations_ms(facts.last_stage("skew"))
    check(skew_ratio(skewed) >= 5,
          f"the skew stage {facts.last_stage('skew')} is skewed: longest task {skewed[-1]} ms, "
          f"median {nearest_rank_median(skewed)} ms (REST)")


# ---- Prometheus ---------------------------------------------------------------------------

class AppSeries:
    """Queries of one application's series (the endpoint also serves series without the
    application labels until the ApplicationStart event arrives); after the end, the last
    scraped values (the driver's endpoint is gone then)."""

    def __init__(self, prometheus, app_id, end_s):
        self.prometheus = prometheus
        self.app_id = app_id
        self.end_s = end_s

    def selector(self, metric, labels=""):
        return f'{metric}{{application_id="{self.app_id}"{"," + labels if labels else ""}}}'

    def last(self, metric, labels=""):
        return self.prometheus.scalar(f"last_over_time({self.selector(metric, labels)}[1h])",
                                      self.end_s)

    def max(self, metric):
        return self.prometheus.scalar(f"max_over_time({self.selector(metric)}[1h])", self.end_s)

    def last_by(self, metric, label):
        return {labels.get(label): value for labels, value in self.prometheus.query(
            f"last_over_time({self.selector(metric)}[1h])", self.end_s)}

    def at(self, metric, at_s, labels=""):
        return self.prometheus.scalar(self.selector(metric, labels), at_s)


def scrape_times(prometheus, end_s):
    """Epoch seconds of the scrapes that reached the driver."""
    return [t for t, v in prometheus.range_values(f'up{{job="{SCRAPE_JOB}"}}[1h]', end_s) if v == 1]


def check_prometheus(prometheus, run, facts):
    end_s = time.time()
    app = run.app_id
    up = scrape_times(prometheus, end_s)
    check(len(up) >= 10, f"Prometheus scraped the driver's endpoint ({len(up)} successful scrapes)")
    series = AppSeries(prometheus, app, end_s)
    info = prometheus.query(f"last_over_time({series.selector('spark_application_info')}[1h])",
                            end_s)
    check(len(info) == 1 and info[0][1] == 1 and info[0][0].get("application_name") == "sparkprof-demo",
          f"spark_application_info names the application: {[l for l, _ in info]}")

    # Resource wait: ApplicationStart to the first ExecutorAdded, as Spark's REST API has them.
    expected_wait_s = (facts.first_executor_ms - facts.start_ms) / 1000
    ratios = series.last_by("spark_phase_breakdown_ratio", "phase")
    wall = series.last("spark_phase_wall_seconds")
    check(abs(sum(ratios.values()) - 1) <= 0.01,
          f"spark_phase_breakdown_ratio sums to 1 over its phases: {ratios}")
    wait_phase = ratios.get("resource_wait", 0) * (wall or 0)
    check(abs(wait_phase - expected_wait_s) <= 0.05,
          f"phase resource_wait x spark_phase_wall_seconds = {wait_phase:.3f} s = REST first "
          f"executor addTime - application startTime = {expected_wait_s:.3f} s")
    resource_wait = series.last("spark_resource_wait_seconds")
    check(resource_wait is not None and expected_wait_s - 0.05 <= resource_wait <= (wall or 0),
          f"spark_resource_wait_seconds = {resource_wait} s: the wait for the first executor "
          f"({expected_wait_s:.3f} s) plus time tasks waited for a free slot, within the wall "
          f"({wall} s)")
    duration_s = (facts.end_ms - facts.start_ms) / 1000
    check(wall is not None and 0.8 * duration_s <= wall <= duration_s + 0.01,
          f"spark_phase_wall_seconds at the last scrape = {wall} s, within the application's "
          f"{duration_s:.3f} s (REST)")

    executors = series.max("spark_executors")
    slots = series.max("spark_task_slots")
    cores = sum(e["totalCores"] for e in facts.executors)
    check(executors == len(facts.executors) and slots == cores,
          f"spark_executors = {executors}, spark_task_slots = {slots} (REST: "
          f"{len(facts.executors)} executors, {cores} cores)")

    spilled = series.last_by("spark_spill_bytes_total", "medium")
    memory = sum(s["memoryBytesSpilled"] for s in facts.stages)
    disk = sum(s["diskBytesSpilled"] for s in facts.stages)
    check(spilled.get("memory") == memory and spilled.get("disk") == disk,
          f"spark_spill_bytes_total = {spilled} = REST memoryBytesSpilled {memory}, "
          f"diskBytesSpilled {disk}")

    # Skew: once the skew stage completed, the worst current stage is that one (or an earlier one
    # completed within 60 s, if worse) until a later stage beats it: some scrape in the 10 s after
    # its completion shows that value, whatever the listener's lag and the refresh interval.
    skew_stage = facts.stage(facts.last_stage("skew"))
    completed_s = rest_time_ms(skew_stage["completionTime"]) / 1000
    current = [s for s in facts.stages if s["status"] == "COMPLETE"
               and completed_s - 60 <= rest_time_ms(s["completionTime"]) / 1000 <= completed_s]
    expected = max(skew_ratio(facts.durations_ms(s["stageId"], s["attemptId"])) for s in current)
    durations = facts.durations_ms(skew_stage["stageId"])
    scraped = [v for _, v in prometheus.range_values(
        f"{series.selector('spark_stage_skew_ratio')}[10s]", completed_s + 10)]
    check(any(abs(v - expected) <= 0.01 * expected for v in scraped),
          f"spark_stage_skew_ratio in the 10 s after the skew stage {skew_stage['stageId']} "
          f"completed reaches {expected:.3f} (REST: longest {durations[-1]} ms / median "
          f"{nearest_rank_median(durations)} ms = {skew_ratio(durations):.3f}; worst stage "
          f"completed within 60 s before it {expected:.3f}); scraped: "
          f"{sorted(set(round(v, 3) for v in scraped))}")

    check_task_durations(series, facts, up)

    categories = series.last_by("spark_task_time_seconds_total", "category")
    check(set(CATEGORIES) <= set(categories),
          f"every category series is in Prometheus (missing: {set(CATEGORIES) - set(categories)})")
    shown = ", ".join(f"{c} {v:.2f}" for c, v in sorted(categories.items()) if v > 0.005)
    check(categories.get("serialization", 0) > 0,
          f"spark_task_time_seconds_total{{category=\"serialization\"}} > 0 (by category, s: {shown})")
    pauses = series.last("spark_gc_pause_seconds_count")
    paused_s = series.last("spark_gc_pause_seconds_sum")
    gc_ms = sum(s["jvmGcTime"] for s in facts.stages)
    check(pauses and pauses > 0 and paused_s > 0,
          f"GC pauses reach Prometheus: spark_gc_pause_seconds {pauses} pauses, {paused_s} s "
          f"(REST jvmGcTime of the tasks: {gc_ms} ms)")

    # Agent and driver health at defaults: nothing dropped anywhere.
    batches = series.last_by("sparkprof_driver_batches_total", "outcome")
    check(batches.get("accepted", 0) > 0 and all(v == 0 for k, v in batches.items()
                                                if k != "accepted"),
          f"sparkprof_driver_batches_total: every batch accepted {batches}")
    ring = series.last("spark_agent_samples_dropped_total")
    capped = series.last("spark_agent_stacks_dropped_total")
    folded = series.last("sparkprof_driver_stacks_folded_total")
    samples = series.last("spark_agent_samples_total")
    walks = series.last("spark_agent_walk_failures_total")
    # A ring drops (and counts) a sample only when the drain thread got no CPU for 32 sampling
    # intervals (320 ms at defaults): on a 2-vCPU machine running five JVMs that happens now and
    # then, so a few counted drops (at most 0.1% of samples) pass -- 1% when the host ran more
    # than twice as many runnable threads as CPUs meanwhile (a CI run's parallel tests: the
    # scheduler, not the agent, decides then; a drain that does not run drops far more). The
    # stack and tree caps must not bite at all.
    overloaded = os.getloadavg()[0] > 2 * (os.cpu_count() or 1)
    allowed = 0.01 if overloaded else 0.001
    check(samples and samples > 100 and (ring or 0) <= allowed * samples and capped == 0
          and folded == 0,
          f"agents: {samples} samples, ring drops {ring} (at most {100 * allowed:g}%: the drain "
          f"thread starved of CPU; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} CPUs), stack cap {capped}, driver tree cap {folded}; "
          f"walk failures {walks}")
    reporting = series.max("spark_agent_reporting_executors")
    check(reporting is not None and reporting >= len(facts.executors),
          f"spark_agent_reporting_executors = {reporting} (REST: {len(facts.executors)} executors)")
    events = series.last_by("sparkprof_driver_events_total", "outcome")
    check(events.get("accepted", 0) > 0 and not events.get("rejected"),
          f"sparkprof_driver_events_total: no listener event rejected {events}")
    return categories


def check_task_durations(series, facts, up):
    """spark_task_duration_seconds at a quiet scrape: the middle of the longest time without a
    stage completion, so no completion is near the instant, whatever the listener's lag."""
    completions = sorted(rest_time_ms(s["completionTime"]) / 1000 for s in facts.stages
                         if s["status"] == "COMPLETE")
    gaps = [(b - a, (a + b) / 2) for a, b in zip(completions, completions[1:])]
    length, middle = max(gaps)
    # The first scrape from the middle on: its figures (refreshed at most one refresh interval
    # before it) hold every completion before the gap and none after it.
    at_s = min((t for t in up if t >= middle), default=None)
    if not check(at_s is not None and length >= 6 and at_s - middle < 1.5,
                 f"a quiet scrape for the task duration histograms ({length:.1f} s without a "
                 f"stage completion around {middle:.1f})"):
        return
    write_stage = facts.last_stage("parquet-write")
    expected = {"compute": [], "write": []}
    for stage in facts.stages:
        if stage["status"] == "COMPLETE" and rest_time_ms(stage["completionTime"]) / 1000 < at_s:
            kind = "write" if stage["stageId"] == write_stage else "compute"
            expected[kind] += facts.durations_ms(stage["stageId"], stage["attemptId"])
    for kind, durations in expected.items():
        count = series.at("spark_task_duration_seconds_count", at_s, f'stage_kind="{kind}"')
        total = series.at("spark_task_duration_seconds_sum", at_s, f'stage_kind="{kind}"')
        check(count == len(durations) and total is not None
              and abs(total - sum(durations) / 1000) <= 0.001 * len(durations) + 0.001,
              f"spark_task_duration_seconds{{stage_kind=\"{kind}\"}} at the quiet scrape: {count} "
              f"tasks, {total} s = REST: {len(durations)} successful tasks of the stages "
              f"completed before it, {sum(durations) / 1000:.3f} s")


# ---- flame graphs and the saved profile ---------------------------------------------------

def check_flame_graphs(run, facts):
    app_dir = run.app_output_dir
    complete = [s for s in facts.stages if s["status"] == "COMPLETE"]
    # CPU-time sampling (10 ms) may take no sample of a stage with little CPU time (the demo's
    # `first` stage: one task of ~70 ms, mostly fetch waits): the driver then writes no graph
    # for it. A stage with 0.5 s of executor CPU or more has ~50 samples: its graph must exist.
    sampled = [s for s in complete if s["executorCpuTime"] / 1e9 >= 0.5]
    graphs = {(s["stageId"], s["attemptId"]): f"stage-{s['stageId']}-attempt-{s['attemptId']}.html"
              for s in complete}
    written = {key for key, name in graphs.items()
               if os.path.exists(os.path.join(app_dir, name))}
    missing = [graphs[(s["stageId"], s["attemptId"])] for s in sampled
               if (s["stageId"], s["attemptId"]) not in written]
    check(sampled and not missing,
          f"a flame graph for each of the {len(sampled)} completed stages with >= 0.5 s of "
          f"executor CPU in {app_dir} (missing: {missing}; {len(written)} of all {len(complete)} "
          f"completed stages have one)")

    def data_of(kind, which):
        stage = facts.first_stage(kind) if which == "first" else facts.last_stage(kind)
        path = os.path.join(app_dir, f"stage-{stage}-attempt-0.html")
        data = flame_graph_data(path) if os.path.exists(path) else None
        if data is None:
            check(False, f"the {kind} stage {stage}'s flame graph has its profile data: {path}")
            return stage, None, {}
        times = category_times(data)
        on_cpu = {c: t for c, t in times.items() if c not in OFF_CPU}
        whole = sum(on_cpu.values())
        shares = {c: round(t / whole, 3) for c, t in on_cpu.items() if t} if whole else {}
        print(f"     {kind} stage {stage} flame graph: {sum(times.values()) / 1e9:.2f} s sampled, "
              f"{whole / 1e9:.2f} s on CPU: {shares}")
        return stage, data, shares

    stage, data, shares = data_of("serialization", "first")
    if data:
        # A frame's colour is the category of most of its time: serialization, or a wait (the
        # thread runnable without a CPU on a busy host) -- never another on-CPU category.
        oos = frames_with_category(data, "java.io.ObjectOutputStream")
        serialized = [f for f in oos if f[1] == "serialization"]
        other = [f for f in oos if f[1] != "serialization" and f[1] not in OFF_CPU]
        check(serialized and not other,
              f"serialization stage {stage}: every ObjectOutputStream frame has the serialization "
              f"category or an off-CPU one ({len(serialized)} serialization of {len(oos)}; "
              f"others: {other[:3]})")
        check(shares.get("serialization", 0) >= 0.5,
              f"serialization stage {stage}: serialization is the main on-CPU category "
              f"({shares.get('serialization', 0):.0%} of the sampled time on CPU)")
    stage, data, shares = data_of("skew", "last")
    if data:
        score = frames_with_category(data, "SparkProfDemo.score")
        # (On a busy host a frame's time can be mostly run delay: its colour is then a wait.)
        check(score and all(f[1] == "compute" or f[1] in OFF_CPU for f in score),
              f"skew stage {stage}: the scoring frames are compute (or waiting for a CPU): "
              f"{score[:2]}")
    stage, data, shares = data_of("spill", "last")
    if data:
        check(shares.get("spill", 0) > 0, f"spill stage {stage}: the spill category has time")
    stage, data, shares = data_of("parquet-write", "last")
    if data:
        check(shares.get("file_io", 0) > 0,
              f"parquet-write stage {stage}: the file_io category has time")
    data_of("shuffle", "first")
    data_of("gc-churn", "last")


def check_profile(run, facts, args):
    profile = os.path.join(run.app_output_dir, "profile.sparkprof")
    if not check(os.path.exists(profile) and os.path.getsize(profile) > 0,
                 f"the saved profile is written: {profile}"):
        return
    stage = facts.first_stage("serialization")
    command = [args.sparkprof, "flamegraph", profile, "--stage", str(stage), "--category",
               "serialization", "--format", "collapsed", "-o", "-"]
    flame = subprocess.run(command, capture_output=True, text=True, timeout=120)
    stacks = [line for line in flame.stdout.splitlines() if "ObjectOutputStream" in line]
    check(flame.returncode == 0 and stacks,
          f"sparkprof flamegraph --stage {stage} --category serialization reads "
          f"{len(stacks)} ObjectOutputStream stacks from the saved profile "
          f"(exit {flame.returncode}) {flame.stderr.strip()[:300]}")

    try:
        batches = read_profile_batches(profile, args.flatc, args.profile_schema)
    except (OSError, ValueError, subprocess.SubprocessError) as e:
        check(False, f"the saved profile decodes with flatc: {e}")
        return
    tasks = {}
    for (stage_id, attempt), listed in facts.tasks.items():
        for task in listed:
            tasks[task["taskId"]] = (stage_id, attempt, task["executorId"], task["duration"])
    tagged, untagged, wrong, sampled = 0, 0, [], set()
    by_stage_category = {}
    for batch in batches:
        for sample in batch.get("samples", []):
            tid = sample["task_attempt_id"]
            if tid < 0:
                untagged += sample["samples"]
                continue
            tagged += sample["samples"]
            sampled.add(tid)
            known = tasks.get(tid)
            if known is None or known[:3] != (sample["stage_id"], sample["stage_attempt"],
                                              batch["executor_id"]):
                wrong.append((batch["executor_id"], sample["stage_id"], sample["stage_attempt"],
                              tid, known))
        for entry in batch.get("task_times", []):
            if entry["task_attempt_id"] >= 0:
                key = (entry["stage_id"], entry["category"])
                by_stage_category[key] = by_stage_category.get(key, 0) + entry["time_ns"] / 1e9
    executors = sorted({b["executor_id"] for b in batches})
    check(tagged > 0 and not wrong,
          f"every tagged sample names a task of Spark's (task id, stage, attempt and executor as "
          f"in REST): {tagged} tagged samples, {untagged} outside tasks, {len(batches)} batches "
          f"from {executors}; wrong: {wrong[:5]}")
    long_tasks = [tid for tid, t in tasks.items() if t[3] >= 300]
    covered = [tid for tid in long_tasks if tid in sampled]
    check(len(covered) >= 0.8 * len(long_tasks),
          f"{len(covered)} of the {len(long_tasks)} tasks that ran >= 300 ms have samples")
    # A stage's sampled on-CPU task time follows its task threads' CPU time, which Spark measures
    # too (executorCpuTime); the gc category (pause overlap) and the off-CPU ones are not CPU.
    off = []
    for stage in facts.stages:
        cpu_s = stage["executorCpuTime"] / 1e9
        if stage["status"] == "COMPLETE" and cpu_s >= 0.5:
            sampled_s = sum(t for (s, c), t in by_stage_category.items()
                            if s == stage["stageId"] and c != "gc" and c not in OFF_CPU)
            if not 0.5 <= sampled_s / cpu_s <= 2.0:
                off.append((stage["stageId"], round(sampled_s, 2), round(cpu_s, 2)))
    last_batch_ms = {}
    for batch in batches:
        executor = batch["executor_id"]
        last_batch_ms[executor] = max(last_batch_ms.get(executor, 0),
                                      batch["end_epoch_ns"] // 1_000_000)
    before_end = {e: facts.end_ms - t for e, t in sorted(last_batch_ms.items())}
    check(not off, f"every stage's sampled on-CPU task time is 50%..200% of its tasks' executor CPU "
                   f"time (REST executorCpuTime); outside, as (stage, sampled s, CPU s): {off}; "
                   f"each executor's last batch received ends this many ms before "
                   f"ApplicationEnd: {before_end}")
    gc_stage = facts.last_stage("gc-churn")
    gc_s = by_stage_category.get((gc_stage, "gc"), 0)
    pauses = sum(len(b.get("gc_pauses", [])) for b in batches)
    check(pauses > 0 and gc_s > 0,
          f"GC pauses in the saved profile: {pauses} pauses; gc-churn stage {gc_stage}: "
          f"{gc_s:.3f} s of task time in the gc category")
    stage = facts.first_stage("serialization")
    times = {c: t for (s, c), t in by_stage_category.items() if s == stage}
    whole = sum(t for c, t in times.items() if c not in OFF_CPU)
    check(whole > 0 and times.get("serialization", 0) >= 0.5 * whole,
          f"serialization stage {stage}: task time by category from the batches "
          f"{ {c: round(t, 2) for c, t in times.items()} }: serialization is at least half of "
          f"the time on CPU")


# ---- the report ---------------------------------------------------------------------------

def differences(live, logged, path=""):
    """(path, live value, logged value) of every leaf that differs; list indices as []."""
    found = []
    if isinstance(live, dict) and isinstance(logged, dict):
        for key in sorted(set(live) | set(logged)):
            found += differences(live.get(key, "<absent>"), logged.get(key, "<absent>"),
                                 f"{path}/{key}")
    elif isinstance(live, list) and isinstance(logged, list):
        if len(live) != len(logged):
            found.append((path + "#length", len(live), len(logged)))
        for a, b in zip(live, logged):
            found += differences(a, b, path + "[]")
    elif live != logged:
        found.append((path, live, logged))
    return found


def analyze(args, event_log, out_path, format_name="json", profile=None):
    command = [args.sparkprof, "analyze", event_log, "--format", format_name, "-o", out_path, "-q"]
    if profile:
        command += ["--profile", profile]
    run = subprocess.run(command, capture_output=True, text=True, timeout=300)
    return run.returncode, run.stderr


def check_report(run, facts, args):
    app_dir = run.app_output_dir
    for name in ("report.txt", "report.md", "report.html"):
        check(os.path.exists(os.path.join(app_dir, name)), f"the live {name} is written")
    live_path = os.path.join(app_dir, "report.json")
    if not check(os.path.exists(live_path), f"the live report.json is written: {live_path}"):
        return
    logged_path = os.path.join(run.run_dir, "eventlog-report.json")
    profile = os.path.join(app_dir, "profile.sparkprof")
    code, errors = analyze(args, run.event_log, logged_path,
                           profile=profile if os.path.exists(profile) else None)
    if not check(code == 0, f"sparkprof analyze {run.event_log} exited {code} {errors[:300]}"):
        return
    with open(live_path) as f:
        live = json.load(f)
    with open(logged_path) as f:
        logged = json.load(f)

    found = differences(live, logged)
    unexpected = [d for d in found if d[0] not in REPORT_EXCEPTIONS]
    allowed = sorted({d[0] for d in found if d[0] in REPORT_EXCEPTIONS})
    shown = "; ".join(f"{p}: live {json.dumps(a)[:120]} vs log {json.dumps(b)[:120]}"
                      for p, a, b in unexpected[:12])
    check(not unexpected,
          f"the live report.json equals sparkprof analyze of Spark's event log, field by field "
          f"(allowed to differ: {allowed}); {len(unexpected)} other differences: {shown}")

    # The engine's reading of Spark's event log against Spark's own REST API.
    counts = logged["counts"]
    ran = [s for s in facts.stages if s["status"] != "SKIPPED"]
    check(counts["jobs"] == len(facts.jobs) and counts["stage_attempts"] == len(ran),
          f"report counts: {counts['jobs']} jobs, {counts['stage_attempts']} stage attempts = "
          f"REST {len(facts.jobs)} jobs, {len(ran)} stages run ({len(facts.stages) - len(ran)} "
          f"skipped)")
    report_stages = {(s["stage_id"], s["attempt"]): s for s in logged["stages"]}
    mismatched = []
    for stage in ran:
        key = (stage["stageId"], stage["attemptId"])
        mine = report_stages.get(key)
        rest_attempts = stage["numCompleteTasks"] + stage["numFailedTasks"] + stage["numKilledTasks"]
        if (mine is None or mine["task_attempts"] != rest_attempts
                or mine["num_tasks"] != stage["numTasks"]
                or mine["totals"]["memory_bytes_spilled"] != stage["memoryBytesSpilled"]
                or mine["totals"]["disk_bytes_spilled"] != stage["diskBytesSpilled"]):
            mismatched.append((key, mine and (mine["task_attempts"], mine["num_tasks"],
                                              mine["totals"]["memory_bytes_spilled"],
                                              mine["totals"]["disk_bytes_spilled"]),
                               (rest_attempts, stage["numTasks"], stage["memoryBytesSpilled"],
                                stage["diskBytesSpilled"])))
    check(not mismatched,
          f"per stage, the report's task attempts, tasks and spill bytes = REST numCompleteTasks"
          f"+numFailedTasks+numKilledTasks, numTasks, memory/diskBytesSpilled ({len(ran)} stages;"
          f" mismatched (report, REST): {mismatched[:4]})")
    wait_ms = facts.first_executor_ms - facts.start_ms
    check(logged["application"]["start_ms"] == facts.start_ms
          and logged["application"]["end_ms"] == facts.end_ms
          and logged["phases"]["resource_wait"]["ms"] == wait_ms,
          f"report start/end {logged['application']['start_ms']}/{logged['application']['end_ms']}"
          f" and resource wait {logged['phases']['resource_wait']['ms']} ms = REST "
          f"{facts.start_ms}/{facts.end_ms}, first executor after {wait_ms} ms")

    findings = {(f["rule"], tuple(f["stage_ids"])) for f in logged["findings"]}
    # The planted Java serialization, found by the profile: the finding names the map stage and
    # the frames (ObjectOutputStream called by the demo's own deep copy, and Spark's serializer).
    serialization_stages = set(facts.ran["serialization"])
    chosen = [f for f in logged["findings"] if f["rule"] == "serialization-bound"
              and serialization_stages & set(f["stage_ids"])]
    frames = [fr["frame"] for f in chosen for fr in f.get("frames", [])]
    check(chosen and frames and logged.get("profile", {}).get("available"),
          f"the report has a serialization-bound finding with frames for the serialization "
          f"job's stages {sorted(serialization_stages)}: "
          f"{[(f['rule'], f['stage_ids'], f['title']) for f in chosen]} frames {frames[:4]} "
          f"(findings {sorted(findings)})")
    spill_stage = facts.last_stage("spill")
    check(any(rule == "spill" and spill_stage in stages for rule, stages in findings),
          f"the report has a spill finding for stage {spill_stage}: {sorted(findings)}")
    skew_stage = facts.last_stage("skew")
    longest = facts.durations_ms(skew_stage)[-1]
    if longest >= 5000:  # the data-skew rule's own floor (analyzer/diagnosis/rules/data_skew.cc)
        check(any(rule == "data-skew" and skew_stage in stages for rule, stages in findings),
              f"the report has a data-skew finding for stage {skew_stage} (longest task "
              f"{longest} ms): {sorted(findings)}")
    else:
        print(f"note: the skew stage's longest task took {longest} ms, under the data-skew rule's "
              f"5 s floor; its finding is not expected")


# ---- main -----------------------------------------------------------------------------------

def write_demo_outputs(run, args):
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):
        if name.startswith("stage-") and name.endswith(".html"):
            os.remove(os.path.join(out, name))
    if os.path.isdir(run.app_output_dir):
        for name in sorted(os.listdir(run.app_output_dir)):
            copy_tree(os.path.join(run.app_output_dir, name), os.path.join(out, name))
    with open(os.path.join(out, "metrics.txt"), "w") as f:
        f.write(run.metrics_snapshot)
    shutil.rmtree(os.path.join(out, "eventlog"), ignore_errors=True)
    copy_tree(run.event_log_dir, os.path.join(out, "eventlog"))
    status = 0
    profile = os.path.join(run.app_output_dir, "profile.sparkprof")
    for format_name, name in (("text", "eventlog-report.txt"), ("json", "eventlog-report.json"),
                              ("html", "eventlog-report.html")):
        code, errors = analyze(args, run.event_log, os.path.join(out, name), format_name,
                               profile=profile if os.path.exists(profile) else None)
        if code != 0:
            print(f"sparkprof analyze --format {format_name} exited {code}: {errors}")
            status = 1
    print(f"demo: Spark {args.version}, application {run.app_id}, {run.wall_s:.0f} s; wrote "
          f"{out}: " + " ".join(sorted(os.listdir(out))))
    return status


def add_common_arguments(parser):
    """The arguments of every demo run (this script's and run_yarn_spark.py's)."""
    parser.add_argument("--spark-home", required=True)
    parser.add_argument("--java-home", default=os.environ.get("JAVA_HOME", ""))
    parser.add_argument("--agent", required=True, help="libsparkprof.so")
    parser.add_argument("--plugin-jar", required=True)
    parser.add_argument("--demo-jar", required=True)
    parser.add_argument("--sparkprof", required=True, help="the sparkprof CLI")
    parser.add_argument("--prometheus", default=os.environ.get("SPARKPROF_PROMETHEUS", ""))
    parser.add_argument("--flatc", default=shutil.which("flatc") or "flatc")
    parser.add_argument("--profile-schema", default=os.path.join(REPO, "schema", "profile.fbs"))
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--scale", type=float, default=1.0)


def missing_prerequisite(args, need_prometheus=True):
    """None when the run can go (args.prometheus then names the binary); else the exit code,
    after saying why: 77 (skipped) without Spark, java or prometheus, 1 without a build output."""
    if not os.access(os.path.join(args.spark_home, "bin", "spark-submit"), os.X_OK):
        print(f"SKIPPED: no Spark at {args.spark_home} (scripts/install-spark.sh)")
        return SKIPPED
    java = os.path.join(args.java_home, "bin", "java") if args.java_home else shutil.which("java")
    if not java or not os.access(java, os.X_OK):
        print("SKIPPED: java is not installed")
        return SKIPPED
    args.prometheus = args.prometheus or shutil.which("prometheus") or ""
    if need_prometheus and not os.access(args.prometheus, os.X_OK):
        print("SKIPPED: prometheus is not installed (scripts/install-deps.sh --browser)")
        return SKIPPED
    for what, path in (("agent", args.agent), ("plugin jar", args.plugin_jar),
                       ("demo jar", args.demo_jar), ("sparkprof CLI", args.sparkprof)):
        if not os.path.exists(path):
            print(f"FAIL the {what} is missing: {path} (scripts/build.sh release)")
            return 1
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_arguments(parser)
    parser.add_argument("--driver-library", default="",
                        help="libsparkprof_driver.so, when it is not next to the agent")
    parser.add_argument("--plugin-only", action="store_true",
                        help="no -agentpath: the plugin starts the agent and loads the driver "
                             "library from its jar")
    parser.add_argument("--demo", action="store_true", help="write the demo outputs, no checks")
    parser.add_argument("--out", default="out")
    args = parser.parse_args()

    stop = missing_prerequisite(args, need_prometheus=not args.demo)
    if stop is not None:
        return stop

    work = os.path.abspath(args.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    cluster = SparkCluster(args.spark_home, work, args.java_home or None)
    args.version = cluster.version
    print(f"real Spark {cluster.version} at {cluster.spark_home}; work dir {work}", flush=True)
    files = SparkprofFiles(args.agent, args.plugin_jar, args.driver_library, args.plugin_only)
    print("mode: " + ("plugin-only (no -agentpath: the plugin starts the agent from its jar)"
                      if args.plugin_only else "-agentpath in the driver and the executors"),
          flush=True)
    prometheus = None
    started = time.monotonic()
    run = None
    try:
        cluster.start_master()
        metrics_port = free_port()
        if not args.demo:
            prometheus = Prometheus(args.prometheus, work)
            prometheus.start(SCRAPE_JOB, f"127.0.0.1:{metrics_port}")
        run = run_demo(cluster, args.demo_jar, files, work, True, metrics_port, args.scale,
                       start_workers=(WORKERS, CORES_PER_WORKER, WORKER_MEMORY, WORKER_DELAY_S))
        print(f"Spark {cluster.version}: application {run.app_id} ran in {run.wall_s:.1f} s "
              f"(driver CPU {run.driver_cpu_s:.1f} s, executors {run.executors_cpu_s:.1f} s); "
              f"event log {run.event_log}", flush=True)
        if args.demo:
            if run.exit_code != 0 or not run.app_id:
                print(f"demo: spark-submit exited {run.exit_code}; driver log "
                      f"{run.driver_log}:\n{read_tail(run.driver_log)}")
                return 1
            return write_demo_outputs(run, args)
        if not check(run.exit_code == 0 and run.app_id and run.event_log,
                     f"the demo application ran (exit {run.exit_code}, application "
                     f"'{run.app_id}', event log '{run.event_log}')"):
            raise RuntimeError("no application to check")
        history = cluster.start_history_server(run.event_log_dir)
        facts = SparkFacts(HistoryRest(history, run.app_id))
        check_run(run, facts, cluster)
        check_prometheus(prometheus, run, facts)
        check_flame_graphs(run, facts)
        check_profile(run, facts, args)
        check_report(run, facts, args)
    except (RuntimeError, OSError, ValueError, KeyError, IndexError, TypeError) as e:
        check(False, f"the run broke off: {type(e).__name__}: {e}")
        if run is not None:
            print(f"--- driver log ({run.driver_log})\n{read_tail(run.driver_log)}")
        print(cluster.log_tails())
    finally:
        cluster.stop()
        if prometheus is not None:
            prometheus.stop()
    print(f"Spark {cluster.version}: took {time.monotonic() - started:.0f} s; logs in {work}")
    if failures:
        print(f"Spark {cluster.version}: {len(failures)} check(s) failed")
        return 1
    print(f"Spark {cluster.version}: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
