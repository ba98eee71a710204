#!/usr/bin/env python3
"""Runs the workload corpus (manifest.json) on real Spark and keeps Spark's own event logs.

Each workload gets a fresh standalone cluster on loopback (tests/e2e/spark_cluster.py) of the
shape its manifest entry asks for, is submitted with spark-submit in client mode (the release's
venv Python runs the driver and the executors' Python workers), and gets its action: Workers
started late, or an executor JVM killed while a stage runs. Spark writes one zstd-compressed
event log per application; --write-fixtures copies it to fixtures/<spark version>/<name>.zstd,
otherwise it goes to --out. Only one application runs at a time (the machine has 2 cores).

Workloads whose script is a Java source under apps/jvm/ (the JVM-side planted problems) are
compiled with javac against the release's own jars into one jar per run (<work>/jvm-apps.jar)
and submitted with --class, the class named by the source's path.

Workloads whose cluster says "manager": "yarn" run on a fresh real YARN instead (Hadoop's
MiniYARNCluster and MiniDFSCluster, tests/e2e/yarn_cluster.py: one NodeManager with its
physical-memory check on), submitted with --master yarn in client mode; the agent reaches the
executors' containers through spark.yarn.dist.files, as docs/quickstart-spark.md says.

Workloads whose manifest entry says "profile": true run with sparkprof's agent (-agentpath in the
driver and the executors, its default mode cpu+wall) and plugin, as docs/quickstart-spark.md
tells users; the profile the driver writes (<outputDir>/<app id>/profile.sparkprof) is kept
beside the log as <name>.sparkprof.zstd (zstd -19: needs the zstd command).

Exit codes: 0 every workload ran as planted, 1 a workload did not (exit code, missing log, a
string the manifest requires absent from the log, the action not performed), 77 skipped (no Spark
at --spark-home, no Python at --python, no java).
"""

import argparse
import dataclasses
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "e2e"))
from spark_cluster import (SparkCluster, child_pids, free_port, http_json,  # noqa: E402
                           read_tail, spark_version, wait_driver, wait_for)

SKIPPED = 77
MANIFEST = os.path.join(HERE, "manifest.json")
FIXTURES = os.path.join(HERE, "fixtures")
APPS = os.path.join(HERE, "apps")
JVM_APPS = os.path.join(APPS, "jvm")
# Every workload: Spark's compressed event log (the fixture is this file as Spark wrote it).
BASE_CONF = {
    "spark.eventLog.enabled": "true",
    "spark.eventLog.compress": "true",
    "spark.eventLog.compression.codec": "zstd",
    "spark.eventLog.rolling.enabled": "false",  # Spark 4's default rolls into a directory
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",  # dates derived from timestamps do not depend on the host
    # The driver waits (in SparkContext's start, up to 30 s) until every executor registered: it
    # stays idle while the executor JVMs start, which halves their start-up on 2 cores (~5 s
    # instead of 8-12 s, close to the resource-wait rule's 10 s floor). spark.cores.max, set
    # from the cluster's shape, is what the ratio counts against in standalone mode.
    "spark.scheduler.minRegisteredResourcesRatio": "1.0",
}
DEFAULT_DRIVER_MEMORY = "512m"
DEFAULT_TIMEOUT_S = 300
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_AGENT = os.path.join(REPO, "build", "native-agent", "libsparkprof.so")
DEFAULT_PLUGIN_JAR = os.path.join(REPO, "build", "spark-plugin", "maven",
                                  "sparkprof-spark-0.1.0.jar")
# The PySpark driver's interpreter with sparkprof's Python driver sampler (docs/agent.md).
PYTHON_DRIVER_WRAPPER = os.path.join(REPO, "spark-plugin", "src", "main", "python",
                                     "sparkprof-python")
PROFILE_SUFFIX = ".sparkprof.zstd"


