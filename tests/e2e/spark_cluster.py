"""A real Spark standalone cluster on loopback, for tests, the demo and the benchmark.

Starts a Master and Workers from an installed Spark (SPARK_HOME: bin/spark-class and jars/),
each on free 127.0.0.1 ports with its own log, work and conf directory below one work directory;
submits applications with bin/spark-submit in client mode; starts a History Server over an event
log directory and reads Spark's REST API. Every process is started in its own session with
PR_SET_PDEATHSIG, so a killed test (ctest timeout) takes them along, and stop() kills each
process group (a Worker's group holds its executors).
"""

import ctypes
import datetime
import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

DRIVER_METRICS_LINE = re.compile(r"sparkprof: driver aggregator started, metrics at (http://\S+/metrics)")


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


def http_json(url, timeout=10.0):
    return json.loads(http_get(url, timeout)[1])


def wait_for(what, predicate, timeout_s, interval_s=0.2, process=None):
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


def read_tail(path, limit=4000):
    try:
        with open(path, errors="replace") as f:
            return f.read()[-limit:]
    except OSError:
        return "(none)"


def spark_version(spark_home):
    """The version of the Spark at spark_home, from its spark-core jar's name."""
    for name in os.listdir(os.path.join(spark_home, "jars")):
        match = re.fullmatch(r"spark-core_[0-9.]+-(.+)\.jar", name)
        if match:
            return match.group(1)
    return "unknown"


def _parse_stat(text):
    """(comm, state, utime+stime in seconds) of a /proc/.../stat line. The comm may hold spaces
    and parentheses, so the fields are counted from its last ')'; utime and stime are proc(5)'s
    fields 14 and 15, in clock ticks."""
    comm = text[text.index("(") + 1:text.rindex(")")]
    fields = text.rsplit(")", 1)[1].split()
    return comm, fields[0], (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def process_cpu_seconds(pid):
    """utime+stime of a process (all its threads), from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        return _parse_stat(f.read())[2]


def thread_cpu_seconds(pid):
    """{tid: (name, CPU seconds)} of a process's live threads, from /proc/PID/task/TID/stat (the
    name is the kernel's comm: a Java thread's name cut to 15 bytes)."""
    threads = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                text = f.read()
        except OSError:
            continue  # exited between the listing and the read
        name, _, cpu_seconds = _parse_stat(text)
        threads[int(tid)] = (name, cpu_seconds)
    return threads


def thread_group(name):
    """A thread name without its number ("Executor task l", "GC Thread#", "C2 CompilerThre")."""
    return re.sub(r"[-#]?[0-9]+$", "", name).rstrip("-# ") or name


def child_pids(pid):
    """The running child processes of pid (all its threads' children; zombies left out: the
    launcher process spark-class starts before it execs the JVM stays one, never reaped)."""
    children = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                children += [int(c) for c in f.read().split()]
    except OSError:
        pass
    running = []
    for child in children:
        try:
            with open(f"/proc/{child}/stat") as f:
                if _parse_stat(f.read())[1] != "Z":
                    running.append(child)
        except OSError:
            pass
    return running


def executor_app_id(pid):
    """The application id in an executor JVM's command line (--app-id), or ""."""
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        arguments = f.read().decode("utf-8", "replace").split("\0")
    return next((arguments[i + 1] for i, a in enumerate(arguments[:-1]) if a == "--app-id"), "")


class Daemon:
    """One JVM started through bin/spark-class (Master, Worker, HistoryServer)."""

    def __init__(self, name, process, log_path):
        self.name = name
        self.process = process
        self.log_path = log_path

    def stop(self):
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(15)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # executors left in the group
        except ProcessLookupError:
            pass
        if self.process.poll() is None:
            self.process.wait(10)


