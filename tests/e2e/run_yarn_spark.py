#!/usr/bin/env python3
"""sparkprof inside Spark on a real YARN: Hadoop's MiniYARNCluster and MiniDFSCluster, the demo
application submitted with `--master yarn` in client or cluster mode, Prometheus, and Spark's own
History Server as the reference.

Starts the mini cluster (yarn_cluster.py: one ResourceManager, one NodeManager of 4 GiB and 4
vcores with its physical-memory check on, one DataNode), a Prometheus scraping the driver's
metrics port, submits the demo (demo/) exactly as docs/quickstart-spark.md's YARN section says
(--files libsparkprof.so, --jars the plugin, -agentpath in the extraJavaOptions, HADOOP_CONF_DIR;
the event log and the staging directory on HDFS), copies Spark's event log out of HDFS and starts
a History Server over it. Then the checks of the standalone test (run_real_spark.py: Prometheus,
flame graphs, the saved profile, the live report against `sparkprof analyze` of the event log)
and the resource-wait finding's words for YARN; with spark.sparkprof.besideEventLog=true the
driver's outputs stored beside the event log on HDFS (<log name>.sparkprof/, the attempt id in
cluster mode). Prints "ok"/"FAIL" lines.

Exit codes: 0 passed, 1 a check failed, 77 skipped (no Spark home, java, javac, mvn or
prometheus).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from demo_run import (DEMO_CLASS, DRIVER_MEMORY, EXECUTOR_MEMORY,  # noqa: E402
                      DemoRun, SparkprofFiles, read_url)
from e2e_checks import check, failures  # noqa: E402
from prometheus_server import Prometheus  # noqa: E402
from run_real_spark import (DRIVER_PROBLEMS, SCRAPE_JOB, SKIPPED, SparkFacts,  # noqa: E402
                            add_common_arguments, check_demo_ran, check_executor_logs,
                            check_flame_graphs, check_profile, check_prometheus, check_report,
                            missing_prerequisite)
from spark_cluster import (HistoryRest, SparkCluster, die_with_parent,  # noqa: E402
                           driver_metrics_url, free_port, read_tail, wait_driver)
from yarn_cluster import MiniYarn, missing_tools  # noqa: E402

EXECUTORS = 2
EXECUTOR_CORES = 1
EVENT_LOG_DIR = "/eventlog"  # on HDFS (MiniYarn makes it)


def yarn_submit_command(spark_home, mode, files, app_jar, app_args, conf):
    """spark-submit --master yarn as docs/quickstart-spark.md's YARN section has it: --files
    ships libsparkprof.so (and, in cluster mode, libsparkprof_driver.so) into every container's
    working directory, -agentpath:./libsparkprof.so finds it there; a client-mode driver runs
    here and uses the absolute path. --jars puts the plugin on every class path."""
    agent = os.path.abspath(files.agent)
    driver_library = os.path.join(os.path.dirname(agent), "libsparkprof_driver.so")
    shipped = [agent] + ([driver_library] if mode == "cluster" else [])
    driver_agent = "./libsparkprof.so" if mode == "cluster" else agent
    command = [os.path.join(spark_home, "bin", "spark-submit"),
               "--master", "yarn", "--deploy-mode", mode,
               "--files", ",".join(shipped),
               "--jars", os.path.abspath(files.plugin_jar),
               "--conf", "spark.plugins=io.sparkprof.SparkProfPlugin",
               "--conf", f"spark.driver.extraJavaOptions=-agentpath:{driver_agent}",
               "--conf", "spark.executor.extraJavaOptions=-agentpath:./libsparkprof.so",
               "--conf", "spark.sparkprof.prometheus.bindAddress=0.0.0.0"]
    for key, value in conf.items():
        command += ["--conf", f"{key}={value}"]
    return command + ["--class", DEMO_CLASS, os.path.abspath(app_jar)] + [str(a) for a in app_args]


def run_on_yarn(cluster, yarn, args, files, work, metrics_port, mode):
    run = DemoRun(run_dir=work, profiled=True)
    run.event_log_dir = os.path.join(work, "eventlog")
    run.output_dir = os.path.join(work, "sparkprof")
    run.driver_log = os.path.join(work, "spark-submit.log")
    run.metrics_url = f"http://127.0.0.1:{metrics_port}/metrics"
    conf = {
        "spark.sparkprof.prometheus.port": str(metrics_port),
        "spark.sparkprof.outputDir": run.output_dir,
        # With an explicit outputDir, only this stores the outputs beside the event log on HDFS.
        "spark.sparkprof.besideEventLog": "true",
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": yarn.default_fs + EVENT_LOG_DIR,
        "spark.driver.memory": DRIVER_MEMORY,
        "spark.executor.memory": EXECUTOR_MEMORY,
        "spark.executor.instances": str(EXECUTORS),
        "spark.executor.cores": str(EXECUTOR_CORES),
        "spark.ui.port": str(free_port()),
        # Spark's jars are on this (the only) NodeManager's disk: not uploaded per submission.
        "spark.yarn.jars": "local:" + os.path.join(cluster.spark_home, "jars", "*"),
        # The client reports the application's state every second (cluster mode: until the end).
        "spark.yarn.report.interval": "1s",
    }
    command = yarn_submit_command(cluster.spark_home, mode, files, args.demo_jar,
                                  [os.path.join(work, "app-output"), args.scale], conf)
    env = dict(cluster.env, HADOOP_CONF_DIR=yarn.conf_dir)
    run.submitted_at = time.time()
    started = time.monotonic()
    with open(run.driver_log, "w") as log:
        log.write("$ HADOOP_CONF_DIR=" + yarn.conf_dir + " " + " ".join(command) + "\n")
        log.flush()
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, env=env, cwd=work,
                                   start_new_session=True, preexec_fn=die_with_parent)

    def tick():
        body = read_url(run.metrics_url)
        if body is not None:
            run.metrics_snapshot = body
            run.metrics_snapshots += 1

    run.exit_code, run.driver_cpu_s = wait_driver(process, args.timeout, tick, 1.0)
    run.wall_s = time.monotonic() - started
    # The YARN application id, from the client's log.
    match = re.search(r"Submitting application (application_\d+_\d+) to ResourceManager",
                      read_tail(run.driver_log, 50_000_000))
    run.app_id = match.group(1) if match else ""
    os.makedirs(run.event_log_dir, exist_ok=True)
    for entry in yarn.hdfs_list(EVENT_LOG_DIR):
        name = entry["pathSuffix"]
        # A file application_..., or (Spark 4's rolling default) a directory eventlog_v2_...
        if (run.app_id and name.replace("eventlog_v2_", "").startswith(run.app_id)
                and not name.endswith(".inprogress") and not name.endswith(".sparkprof")):
            yarn.hdfs_get(f"{EVENT_LOG_DIR}/{name}", os.path.join(run.event_log_dir, name))
            run.event_log = os.path.join(run.event_log_dir, name)
    if mode == "cluster" and run.app_id:
        # The driver runs in the ApplicationMaster's container: its log is that container's.
        dirs = yarn.container_dirs(run.app_id)
        if dirs:
            run.driver_log = os.path.join(dirs[0], "stderr")
    return run


class AttemptRest(HistoryRest):
    """The REST API of an application with attempt ids (YARN cluster mode: the driver is an
    ApplicationMaster attempt): /applications/<id>/<attempt>/..."""

    def __init__(self, base_url, app_id, attempt):
        super().__init__(base_url, app_id)
        self.app_base = self.base
        self.base = f"{self.base}/{attempt}"

    def wait_complete(self, timeout_s=120):
        base, self.base = self.base, self.app_base
        try:
            return super().wait_complete(timeout_s)
        finally:
            self.base = base


def check_run(run, facts, yarn, mode):
    check(run.exit_code == 0, f"spark-submit --master yarn --deploy-mode {mode} of the demo "
                              f"exited with {run.exit_code}")
    report = yarn.application_report(run.app_id)
    check(report["finalStatus"] == "SUCCEEDED",
          f"YARN says {run.app_id} {report['state']}, final status {report['finalStatus']}")
    driver_log = read_tail(run.driver_log, 50_000_000)
    url = driver_metrics_url(run.driver_log)
    check(url is not None and url.endswith(f":{run.metrics_url.split(':')[-1]}"),
          f"the driver log ({'the ApplicationMaster container' if mode == 'cluster' else 'spark-submit'}"
          f") says the aggregator started, metrics at {url}")
    problems = [line for line in driver_log.splitlines()
                if "sparkprof: " in line and any(p in line for p in DRIVER_PROBLEMS)]
    check(not problems, f"the driver log has no sparkprof problem line: {problems[:3]}")
    containers = yarn.container_dirs(run.app_id)
    # The first container is the ApplicationMaster (cluster mode: the driver; client mode: the
    # ExecutorLauncher, no agent); the others are executors.
    executor_logs = [os.path.join(d, "stderr") for d in containers[1:]]
    profiling = [p for p in executor_logs if "sparkprof: profiling:" in read_tail(p, 50_000_000)]
    check(len(executor_logs) == EXECUTORS and len(profiling) == EXECUTORS,
          f"every executor container loaded the shipped agent ('sparkprof: profiling:' in "
          f"{len(profiling)} of {len(executor_logs)} executor container logs)")
    check_executor_logs(executor_logs, yarn.work_dir)
    check_demo_ran(facts, EXECUTORS, EXECUTOR_CORES)
    wait_ms = facts.first_executor_ms - facts.start_ms
    check(wait_ms > 0, f"the application waited {wait_ms} ms for its first executor container")


def check_beside_event_log(run, yarn):
    """The driver stored its outputs beside the event log on HDFS (Hadoop's FileSystem):
    <eventLog.dir>/<the log's name>.sparkprof/ (cluster mode: with the attempt id, as the log)."""
    log_name = os.path.basename(run.event_log).replace("eventlog_v2_", "").split(".")[0]
    entries = {e["pathSuffix"]: e for e in yarn.hdfs_list(EVENT_LOG_DIR)}
    folder = log_name + ".sparkprof"
    if not check(folder in entries and entries[folder]["type"] == "DIRECTORY",
                 f"the driver stored its outputs beside the event log on HDFS: {folder} "
                 f"({sorted(entries)})"):
        return
    files = {e["pathSuffix"]: e["length"] for e in yarn.hdfs_list(f"{EVENT_LOG_DIR}/{folder}")}
    print(f"beside the event log on HDFS: {sorted(files)}, {sum(files.values())} bytes")
    check({"report.json", "report.txt", "report.md", "report.html",
           "profile.sparkprof.zstd"} <= set(files)
          and any(f.startswith("stage-") and f.endswith(".html") for f in files)
          and not any(f.startswith(".") for f in files),
          "on HDFS: the reports, stage flame graphs and the compressed profile, no temporary file")
    driver_log = read_tail(run.driver_log, 50_000_000)
    check("outputs stored beside the event log in hdfs://" in driver_log,
          "the driver logged the store on HDFS")


# Words of the standalone, local and Kubernetes variants of the resource-wait finding
# (analyzer/diagnosis/rules/resource_wait.cc) that must not reach a YARN run.
NOT_YARN_WORDS = ["standalone", "Workers", "local-cluster", "local mode", "pod", "image",
                  "Kubernetes", "spark.cores.max"]


def check_resource_wait(run, facts):
    """The resource-wait finding, when the wait passed its floor, speaks of YARN."""
    with open(os.path.join(run.app_output_dir, "report.json")) as f:
        report = json.load(f)
    wait_ms = facts.first_executor_ms - facts.start_ms
    duration_ms = facts.end_ms - facts.start_ms
    found = [f for f in report["findings"] if f["rule"] == "resource-wait"]
    if wait_ms < 10_000 or wait_ms < 0.05 * duration_ms:  # the rule's floor
        check(not found, f"no resource-wait finding for a {wait_ms} ms wait of {duration_ms} ms")
        return
    if not check(found, f"a resource-wait finding for the {wait_ms} ms wait for executors"):
        return
    finding = found[0]
    words = " ".join([finding["title"], finding["explanation"]] +
                     [" ".join(str(r.get(k, "")) for k in ("config", "value", "change", "reason"))
                      for r in finding.get("recommendations", [])])
    wrong = [w for w in NOT_YARN_WORDS if w in words]
    keys = [r.get("config") for r in finding.get("recommendations", [])]
    check("YARN" in finding["explanation"] and not wrong and "spark.yarn.queue" in keys,
          f"the resource-wait finding speaks of YARN (names the cluster manager, advises "
          f"spark.yarn.queue; no words of other managers: {wrong}): {finding['explanation']} "
          f"advice {keys}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_arguments(parser)
    parser.add_argument("--deploy-mode", choices=["client", "cluster"], required=True)
    parser.add_argument("--timeout", type=float, default=420, help="for spark-submit, seconds")
    args = parser.parse_args()

    stop = missing_prerequisite(args)
    if stop is not None:
        return stop
    if missing_tools():
        print("SKIPPED: " + missing_tools())
        return SKIPPED

    work = os.path.abspath(args.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    cluster = SparkCluster(args.spark_home, work, args.java_home or None)
    args.version = cluster.version
    mode = args.deploy_mode
    print(f"real Spark {cluster.version} on YARN ({mode} mode) at {cluster.spark_home}; work dir "
          f"{work}", flush=True)
    files = SparkprofFiles(args.agent, args.plugin_jar)
    yarn = MiniYarn(os.path.join(work, "yarn"), java_home=args.java_home or None)
    prometheus = None
    started = time.monotonic()
    run = None
    try:
        yarn.start()
        print(f"MiniYARNCluster up after {time.monotonic() - started:.0f} s: {yarn.default_fs}, "
              f"ResourceManager web {yarn.rm_web}", flush=True)
        metrics_port = free_port()
        prometheus = Prometheus(args.prometheus, work)
        prometheus.start(SCRAPE_JOB, f"127.0.0.1:{metrics_port}")
        run = run_on_yarn(cluster, yarn, args, files, work, metrics_port, mode)
        print(f"Spark {cluster.version} on YARN ({mode}): application {run.app_id} ran in "
              f"{run.wall_s:.1f} s; event log {run.event_log}", flush=True)
        if not check(run.exit_code == 0 and run.app_id and run.event_log,
                     f"the demo application ran (exit {run.exit_code}, application "
                     f"'{run.app_id}', event log '{run.event_log}')"):
            raise RuntimeError("no application to check")
        history = cluster.start_history_server(run.event_log_dir)
        attempt = re.fullmatch(r"application_\d+_\d+_(\d+)", os.path.basename(run.event_log)
                               .split(".")[0].replace("eventlog_v2_", ""))
        rest = (AttemptRest(history, run.app_id, attempt.group(1)) if attempt
                else HistoryRest(history, run.app_id))
        facts = SparkFacts(rest)
        check_run(run, facts, yarn, mode)
        check_prometheus(prometheus, run, facts)
        check_flame_graphs(run, facts)
        check_profile(run, facts, args)
        check_report(run, facts, args)
        check_resource_wait(run, facts)
        check_beside_event_log(run, yarn)
    except (RuntimeError, OSError, ValueError, KeyError, IndexError, TypeError) as e:
        check(False, f"the run broke off: {type(e).__name__}: {e}")
        if run is not None:
            print(f"--- driver log ({run.driver_log})\n{read_tail(run.driver_log)}")
        print(f"--- {yarn.log_path}\n{read_tail(yarn.log_path)}")
    finally:
        cluster.stop()
        yarn.stop()
        if prometheus is not None:
            prometheus.stop()
    print(f"Spark {cluster.version} on YARN ({mode}): took {time.monotonic() - started:.0f} s; "
          f"logs in {work}")
    if failures:
        print(f"Spark {cluster.version} on YARN ({mode}): {len(failures)} check(s) failed")
        return 1
    print(f"Spark {cluster.version} on YARN ({mode}): PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