@dataclasses.dataclass
class Sparkprof:
    """The agent and the plugin for profiled workloads (docs/quickstart-spark.md)."""
    agent: str       # libsparkprof.so, libsparkprof_driver.so beside it
    plugin_jar: str

    def conf(self, output_dir, yarn=False):
        agent = "-agentpath:" + os.path.abspath(self.agent)
        conf = {"spark.plugins": "io.sparkprof.SparkProfPlugin",
                "spark.jars": os.path.abspath(self.plugin_jar),
                "spark.sparkprof.outputDir": output_dir,
                "spark.sparkprof.prometheus.port": str(free_port()),
                "spark.driver.extraJavaOptions": agent,
                "spark.executor.extraJavaOptions": agent}
        if yarn:  # client mode: the executors' containers get the agent shipped (--files)
            conf["spark.yarn.dist.files"] = os.path.abspath(self.agent)
            conf["spark.executor.extraJavaOptions"] = "-agentpath:./libsparkprof.so"
        return conf


def load_manifest(path=MANIFEST):
    with open(path) as f:
        return json.load(f)["workloads"]


def decompressed_log(path):
    """The text of a zstd event log (the zstd command), or None when zstd is not installed."""
    zstd = shutil.which("zstd")
    if not zstd:
        return None
    return subprocess.run([zstd, "-dcq", path], check=True, capture_output=True).stdout.decode(
        "utf-8", "replace")


@dataclasses.dataclass
class WorkloadRun:
    name: str
    spark_version: str
    exit_code: int = -1
    wall_s: float = 0.0
    event_log: str = ""          # Spark's file, in the workload's work directory
    driver_log: str = ""
    action_done: str = ""        # what the action did (the executor killed, when)
    profile: str = ""            # profiled workloads: the driver's profile.sparkprof
    problems: list = dataclasses.field(default_factory=list)


class ExecutorKiller:
    """Kills one executor JVM (SIGKILL) while a stage of the named job runs.

    Polled from the driver's REST API (/api/v1 of its UI): once the stage `stage_index` (0: the
    first by stage id) of a running job whose description contains `job` has at least
    `min_tasks_done` successful tasks on one executor and tasks still to finish, that executor's
    JVM is killed. Its finished shuffle-map tasks are then lost with it (no external shuffle
    service): Spark resubmits them.
    """

    def __init__(self, cluster, ui_url, spec):
        self.cluster = cluster
        self.ui_url = ui_url
        self.job = spec["job"]
        self.min_tasks_done = spec.get("min_tasks_done", 1)
        self.stage_index = spec.get("stage_index", 0)
        self.done = ""

    def _api(self, path):
        return http_json(f"{self.ui_url}/api/v1/{path}", 3)

    def tick(self):
        if self.done:
            return
        try:
            apps = self._api("applications")
            if not apps:
                return
            app = apps[0]["id"]
            jobs = [j for j in self._api(f"applications/{app}/jobs?status=running")
                    if self.job in (j.get("description") or "")]
            stage_ids = [sorted(j["stageIds"])[self.stage_index] for j in jobs
                         if len(j["stageIds"]) > self.stage_index]
            for stage in self._api(f"applications/{app}/stages?status=active"):
                if stage["stageId"] not in stage_ids:
                    continue
                if stage["numCompleteTasks"] >= stage["numTasks"]:
                    continue
                tasks = self._api(f"applications/{app}/stages/{stage['stageId']}/"
                                  f"{stage['attemptId']}/taskList?length=100000")
                done = {}
                for task in tasks:
                    if task.get("status") == "SUCCESS":
                        done[task["executorId"]] = done.get(task["executorId"], 0) + 1
                for executor, count in sorted(done.items(), key=lambda e: -e[1]):
                    if count >= self.min_tasks_done and self._kill(app, executor):
                        self.done = (f"killed executor {executor} (SIGKILL) in stage "
                                     f"{stage['stageId']}.{stage['attemptId']} after {count} of "
                                     f"its tasks succeeded there "
                                     f"({stage['numCompleteTasks']}/{stage['numTasks']} done)")
                        return
        except (OSError, ValueError, KeyError):
            return  # the UI is not up yet, or the job is not there yet: the next tick

    def _kill(self, app, executor):
        for worker in self.cluster.workers():
            for pid in child_pids(worker.process.pid):
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        arguments = f.read().decode("utf-8", "replace").split("\0")
                except OSError:
                    continue
                pairs = dict(itertools.pairwise(arguments))
                if pairs.get("--app-id") == app and pairs.get("--executor-id") == executor:
                    os.kill(pid, 9)
                    return True
        return False


