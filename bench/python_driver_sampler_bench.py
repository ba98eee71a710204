#!/usr/bin/env python3
"""The cost of sparkprof's Python driver sampler to the driver program, as one whole process.

    bench/python_driver_sampler_bench.py {plain|report} [--rows N]

`plain` runs a driver program's own per-row Python work (the workloads' score_on_driver: a
string hashed character by character, 40 rounds a row) for N rows. Timed paired, whole process,
under the sampler and without it (bench/RESULTS.md, "Python driver sampler"):

    PY=build/spark/4.2.0/venv/bin/python
    farm-bench -n 10 --timeout 600 \\
        --vs "$PY bench/python_driver_sampler_bench.py plain" \\
        -- $PY spark-plugin/src/main/python/sparkprof_driver.py \\
           bench/python_driver_sampler_bench.py plain

`report` runs the same work in this process with the sampler started as sparkprof_driver.main
starts it, and prints the sampler thread's own CPU against the main thread's. No SparkContext
exists here: the window's stacks stay in the sampler (bounded), as before a real program's first
SparkContext. Needs pyspark (the Spark venv of scripts/install-spark.sh).
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.join(HERE, "..", "spark-plugin", "src", "main", "python")


def score(rows):
    total = 0
    for row in range(rows):
        value = 0
        for _ in range(40):
            for character in "order-%d" % row:
                value = (value * 31 + ord(character)) % 1_000_000_007
        total ^= value
    return total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["plain", "report"])
    parser.add_argument("--rows", type=int, default=100_000)
    args = parser.parse_args()
    if args.mode == "plain":
        print(score(args.rows))
        return 0
    sys.path.insert(0, PYTHON_DIR)
    import sparkprof_driver
    sampler = sparkprof_driver.start()
    if sampler is None:
        return 1
    main_clock = time.pthread_getcpuclockid(sampler.main_ident)
    sampler_clock = time.pthread_getcpuclockid(sampler.thread.ident)
    main_before = time.clock_gettime_ns(main_clock)
    sampler_before = time.clock_gettime_ns(sampler_clock)
    print(score(args.rows))
    main_ns = time.clock_gettime_ns(main_clock) - main_before
    sampler_ns = time.clock_gettime_ns(sampler_clock) - sampler_before
    print("main thread CPU %.2f s, sampler thread CPU %.1f ms (%.2f%%), %d samples (%.3f ms each)"
          % (main_ns / 1e9, sampler_ns / 1e6, 100.0 * sampler_ns / max(main_ns, 1),
             sampler.samples, sampler_ns / 1e6 / max(sampler.samples, 1)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
