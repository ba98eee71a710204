"""Submits the demo application (demo/) to a SparkCluster, with or without sparkprof.

With sparkprof, spark-submit gets exactly what docs/quickstart-spark.md tells users for a
standalone cluster in client mode: the plugin jar with --jars, spark.plugins, and -agentpath in
both spark.driver.extraJavaOptions and spark.executor.extraJavaOptions; plus an event log, the
output directory and the metrics port. Shared by tests/e2e/run_real_spark.py (test and demo
mode) and bench/spark_overhead.py.
"""

import dataclasses
import os
import time

from spark_cluster import (child_pids, executor_app_id, find_event_log, free_port, http_get,
                           process_cpu_seconds, thread_cpu_seconds, thread_group, wait_for,
                           wait_driver)

DEMO_CLASS = "io.sparkprof.demo.SparkProfDemo"
JOB_KINDS = ["serialization", "skew", "shuffle", "parquet-write", "spill", "gc-churn"]
EXECUTOR_MEMORY = "512m"
DRIVER_MEMORY = "512m"


@dataclasses.dataclass
class SparkprofFiles:
    agent: str            # libsparkprof.so (libsparkprof_driver.so next to it, or driver_library)
    plugin_jar: str
    driver_library: str = ""  # only when it is not next to the agent: spark.sparkprof.libraryPath
    plugin_only: bool = False  # no -agentpath: the plugin starts the agent from its jar
    agent_options: str = ""    # after '=' in -agentpath (e.g. "mode=cpu")
    executor_java_options: str = ""  # added to the executors' extraJavaOptions, profiled or not


@dataclasses.dataclass
class DemoRun:
    run_dir: str
    profiled: bool
    plugin_only: bool = False
    exit_code: int = -1
    app_id: str = ""
    driver_log: str = ""
    event_log: str = ""        # the file (or rolling directory) Spark wrote
    event_log_dir: str = ""
    output_dir: str = ""       # spark.sparkprof.outputDir; outputs in output_dir/app_id
    metrics_url: str = ""
    metrics_snapshot: str = ""  # the last /metrics body read while the driver ran
    metrics_snapshots: int = 0
    ui_url: str = ""           # the driver's Spark UI
    spark_metrics: str = ""    # with spark_metrics=True: the last body of the UI's /metrics/json
    wall_s: float = 0.0        # spark-submit start to exit
    driver_cpu_s: float = 0.0  # the driver JVM's CPU (rusage of spark-submit, which execs it)
    executors_cpu_s: float = 0.0  # CPU of the executor JVMs (last reading of each, every 1 s)
    # The same by thread-name group (thread_group), summed over the executors: the last reading
    # of each thread; a thread that ended within a second of its last reading lost that part.
    executor_threads_cpu_s: dict = dataclasses.field(default_factory=dict)
    submitted_at: float = 0.0  # epoch seconds

    @property
    def app_output_dir(self):
        return os.path.join(self.output_dir, self.app_id)


def read_url(url):
    try:
        status, body = http_get(url, 2)
        return body if status == 200 else None
    except OSError:
        return None


def submit_conf(run, files, metrics_port, ui_port):
    """The --conf settings of one run (--jars is added by the caller for profiled runs)."""
    conf = {
        "spark.executor.memory": EXECUTOR_MEMORY,
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": "file://" + run.event_log_dir,
        "spark.ui.port": str(ui_port),
    }
    if run.profiled:
        conf.update({
            "spark.plugins": "io.sparkprof.SparkProfPlugin",
            "spark.sparkprof.outputDir": run.output_dir,
            "spark.sparkprof.prometheus.port": str(metrics_port),
        })
        if not files.plugin_only:
            agent = "-agentpath:" + os.path.abspath(files.agent)
            if files.agent_options:
                agent += "=" + files.agent_options
            conf["spark.driver.extraJavaOptions"] = agent
            conf["spark.executor.extraJavaOptions"] = agent
        if files.driver_library and not files.plugin_only:
            conf["spark.sparkprof.libraryPath"] = os.path.abspath(files.driver_library)
    if files is not None and files.executor_java_options:
        key = "spark.executor.extraJavaOptions"
        conf[key] = (conf.get(key, "") + " " + files.executor_java_options).strip()
    return conf