def cpu_busy_share(interval_s=2.0):
    """The share of CPU time not idle over interval_s, from /proc/stat."""
    def sample():
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
        return fields[3] + fields[4], sum(fields)  # idle + iowait, total
    idle_before, total_before = sample()
    time.sleep(interval_s)
    idle_after, total_after = sample()
    total = max(total_after - total_before, 1)
    return 1.0 - (idle_after - idle_before) / total


def wait_for_quiet_machine(max_wait_s, busy_limit=0.25):
    """Waits (up to max_wait_s) until other work leaves the CPUs mostly idle: on 2 cores a
    concurrent build stretches executor start-up and first tasks, which the diagnosis would then
    rightly call a resource wait or a straggler that the workload never planted."""
    deadline = time.monotonic() + max_wait_s
    busy = cpu_busy_share()
    if busy < busy_limit:
        return
    print(f"  waiting for a quiet machine (CPU {busy:.0%} busy)", flush=True)
    while time.monotonic() < deadline:
        busy = cpu_busy_share()
        if busy < busy_limit:
            return
    print(f"  the machine stayed busy ({busy:.0%}); running anyway", flush=True)


def is_yarn_workload(workload):
    return workload["cluster"].get("manager") == "yarn"


def submit_conf(workload, event_dir, ui_port, sparkprof=None, profile_dir=""):
    conf = dict(BASE_CONF)
    shape = workload["cluster"]
    conf["spark.executor.cores"] = str(shape["cores"])
    if is_yarn_workload(workload):
        conf["spark.executor.instances"] = str(shape["executors"])
    else:
        conf["spark.cores.max"] = str(shape["workers"] * shape["cores"])
    if workload.get("profile"):
        conf.update(sparkprof.conf(profile_dir, yarn=is_yarn_workload(workload)))
        if workload.get("python_driver"):
            conf["spark.pyspark.driver.python"] = PYTHON_DRIVER_WRAPPER
    conf.update(workload.get("conf", {}))
    conf["spark.eventLog.dir"] = "file://" + event_dir
    conf["spark.ui.port"] = str(ui_port)
    return conf


def is_jvm_workload(workload):
    return workload["script"].endswith(".java")


def jvm_main_class(workload):
    """apps/jvm/io/sparkprof/workloads/ProfiledJvm.java -> io.sparkprof.workloads.ProfiledJvm"""
    path = os.path.relpath(os.path.join(HERE, workload["script"]), JVM_APPS)
    return os.path.splitext(path)[0].replace(os.sep, ".")


def build_jvm_apps(spark_home, java_home, work_root):
    """javac (Java 8 bytecode, as the demo) of every source under apps/jvm against this release's
    jars, into <work_root>/jvm-apps.jar; returns its path. Raises RuntimeError when it fails."""
    def tool(name):
        return os.path.join(java_home, "bin", name) if java_home else shutil.which(name)

    javac, jar = tool("javac"), tool("jar")
    if not javac or not jar:
        raise RuntimeError("the JVM workloads need javac and jar (a JDK)")
    sources = sorted(os.path.join(d, f) for d, _, files in os.walk(JVM_APPS)
                     for f in files if f.endswith(".java"))
    classes = os.path.join(work_root, "jvm-apps-classes")
    target = os.path.join(work_root, "jvm-apps.jar")
    shutil.rmtree(classes, ignore_errors=True)
    compiled = subprocess.run(
        [javac, "--release", "8", "-encoding", "UTF-8", "-Xlint:all,-path,-options", "-Werror",
         "-cp", os.path.join(spark_home, "jars", "*"), "-d", classes, *sources],
        capture_output=True, text=True)
    if compiled.returncode != 0:
        raise RuntimeError("javac of apps/jvm failed:\n" + compiled.stdout + compiled.stderr)
    subprocess.run([jar, "cf", target, "-C", classes, "."], check=True)
    return target