class SparkCluster:
    """A standalone Master and Workers on 127.0.0.1, started from spark_home."""

    def __init__(self, spark_home, work_dir, java_home=None, daemon_memory="256m"):
        self.spark_home = os.path.abspath(spark_home)
        self.work_dir = os.path.abspath(work_dir)
        self.version = spark_version(self.spark_home)
        self.daemons = []
        self.master_url = None
        self.master_web_url = None
        conf_dir = os.path.join(self.work_dir, "spark-conf")  # empty: no site defaults leak in
        os.makedirs(conf_dir, exist_ok=True)
        self.env = dict(os.environ)
        for key in list(self.env):
            if key.startswith(("SPARK_", "PYSPARK_")) or key in ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS"):
                del self.env[key]
        self.env.update({
            "SPARK_HOME": self.spark_home,
            "SPARK_CONF_DIR": conf_dir,
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_LOCAL_DIRS": os.path.join(self.work_dir, "spark-local"),  # shuffle, spill
            "SPARK_LOCAL_HOSTNAME": "127.0.0.1",
            "SPARK_DAEMON_MEMORY": daemon_memory,
            "SPARK_LOG_DIR": os.path.join(self.work_dir, "logs"),
            "SPARK_PID_DIR": os.path.join(self.work_dir, "pids"),
        })
        if java_home:
            self.env["JAVA_HOME"] = java_home
            self.env["PATH"] = os.path.join(java_home, "bin") + os.pathsep + self.env["PATH"]

    def _start(self, name, arguments, extra_env=None, cgroup_procs=None):
        log_path = os.path.join(self.work_dir, f"{name}.log")
        env = dict(self.env, **(extra_env or {}))

        def prepare_child():
            die_with_parent()
            # The daemon and every process it starts (executors) run in the cgroups.
            for path in [cgroup_procs] if isinstance(cgroup_procs, str) else cgroup_procs or []:
                with open(path, "w") as procs:
                    procs.write(str(os.getpid()))

        with open(log_path, "w") as log:
            process = subprocess.Popen(
                [os.path.join(self.spark_home, "bin", "spark-class")] + arguments,
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                cwd=self.work_dir, start_new_session=True, preexec_fn=prepare_child)
        daemon = Daemon(name, process, log_path)
        self.daemons.append(daemon)
        return daemon

    def master_state(self):
        """The Master's /json status (workers, applications), or None while it is not up."""
        try:
            return http_json(self.master_web_url + "/json/", 3)
        except (OSError, ValueError):
            return None

    def start_master(self):
        port, web_port = free_port(), free_port()
        self.master_url = f"spark://127.0.0.1:{port}"
        self.master_web_url = f"http://127.0.0.1:{web_port}"
        master = self._start("master", [
            "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
            "--webui-port", str(web_port)])
        wait_for("the Spark Master", lambda: (self.master_state() or {}).get("status") == "ALIVE",
                 90, 0.3, master.process)
        return self.master_url

    def start_workers(self, count, cores, memory, wait=True, cgroup_procs=None):
        """count Workers with cores and memory each; with wait, until the Master lists them.
        With cgroup_procs (a cgroup's cgroup.procs file, or a list of them: one per cgroup v1
        hierarchy), the Workers and their executors run in those cgroups."""
        workers = []
        for index in range(1, count + 1):
            work = os.path.join(self.work_dir, f"worker-{index}")
            os.makedirs(work, exist_ok=True)
            workers.append(self._start(f"worker-{index}", [
                "org.apache.spark.deploy.worker.Worker", self.master_url, "--host", "127.0.0.1",
                "--port", str(free_port()), "--webui-port", str(free_port()),
                "--cores", str(cores), "--memory", memory, "--work-dir", work],
                cgroup_procs=cgroup_procs))
        if wait:
            self.wait_for_workers(count)
        return workers

    def wait_for_workers(self, count, timeout_s=90):
        wait_for(f"{count} alive workers",
                 lambda: sum(1 for w in (self.master_state() or {}).get("workers", [])
                             if w.get("state") == "ALIVE") >= count, timeout_s, 0.3)

    def workers(self):
        return [d for d in self.daemons if d.name.startswith("worker-")]

    def submit(self, app_jar, main_class, app_args=(), conf=None, jars=(), driver_memory="512m",
               log_path=None, extra_env=None):
        """Starts spark-submit in client mode against the Master; returns the Popen (the driver).

        Its stdout and stderr go to log_path; the caller waits for it (see wait_driver).
        """
        command = [os.path.join(self.spark_home, "bin", "spark-submit"),
                   "--master", self.master_url, "--deploy-mode", "client",
                   "--driver-memory", driver_memory]
        if jars:  # spark-submit runs in the work directory: absolute paths
            command += ["--jars", ",".join(os.path.abspath(j) for j in jars)]
        for key, value in (conf or {}).items():
            command += ["--conf", f"{key}={value}"]
        if main_class:  # None: a Python application (see submit_python)
            command += ["--class", main_class]
        command += [os.path.abspath(app_jar)] + [str(a) for a in app_args]
        log_path = log_path or os.path.join(self.work_dir, "driver.log")
        with open(log_path, "w") as log:
            log.write("$ " + " ".join(command) + "\n")
            log.flush()
            return subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=dict(self.env, **(extra_env or {})), cwd=self.work_dir,
                start_new_session=True, preexec_fn=die_with_parent)

    def submit_python(self, script, python, app_args=(), conf=None, py_files=(),
                      driver_memory="512m", log_path=None, extra_env=None):
        """Starts spark-submit of a PySpark script in client mode; returns the Popen (the driver).

        python (a venv's interpreter with pyspark importable) runs the driver and every
        executor's Python workers; py_files ship with the application (--py-files).
        """
        python = os.path.abspath(python)
        conf = dict(conf or {})
        if py_files:
            conf["spark.submit.pyFiles"] = ",".join(os.path.abspath(f) for f in py_files)
        env = dict(extra_env or {}, PYSPARK_PYTHON=python, PYSPARK_DRIVER_PYTHON=python)
        return self.submit(script, None, app_args, conf, driver_memory=driver_memory,
                           log_path=log_path, extra_env=env)

    def start_history_server(self, event_log_dir):
        """A History Server over event_log_dir; returns its REST base URL (.../api/v1)."""
        port = free_port()
        options = (f"-Dspark.history.fs.logDirectory=file://{os.path.abspath(event_log_dir)} "
                   f"-Dspark.history.ui.port={port} -Dspark.history.fs.update.interval=1s")
        server = self._start("history-server", ["org.apache.spark.deploy.history.HistoryServer"],
                             {"SPARK_HISTORY_OPTS": options})
        url = f"http://127.0.0.1:{port}/api/v1"

        def listening():
            try:
                return http_get(url + "/applications", 3)[0] == 200
            except (OSError, urllib.error.HTTPError):
                return False

        wait_for("the History Server", listening, 90, 0.3, server.process)
        return url

    def stop(self):
        for daemon in reversed(self.daemons):
            daemon.stop()
        self.daemons = []
        # Workers copy every application jar into each executor's directory (the S3A bundle is
        # 600 MB a copy); the copies are not evidence, the executors' logs beside them are kept.
        for jar in glob.glob(os.path.join(self.work_dir, "worker-*", "app-*", "*", "*.jar")):
            os.remove(jar)

    def log_tails(self, limit=3000):
        return "\n".join(f"--- {d.name} ({d.log_path})\n{read_tail(d.log_path, limit)}"
                         for d in self.daemons)


