#!/usr/bin/env python3
"""The cost of sparkprof's PySpark worker sampler to the worker, as one whole process.

    bench/python_sampler_bench.py {sampled|plain} [--tasks N] [--rows N] [--interval-ms MS]

Runs what a Python worker runs for a row-at-a-time UDF -- the workloads' checksum of a word,
once per row -- for N tasks of N rows each, through the sampler exactly as a forked worker does
(sparkprof_pyspark_daemon._profiled_worker around each task: sampler thread, TaskContext ids, the
per-task file written to a spool that is emptied as the executor would) or plainly (`plain`: the
same tasks called directly). Timed as whole processes, paired, by farm-bench (bench/RESULTS.md,
"Python worker sampler"):

    farm-bench -n 10 --timeout 600 -- build/spark/4.2.0/venv/bin/python \\
        bench/python_sampler_bench.py sampled --vs \\
        'build/spark/4.2.0/venv/bin/python bench/python_sampler_bench.py plain'

Needs pyspark (the Spark venv of scripts/install-spark.sh).
"""

import argparse
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DAEMON = os.path.join(HERE, "..", "spark-plugin", "src", "main", "python",
                      "sparkprof_pyspark_daemon.py")


def checksum(word):
    value = 0
    for _ in range(40):
        for character in word:
            value = (value * 31 + ord(character)) % 1_000_000_007
    return value


def run_task(task_id, rows):
    from pyspark.taskcontext import TaskContext
    context = TaskContext._getOrCreate()
    context._stageId, context._partitionId = 1, task_id
    context._attemptNumber, context._taskAttemptId = 0, 1000 + task_id
    total = 0
    for row in range(rows):
        total += checksum("order-%d" % row)
    return total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["sampled", "plain"])
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--interval-ms", type=int, default=10)
    parser.add_argument("--report", action="store_true",
                        help="print the sampler thread's own CPU against the worker's main thread")
    args = parser.parse_args()
    if args.mode == "plain":
        for task in range(args.tasks):
            run_task(task, args.rows)
        return 0
    work = tempfile.mkdtemp(prefix="sparkprof-python-bench-")
    try:
        spool = os.path.join(work, "spool")
        os.mkdir(spool, 0o700)
        shutil.copy(DAEMON, work)
        with open(os.path.join(work, "sparkprof_pyspark.json"), "w") as settings:
            settings.write('{"spool": "%s", "interval_ms": %d}' % (spool, args.interval_ms))
        sys.path.insert(0, work)
        import sparkprof_pyspark_daemon as daemon
        files = 0
        for task in range(args.tasks):
            daemon._spark_worker = lambda sock, authenticated, t=task: (run_task(t, args.rows), 0)[1]
            daemon._profiled_worker(None, False)
            for name in os.listdir(spool):  # the executor's part: read and delete
                with open(os.path.join(spool, name), "rb") as handle:
                    handle.read()
                os.unlink(os.path.join(spool, name))
                files += 1
        if files != args.tasks or daemon._sampler is None or daemon._sampler.failed:
            print("sampler did not write one file per task: %d files" % files, file=sys.stderr)
            return 1
        if args.report:
            import time
            import threading
            sampler_cpu = time.clock_gettime(time.pthread_getcpuclockid(daemon._sampler.thread.ident))
            main_cpu = time.clock_gettime(time.pthread_getcpuclockid(threading.get_ident()))
            print("sampler thread CPU %.3f s, main thread CPU %.3f s: %.2f%%"
                  % (sampler_cpu, main_cpu, 100 * sampler_cpu / main_cpu))
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