def own_cgroup(hierarchy_id_or_controller):
    """This process's cgroup path in a v1 hierarchy (by its controller) or v2's ("" key), from
    /proc/self/cgroup; "/" when it is not listed."""
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            if hierarchy_id_or_controller in controllers.split(","):
                return path
    return "/"


def workload_cgroup(name, controller, v1_roots, v1_files, v2_files, final_figures=None):
    """A cgroup of the workload's own for `controller` with the files written (cgroup v1's
    hierarchy of the controller, else v2's where the controller is enabled), made below this
    process's own cgroup so that whatever accounts for this process still accounts for the
    workload. Returns (its cgroup.procs file, a function that removes it and returns
    final_figures(path, version) as read just before, or {}); raises RuntimeError where none can
    be made (not root, a read-only /sys/fs/cgroup): the run then fails naming why."""
    candidates = [(root, 1) for root in v1_roots]
    candidates += [("/sys/fs/cgroup", 2), ("/sys/fs/cgroup/unified", 2)]
    for root, version in candidates:
        marker = next(iter(v1_files)) if version == 1 else "cgroup.controllers"
        if not os.path.exists(os.path.join(root, marker)):
            continue
        if version == 2:
            with open(os.path.join(root, "cgroup.controllers")) as f:
                if controller not in f.read().split():
                    continue
        parent = own_cgroup(controller if version == 1 else "").lstrip("/")
        if not os.path.isdir(os.path.join(root, parent)):
            parent = ""
        path = os.path.join(root, parent, f"sparkprof-workload-{name}-{os.getpid()}")
        try:
            os.makedirs(path, exist_ok=True)
            for file, value in (v1_files if version == 1 else v2_files).items():
                with open(os.path.join(path, file), "w") as f:
                    f.write(value)
        except OSError as e:
            shutil.rmtree(path, ignore_errors=True)
            raise RuntimeError(f"cannot make a {controller} cgroup under {root}: {e}") from e

        def remove(path=path, version=version):
            figures = final_figures(path, version) if final_figures else {}
            for _ in range(50):  # the processes in it must have ended
                try:
                    os.rmdir(path)
                    break
                except OSError:
                    time.sleep(0.1)
            return figures

        return os.path.join(path, "cgroup.procs"), remove
    raise RuntimeError(f"no cgroup {controller} controller to make the workload's cgroup with")


def cpu_quota_cgroup(name, cpus):
    """A cgroup with a CFS quota of `cpus` CPUs, for a workload whose executors run in a
    container-like CPU limit (see workload_cgroup)."""
    period = 100_000
    quota = max(1000, int(cpus * period))
    return workload_cgroup(
        name, "cpu", ["/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"],
        {"cpu.cfs_period_us": str(period), "cpu.cfs_quota_us": str(quota)},
        {"cpu.max": f"{quota} {period}"})


def memory_limit_cgroup(name, limit):
    """A cgroup whose memory limit is `limit` (Spark's size syntax: "1g", "900m"), for a workload
    whose Worker and executors run in a container-like memory limit: the kernel's OOM killer ends
    the largest process in it when they outgrow the limit (see workload_cgroup)."""
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    text = limit.strip().lower().rstrip("b")
    limit_bytes = int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)
    return workload_cgroup(
        name, "memory", ["/sys/fs/cgroup/memory"],
        {"memory.limit_in_bytes": str(limit_bytes)}, {"memory.max": str(limit_bytes)},
        memory_cgroup_figures)