def run_demo(cluster, demo_jar, files, run_dir, profiled=True, metrics_port=None, scale=1.0,
             start_workers=None, spark_metrics=False, timeout_s=420):
    """Submits the demo app, waits for it, and returns the DemoRun.

    spark_metrics: also keep the last reading of Spark's own metrics (the driver UI's
    /metrics/json: listener processing times, among others).
    start_workers: None when the cluster's Workers already run; otherwise (count, cores, memory,
    delay_s): the Workers start delay_s after the Master registered the application, so the
    application really waits for its executors.
    """
    run = DemoRun(run_dir=os.path.abspath(run_dir), profiled=profiled,
                  plugin_only=profiled and files is not None and files.plugin_only)
    run.event_log_dir = os.path.join(run.run_dir, "eventlog")
    run.output_dir = os.path.join(run.run_dir, "sparkprof")
    run.driver_log = os.path.join(run.run_dir, "driver.log")
    os.makedirs(run.event_log_dir, exist_ok=True)
    metrics_port = metrics_port or free_port()
    if profiled:
        run.metrics_url = f"http://127.0.0.1:{metrics_port}/metrics"
    ui_port = free_port()
    run.ui_url = f"http://127.0.0.1:{ui_port}"

    run.submitted_at = time.time()
    started = time.monotonic()
    driver = cluster.submit(
        demo_jar, DEMO_CLASS, [os.path.join(run.run_dir, "app-output"), scale],
        conf=submit_conf(run, files, metrics_port, ui_port),
        jars=[os.path.abspath(files.plugin_jar)] if profiled else [],
        driver_memory=DRIVER_MEMORY, log_path=run.driver_log)

    if start_workers is not None:
        count, cores, memory, delay_s = start_workers

        def registered():
            return (cluster.master_state() or {}).get("activeapps")

        wait_for("the Master registered the application", registered, 120, 0.2, driver)
        time.sleep(delay_s)
        cluster.start_workers(count, cores, memory, wait=False)

    executor_cpu_s = {}  # pid: (application id, CPU seconds)
    thread_cpu_s = {}  # (pid, tid): (name, CPU seconds)

    def tick():
        # The executors run idle after the last job while the driver stops: a reading every
        # second misses (almost) nothing of their CPU time. A previous application's executors
        # may still be exiting: each executor is counted for the application its command names.
        for worker in cluster.workers():
            for pid in child_pids(worker.process.pid):
                try:
                    executor_cpu_s[pid] = (executor_app_id(pid), process_cpu_seconds(pid))
                    for tid, reading in thread_cpu_seconds(pid).items():
                        thread_cpu_s[(pid, tid)] = reading
                except OSError:
                    pass
        if run.metrics_url:
            body = read_url(run.metrics_url)
            if body is not None:
                run.metrics_snapshot = body
                run.metrics_snapshots += 1
        if spark_metrics:
            run.spark_metrics = read_url(run.ui_url + "/metrics/json") or run.spark_metrics

    run.exit_code, run.driver_cpu_s = wait_driver(driver, timeout_s, tick, 1.0)
    run.wall_s = time.monotonic() - started

    names = [n for n in os.listdir(run.event_log_dir)]
    apps = sorted({n.split(".")[0].replace("eventlog_v2_", "") for n in names})
    if len(apps) == 1:
        run.app_id = apps[0]
        run.event_log = find_event_log(run.event_log_dir, run.app_id) or ""
    run.executors_cpu_s = sum(cpu for app, cpu in executor_cpu_s.values() if app == run.app_id)
    for (pid, _), (name, cpu) in thread_cpu_s.items():
        if executor_cpu_s.get(pid, ("",))[0] == run.app_id:
            group = thread_group(name)
            run.executor_threads_cpu_s[group] = run.executor_threads_cpu_s.get(group, 0.0) + cpu
    return run