def sparkprof_conf(agent, plugin_jar, output_dir, metrics_port, jars=()):
    """Spark settings of a run with the agent in every JVM and the plugin, its outputs in
    output_dir and its /metrics on metrics_port (docs/quickstart-spark.md); jars: more spark.jars."""
    agent_option = "-agentpath:" + os.path.abspath(agent)
    return {
        "spark.executor.memory": "512m",
        "spark.plugins": "io.sparkprof.SparkProfPlugin",
        "spark.sparkprof.outputDir": output_dir,
        "spark.sparkprof.prometheus.port": str(metrics_port),
        "spark.driver.extraJavaOptions": agent_option,
        "spark.executor.extraJavaOptions": agent_option,
        "spark.jars": ",".join([os.path.abspath(plugin_jar), *jars]),
        "spark.ui.port": str(free_port()),
    }


def wait_driver(process, timeout_s, tick=None, tick_interval_s=1.0):
    """Waits for a spark-submit Popen; returns (exit code, CPU seconds of the driver JVM).

    spark-submit execs the driver JVM in client mode, so the process's rusage is the driver's.
    tick(), when given, is called about every tick_interval_s while the driver runs.
    """
    deadline = time.monotonic() + timeout_s
    next_tick = time.monotonic()
    while True:
        if process.returncode is not None:  # already reaped (by a poll()): no rusage left
            return process.returncode, 0.0
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid == process.pid:
            process.returncode = os.waitstatus_to_exitcode(status)
            return process.returncode, usage.ru_utime + usage.ru_stime
        now = time.monotonic()
        if now > deadline:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            raise RuntimeError(f"spark-submit did not finish within {timeout_s} s")
        if tick is not None and now >= next_tick:
            tick()
            next_tick = now + tick_interval_s
        time.sleep(0.1)


def find_event_log(event_log_dir, app_id):
    """The event log Spark wrote for app_id (a file, maybe compressed, or a rolling directory)."""
    for name in sorted(os.listdir(event_log_dir)):
        if app_id in name and not name.endswith(".inprogress"):
            return os.path.join(event_log_dir, name)
    return None


def driver_metrics_url(driver_log):
    """The metrics URL from the driver plugin's start line, or None."""
    match = DRIVER_METRICS_LINE.search(read_tail(driver_log, 10_000_000))
    return match.group(1) if match else None


def copy_tree(source, destination):
    if os.path.isdir(source):
        shutil.copytree(source, destination, dirs_exist_ok=True)
    else:
        shutil.copy2(source, destination)


def rest_time_ms(text):
    """Epoch ms of a Spark REST API date ("2024-02-13T18:58:22.123GMT")."""
    when = datetime.datetime.strptime(text.replace("GMT", "+0000"), "%Y-%m-%dT%H:%M:%S.%f%z")
    return round(when.timestamp() * 1000)


class HistoryRest:
    """Spark's REST API (/api/v1) for one application, as a History Server serves it."""

    def __init__(self, base_url, app_id):
        self.base = f"{base_url}/applications/{app_id}"
        self.app_id = app_id
        self.base_url = base_url

    def wait_complete(self, timeout_s=120):
        """Waits until the History Server has read the whole log; returns the application."""
        def complete():
            try:
                app = http_json(self.base, 5)
            except (OSError, ValueError):
                return None
            attempts = app.get("attempts", [])
            return app if attempts and all(a.get("completed") for a in attempts) else None

        return wait_for(f"the History Server lists {self.app_id} as complete", complete,
                        timeout_s, 0.5)

    def get(self, path):
        return http_json(f"{self.base}/{path}", 30)

    def tasks(self, stage_id, attempt):
        return self.get(f"stages/{stage_id}/{attempt}/taskList?length=100000")