def memory_cgroup_figures(path, version):
    """What a memory cgroup went through: its limit, its peak usage and how many processes the
    kernel's OOM killer ended in it (v1: memory.oom_control's oom_kill, kernels >= 4.13; v2:
    memory.events). A figure the kernel does not keep is left out."""
    def read(file):
        try:
            with open(os.path.join(path, file)) as f:
                return f.read()
        except OSError:
            return ""

    def keyed(text, key):
        for line in text.splitlines():
            if line.startswith(key + " "):
                return int(line.split()[1])
        return None

    files = (("memory.limit_in_bytes", "memory.max_usage_in_bytes", "memory.oom_control")
             if version == 1 else ("memory.max", "memory.peak", "memory.events"))
    figures = {}
    for key, text in (("limit_bytes", read(files[0])), ("peak_bytes", read(files[1]))):
        if text.strip().isdigit():
            figures[key] = int(text)
    kills = keyed(read(files[2]), "oom_kill")
    if kills is not None:
        figures["oom_kills"] = kills
    return figures


def run_yarn_workload(workload, spark_home, work_root, java_home=None, sparkprof=None,
                      jvm_jar=None):
    """Runs one JVM workload on its own fresh YARN (tests/e2e/yarn_cluster.py: MiniYARNCluster,
    one NodeManager of the shape's node_memory_mb with its physical-memory check on), submitted
    in client mode; returns the WorkloadRun. The event log stays on the local disk (the driver
    runs here); the NodeManager's view of each container's end is kept in the run's problems
    when it differs from the manifest's "container_killed"."""
    from yarn_cluster import MiniYarn, YarnSite  # noqa: E402 (only YARN workloads need it)
    name = workload["name"]
    work = os.path.join(work_root, name)
    shutil.rmtree(work, ignore_errors=True)
    event_dir = os.path.join(work, "eventlog")
    os.makedirs(event_dir)
    os.makedirs(os.path.join(work, "scratch"))
    cluster = SparkCluster(spark_home, work, java_home)
    run = WorkloadRun(name, cluster.version, driver_log=os.path.join(work, "driver.log"))
    shape = workload["cluster"]
    profile_dir = os.path.join(work, "sparkprof")
    conf = submit_conf(workload, event_dir, free_port(), sparkprof, profile_dir)
    conf["spark.yarn.jars"] = "local:" + os.path.join(cluster.spark_home, "jars", "*")
    driver_memory = conf.pop("spark.driver.memory", DEFAULT_DRIVER_MEMORY)
    yarn = MiniYarn(os.path.join(work, "yarn"),
                    YarnSite(node_memory_mb=shape.get("node_memory_mb", 4096)), java_home)
    started = time.monotonic()
    try:
        yarn.start()
        cluster.master_url = "yarn"
        driver = cluster.submit(jvm_jar, jvm_main_class(workload),
                                [*workload.get("args", []), os.path.join(work, "scratch")], conf,
                                driver_memory=driver_memory, log_path=run.driver_log,
                                extra_env={"HADOOP_CONF_DIR": yarn.conf_dir})
        run.exit_code, _ = wait_driver(driver, workload.get("timeout_s", DEFAULT_TIMEOUT_S))
        text = read_tail(yarn.log_path, 200_000_000)
        kills = text.count("beyond the 'PHYSICAL' memory limit")
        run.action_done = f"the NodeManager killed {kills} container(s) over their memory"
        if shape.get("container_killed") is not None and shape["container_killed"] != (kills > 0):
            expected = "some" if shape["container_killed"] else "none"
            run.problems.append(f"the NodeManager's physical-memory check killed {kills} "
                                f"container(s); expected {expected}")
    except RuntimeError as e:
        run.problems.append(str(e))
    finally:
        run.wall_s = time.monotonic() - started
        yarn.stop()
    check_run(workload, run, event_dir)
    if workload.get("profile"):
        find_profile(run, profile_dir)
    return run


