#!/usr/bin/env python3
"""Records the executors' own logs of the planted memory kills (issue 29 goal 3) as small fixtures
for `sparkprof analyze LOG --logs DIR`.

Runs the workloads with generate.py on a real standalone cluster (or reads a work directory an
earlier `generate.py --keep-work --work-dir W` left), then keeps, per workload, in
process_logs/<spark version>/<workload>/:

  eventlog.zstd                       Spark's event log of that same run (the app ids must match)
  logs/worker-N/<app>/<exec>/stderr.gz  each executor's stderr from the Worker's work directory
                                        (stdout too when not empty), gzip -9
  logs/driver.log.gz                  the driver's log (spark-submit's output), for the
                                        workloads that plant a driver's failure
  logs/dmesg.txt.gz                   the kernel's lines (dmesg -T) about the executors' pids:
                                        "Memory cgroup out of memory: Killed process <pid>" and
                                        the oom-kill line naming it; only when there are some

The cgroup workloads need root (generate.py makes the memory cgroup). Usage:

  tests/workloads/record_process_logs.py --spark-home build/spark/3.5.9/home
  tests/workloads/record_process_logs.py --spark-home ... --from-work-dir /tmp/w   # no re-run
"""

import argparse
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "e2e"))
from spark_cluster import spark_version  # noqa: E402

DEFAULT_WORKLOADS = ["executor_oom", "python_memory_error", "cgroup_memory_kill",
                     "netty_direct_memory", "driver_heap_collect"]
DRIVER_LOG_WORKLOADS = {"driver_heap_collect"}
DEFAULT_OUT = os.path.join(HERE, "process_logs")
PID_LINE = re.compile(rb"Started daemon with process name: (\d+)@")


def kernel_lines(pids):
    """dmesg -T's lines about these pids' OOM kills; [] when dmesg cannot be read."""
    try:
        text = subprocess.run(["dmesg", "-T"], capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return []
    wanted = []
    for line in text.splitlines():
        for pid in pids:
            if (b"Killed process " + pid + b" " in line) or (b",pid=" + pid + b"," in line):
                wanted.append(line)
                break
    return wanted


def record(work, name, version, out):
    workload_work = os.path.join(work, name)
    event_dir = os.path.join(workload_work, "eventlog")
    logs = [f for f in os.listdir(event_dir)] if os.path.isdir(event_dir) else []
    if len(logs) != 1:
        print(f"  {name}: expected one event log in {event_dir}, found {logs}")
        return False
    target = os.path.join(out, version, name)
    shutil.rmtree(target, ignore_errors=True)
    os.makedirs(os.path.join(target, "logs"))
    shutil.copyfile(os.path.join(event_dir, logs[0]), os.path.join(target, "eventlog.zstd"))
    pids = set()
    kept = 0
    for worker in sorted(os.listdir(workload_work)):
        worker_dir = os.path.join(workload_work, worker)
        if not (worker.startswith("worker-") and os.path.isdir(worker_dir)):
            continue
        for root, _, files in os.walk(worker_dir):
            for file in sorted(files):
                if file not in ("stderr", "stdout"):
                    continue
                source = os.path.join(root, file)
                with open(source, "rb") as f:
                    data = f.read()
                if not data:
                    continue
                pids.update(PID_LINE.findall(data))
                relative = os.path.relpath(source, workload_work)
                destination = os.path.join(target, "logs", relative + ".gz")
                os.makedirs(os.path.dirname(destination), exist_ok=True)
                with gzip.GzipFile(destination, "wb", compresslevel=9, mtime=0) as g:
                    g.write(data)
                kept += 1
    # The driver's log (spark-submit's output in client mode), where the driver's own
    # OutOfMemoryError is: only for the workloads that plant a driver's failure.
    driver_log = os.path.join(workload_work, "driver.log")
    if name in DRIVER_LOG_WORKLOADS and os.path.isfile(driver_log):
        with open(driver_log, "rb") as f, gzip.GzipFile(
                os.path.join(target, "logs", "driver.log.gz"), "wb", compresslevel=9,
                mtime=0) as g:
            g.write(f.read())
        kept += 1
    kernel = kernel_lines(sorted(pids))
    if kernel:
        with gzip.GzipFile(os.path.join(target, "logs", "dmesg.txt.gz"), "wb", compresslevel=9,
                           mtime=0) as g:
            g.write(b"\n".join(kernel) + b"\n")
    size = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(target) for f in fs)
    print(f"  {name}: {kept} executor log(s), {len(kernel)} kernel line(s), {size} bytes kept "
          f"in {os.path.relpath(target)}")
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spark-home", required=True)
    parser.add_argument("--only", nargs="+", default=DEFAULT_WORKLOADS, metavar="NAME")
    parser.add_argument("--from-work-dir", help="record from this kept generate.py work directory "
                        "instead of running the workloads")
    parser.add_argument("--out", default=DEFAULT_OUT)
    parser.add_argument("generate_args", nargs="*", help="more generate.py options (after --)")
    args = parser.parse_args()
    version = spark_version(os.path.abspath(args.spark_home))
    work = args.from_work_dir
    scratch = None
    if not work:
        scratch = tempfile.mkdtemp(prefix="sparkprof-process-logs-")
        work = os.path.join(scratch, "work")
        command = [sys.executable, os.path.join(HERE, "generate.py"), "--spark-home",
                   args.spark_home, "--keep-work", "--work-dir", work, "--out",
                   os.path.join(scratch, "logs"), "--only", *args.only, *args.generate_args]
        if subprocess.run(command).returncode != 0:
            print("generate.py failed; nothing recorded")
            return 1
    try:
        ok = all([record(work, name, version, args.out) for name in args.only])
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