def run_workload(workload, spark_home, python, work_root, java_home=None, sparkprof=None,
                 jvm_jar=None):
    """Runs one workload on its own fresh cluster; returns the WorkloadRun."""
    if is_yarn_workload(workload):
        return run_yarn_workload(workload, spark_home, work_root, java_home, sparkprof, jvm_jar)
    name = workload["name"]
    work = os.path.join(work_root, name)
    shutil.rmtree(work, ignore_errors=True)
    event_dir = os.path.join(work, "eventlog")
    scratch = os.path.join(work, "scratch")
    os.makedirs(event_dir)
    os.makedirs(scratch)
    cluster = SparkCluster(spark_home, work, java_home)
    run = WorkloadRun(name, cluster.version, driver_log=os.path.join(work, "driver.log"))
    shape = workload["cluster"]
    delay_s = shape.get("worker_delay_s", 0)
    action = workload.get("action") or {}
    profile_dir = os.path.join(work, "sparkprof")
    conf = submit_conf(workload, event_dir, free_port(), sparkprof, profile_dir)
    driver_memory = conf.pop("spark.driver.memory", DEFAULT_DRIVER_MEMORY)
    ui_url = "http://127.0.0.1:" + conf["spark.ui.port"]
    started = time.monotonic()
    cgroup_procs, remove_cgroups = [], []
    try:
        for option, make in (("cpu_quota", cpu_quota_cgroup),
                             ("memory_limit", memory_limit_cgroup)):
            if shape.get(option):
                procs, remove = make(name, shape[option])
                cgroup_procs.append(procs)
                remove_cgroups.append(remove)
        cluster.start_master()
        if not delay_s:
            cluster.start_workers(shape["workers"], shape["cores"], shape["worker_memory"],
                                  cgroup_procs=cgroup_procs)
        script = os.path.join(HERE, workload["script"])
        if is_jvm_workload(workload):
            driver = cluster.submit(jvm_jar, jvm_main_class(workload),
                                    [*workload.get("args", []), scratch], conf,
                                    driver_memory=driver_memory, log_path=run.driver_log)
        else:
            driver = cluster.submit_python(
                script, python, [*workload.get("args", []), scratch], conf,
                py_files=[os.path.join(APPS, "common.py")], driver_memory=driver_memory,
                log_path=run.driver_log)
        if delay_s:
            wait_for("the Master registered the application",
                     lambda: (cluster.master_state() or {}).get("activeapps"), 120, 0.2, driver)
            time.sleep(delay_s)
            cluster.start_workers(shape["workers"], shape["cores"], shape["worker_memory"],
                                  wait=False)
            run.action_done = f"Workers started {delay_s} s after the application registered"
        killer = None
        if "kill_executor" in action:
            killer = ExecutorKiller(cluster, ui_url, action["kill_executor"])
        run.exit_code, _ = wait_driver(driver, workload.get("timeout_s", DEFAULT_TIMEOUT_S),
                                       killer.tick if killer else None, 0.25)
        if killer:
            run.action_done = killer.done
            if not killer.done:
                run.problems.append("the executor was not killed: no stage of job "
                                    f"'{action['kill_executor']['job']}' had the tasks asked for")
    except RuntimeError as e:
        run.problems.append(str(e))
    finally:
        run.wall_s = time.monotonic() - started
        cluster.stop()
        for remove in remove_cgroups:
            check_cgroup(shape, remove(), run)
    check_run(workload, run, event_dir)
    if workload.get("profile"):
        find_profile(run, profile_dir)
    return run


def check_cgroup(shape, figures, run):
    """Says what the workload's memory cgroup went through, and checks the cluster's "oom_kill"
    (true: the kernel's OOM killer ended a process in it; false: none)."""
    if "limit_bytes" not in figures:
        return
    mib = 1 << 20
    text = (f"memory cgroup: peak {figures.get('peak_bytes', 0) / mib:.0f} MiB of its "
            f"{figures['limit_bytes'] / mib:.0f} MiB limit")
    if "oom_kills" in figures:
        text += f", {figures['oom_kills']} OOM kill(s)"
    run.action_done = "; ".join(t for t in (run.action_done, text) if t)
    expected = shape.get("oom_kill")
    if expected is None or "oom_kills" not in figures:
        return
    if expected != (figures["oom_kills"] > 0):
        run.problems.append(f"the kernel's OOM killer ended {figures['oom_kills']} process(es) "
                            f"in the memory cgroup; expected {'some' if expected else 'none'}")


def find_profile(run, profile_dir):
    """The profile the driver wrote for the application (one application directory)."""
    apps = sorted(os.listdir(profile_dir)) if os.path.isdir(profile_dir) else []
    profiles = [os.path.join(profile_dir, a, "profile.sparkprof") for a in apps]
    profiles = [p for p in profiles if os.path.isfile(p) and os.path.getsize(p) > 0]
    if len(profiles) != 1:
        run.problems.append(f"expected one profile.sparkprof under {profile_dir}, found "
                            f"{profiles or apps}; driver log {run.driver_log}")
        return
    run.profile = profiles[0]


def compress_profile(source, target):
    """zstd -19 of the profile (the fixture); False when zstd is not installed."""
    zstd = shutil.which("zstd")
    if not zstd:
        return False
    subprocess.run([zstd, "-19", "-q", "-f", source, "-o", target], check=True)
    return True


def check_run(workload, run, event_dir):
    """The run planted what the manifest says: exit code, a complete log, required strings."""
    fails = workload.get("app_fails", False)
    if fails != (run.exit_code != 0):
        run.problems.append(f"spark-submit exited with {run.exit_code} (expected "
                            f"{'non-zero' if fails else '0'}); driver log {run.driver_log}:\n"
                            + read_tail(run.driver_log, 3000))
    logs = sorted(os.listdir(event_dir))
    complete = [n for n in logs if not n.endswith(".inprogress")]
    if len(complete) != 1 or len(logs) != 1:
        run.problems.append(f"expected one complete event log in {event_dir}, found {logs}")
        return
    run.event_log = os.path.join(event_dir, complete[0])
    required = workload.get("log_must_contain", [])
    text = decompressed_log(run.event_log) if required else ""
    if text is None:
        print("  (zstd is not installed: the log's required strings are not checked)")
        return
    for needle in required:
        if needle not in text:
            run.problems.append(f"the event log lacks {needle!r}")


def remove_outputs(work):
    """Deletes a workload's outputs, shuffle files and executor work directories (with their
    logs); keeps the driver, Master and Worker logs and the event log."""
    for name in os.listdir(work):
        worker_dir = name.startswith("worker-") and os.path.isdir(os.path.join(work, name))
        if name in ("scratch", "spark-local") or worker_dir:
            shutil.rmtree(os.path.join(work, name), ignore_errors=True)


def format_size(size):
    return f"{size / 1024:.0f} KiB" if size < 1 << 20 else f"{size / (1 << 20):.1f} MiB"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spark-home", required=True)
    parser.add_argument("--python", help="the venv Python with pyspark (default: "
                        "<spark home>/../venv/bin/python, as scripts/install-spark.sh puts it)")
    parser.add_argument("--java-home", default=os.environ.get("JAVA_HOME", ""))
    parser.add_argument("--only", nargs="+", metavar="NAME", help="just these workloads")
    parser.add_argument("--manifest", default=MANIFEST)
    parser.add_argument("--work-dir", help="the clusters' work directories (default: a temp "
                        "directory, removed at the end unless --keep-work)")
    parser.add_argument("--keep-work", action="store_true",
                        help="keep each workload's outputs, shuffle files and executor logs")
    parser.add_argument("--quiet-wait-s", type=float, default=600,
                        help="before each workload, wait up to this long for idle CPUs")
    parser.add_argument("--agent", default=DEFAULT_AGENT,
                        help="libsparkprof.so, for the profiled workloads")
    parser.add_argument("--plugin-jar", default=DEFAULT_PLUGIN_JAR,
                        help="the Spark plugin's jar, for the profiled workloads")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--write-fixtures", action="store_true",
                        help=f"copy the logs to {os.path.relpath(FIXTURES)}/<version>/<name>.zstd")
    output.add_argument("--out", help="copy the logs to OUT/<version>/<name>.zstd")
    args = parser.parse_args()
    return generate(args)


def generate(args):
    """Runs the workloads args asks for; returns (exit code, {name: WorkloadRun})."""
    spark_home = os.path.abspath(args.spark_home)
    python = args.python or os.path.join(os.path.dirname(spark_home), "venv", "bin", "python")
    if not os.access(os.path.join(spark_home, "bin", "spark-submit"), os.X_OK):
        print(f"SKIPPED: no Spark at {spark_home} (scripts/install-spark.sh)")
        return SKIPPED, {}
    if not os.access(python, os.X_OK):
        print(f"SKIPPED: no Python at {python} (scripts/install-spark.sh makes the venv)")
        return SKIPPED, {}
    java = os.path.join(args.java_home, "bin", "java") if args.java_home else shutil.which("java")
    if not java or not os.access(java, os.X_OK):
        print("SKIPPED: java is not installed")
        return SKIPPED, {}
    workloads = load_manifest(args.manifest)
    if args.only:
        unknown = set(args.only) - {w["name"] for w in workloads}
        if unknown:
            print(f"unknown workloads: {sorted(unknown)}")
            return 1, {}
        workloads = [w for w in workloads if w["name"] in args.only]
    sparkprof = Sparkprof(getattr(args, "agent", DEFAULT_AGENT),
                          getattr(args, "plugin_jar", DEFAULT_PLUGIN_JAR))
    if any(w.get("profile") for w in workloads):
        missing = [p for p in (sparkprof.agent, sparkprof.plugin_jar) if not os.path.isfile(p)]
        if missing:
            print(f"SKIPPED: the profiled workloads need {', '.join(missing)} "
                  "(scripts/build.sh release)")
            return SKIPPED, {}
    version = spark_version(spark_home)
    work_root = os.path.abspath(args.work_dir) if args.work_dir else tempfile.mkdtemp(
        prefix="sparkprof-workloads-")
    os.makedirs(work_root, exist_ok=True)
    destination = FIXTURES if args.write_fixtures else args.out or tempfile.mkdtemp(
        prefix="sparkprof-workload-logs-")
    print(f"Spark {version} at {spark_home}; Python {python}; work in {work_root}; logs to "
          f"{os.path.join(destination, version)}", flush=True)
    runs = {}
    jvm_jar = None
    try:
        if any(is_jvm_workload(w) for w in workloads):
            jvm_jar = build_jvm_apps(spark_home, args.java_home or None, work_root)
        for workload in workloads:
            print(f"== {workload['name']}: {workload['problem']}", flush=True)
            wait_for_quiet_machine(args.quiet_wait_s)
            run = run_workload(workload, spark_home, python, work_root, args.java_home or None,
                               sparkprof, jvm_jar)
            runs[run.name] = run
            size = os.path.getsize(run.event_log) if run.event_log else 0
            print(f"  exit {run.exit_code}, {run.wall_s:.1f} s, log {format_size(size)}"
                  + (f"; {run.action_done}" if run.action_done else ""), flush=True)
            for problem in run.problems:
                print(f"  FAIL {problem}", flush=True)
            if run.event_log:
                target_dir = os.path.join(destination, version)
                os.makedirs(target_dir, exist_ok=True)
                shutil.copyfile(run.event_log, os.path.join(target_dir, run.name + ".zstd"))
            if run.profile and run.event_log:  # a profile is kept with its log only
                target = os.path.join(destination, version, run.name + PROFILE_SUFFIX)
                if compress_profile(run.profile, target):
                    print(f"  profile {format_size(os.path.getsize(run.profile))}, kept "
                          f"{format_size(os.path.getsize(target))}", flush=True)
                else:
                    run.problems.append("zstd is not installed: the profile is not kept")
            if not args.keep_work:  # shuffle files, spills and outputs: gigabytes over the corpus
                remove_outputs(os.path.join(work_root, run.name))
    finally:
        if not args.work_dir and not args.keep_work:
            shutil.rmtree(work_root, ignore_errors=True)
    failed = [r.name for r in runs.values() if r.problems]
    total = sum(r.wall_s for r in runs.values())
    print(f"Spark {version}: {len(runs)} workloads in {total:.0f} s; "
          + (f"FAILED: {', '.join(failed)}" if failed else "all ran as planted"), flush=True)
    return (1 if failed else 0), runs


if __name__ == "__main__":
    sys.exit(main()[0])
