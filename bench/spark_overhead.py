#!/usr/bin/env python3
"""What sparkprof costs a real Spark application: the demo application (demo/) on one local
standalone cluster (a Master, two Workers of 1 core and 1 GiB), run in pairs, alternately with and
without the agent and the plugin (the order flips every pair, so drift hits both sides alike).

Per run: wall time (spark-submit start to exit), the demo's own job durations (it prints each
job's wall time), CPU of the driver JVM (rusage) and of the executor JVMs (/proc, every second),
the tasks' executor CPU time from Spark's event log (`sparkprof analyze`), and, with the plugin,
Spark's own timer of the plugin's listener (LiveListenerBus listenerProcessingTime, read from
the driver UI's /metrics/json just before the end). Prints the median of the paired ratios
(with / without), never a timed assertion.

Usage: bench/spark_overhead.py --spark-home build/spark/3.5.9/home \
         --agent build/native-agent/libsparkprof.so --plugin-jar build/spark-plugin/sparkprof-plugin.jar \
         --demo-jar build/demo/sparkprof-demo.jar --sparkprof build/cli/sparkprof [--pairs 3]

--modes (issue 28's budget: wall + CPU sampling at the defaults <= 2% of the executors' CPU): each
of --pairs rounds runs, in an order that rotates every round, the same application without any
profiler (the baseline), with sparkprof (agent + plugin, so task threads are tagged) in mode=cpu,
with sparkprof at the defaults (mode=cpu+wall), and, given --async-profiler LIB
(scripts/install-async-profiler.sh), with async-profiler's CPU + wall mode on the executors
(event=cpu,wall=INTERVAL, JFR output). Prints, per variant, the median over rounds of the ratio of
executor CPU, wall time and job durations to the same round's baseline. --sparkprof is not needed.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e"))
from demo_run import SparkprofFiles, run_demo  # noqa: E402
from spark_cluster import SparkCluster, read_tail  # noqa: E402

JOB_LINE = re.compile(r"^sparkprof-demo: ([a-z-]+): ([0-9.]+) s$", re.M)
PLUGIN_LISTENER_LINE = re.compile(r"^sparkprof: listener: (.*)$", re.M)
LISTENER = "io.sparkprof.SparkProfListener"
JIT_THREADS = ("C1 CompilerThre", "C2 CompilerThre")  # thread_group names of HotSpot's compilers
SPARK_LISTENERS = ["org.apache.spark.scheduler.EventLoggingListener",
                   "org.apache.spark.status.AppStatusListener"]


def listener_timers(metrics_json):
    """{listener class: (events, mean ms)} of Spark's LiveListenerBus timers."""
    timers = {}
    if not metrics_json:
        return timers
    for name, timer in json.loads(metrics_json).get("timers", {}).items():
        marker = ".LiveListenerBus.listenerProcessingTime."
        if marker in name:
            timers[name.split(marker, 1)[1]] = (timer["count"], timer["mean"])
    return timers


def measure(run, sparkprof):
    if run.exit_code != 0 or not run.event_log:
        raise RuntimeError(f"{run.run_dir}: spark-submit exited {run.exit_code}\n"
                           f"{read_tail(run.driver_log)}")
    driver_log = read_tail(run.driver_log, 10**8)
    jobs = {kind: float(s) for kind, s in JOB_LINE.findall(driver_log)}
    plugin_line = PLUGIN_LISTENER_LINE.search(driver_log)
    report_path = os.path.join(run.run_dir, "eventlog-report.json")
    subprocess.run([sparkprof, "analyze", run.event_log, "--format", "json", "-o", report_path,
                    "-q"], check=True, timeout=300)
    with open(report_path) as f:
        report = json.load(f)
    return {
        "wall_s": run.wall_s,
        "jobs_s": sum(jobs.values()),
        "jobs": jobs,
        "cpu_s": run.driver_cpu_s + run.executors_cpu_s,
        "driver_cpu_s": run.driver_cpu_s,
        "executors_cpu_s": run.executors_cpu_s,
        "task_cpu_s": report["totals"]["executor_cpu_time_ns"] / 1e9,
        "tasks": report["counts"]["task_attempts"],
        "listeners": listener_timers(run.spark_metrics),
        "load": os.getloadavg()[0],
        "plugin_listener": plugin_line.group(1) if plugin_line else "",
    }


def agent_cpu(run):
    """The live report's profile.agent_cpu (the agents' own CPU against their JVMs'), or None."""
    path = os.path.join(run.app_output_dir, "report.json") if run.output_dir else ""
    try:
        with open(path) as f:
            return json.load(f).get("profile", {}).get("agent_cpu")
    except (OSError, ValueError):
        return None


def print_thread_groups(results, names, top=14):
    """Where the extra executor CPU went: per thread-name group, the median over rounds of each
    variant's CPU seconds less the same round's baseline, the groups that moved most first."""
    groups = {g for r in results for name in names for g in r[name]["threads"]}
    diffs = {}
    for name in names[1:]:
        for group in groups:
            diffs[(name, group)] = statistics.median(
                r[name]["threads"].get(group, 0.0) - r["baseline"]["threads"].get(group, 0.0)
                for r in results)
    base = {g: statistics.median(r["baseline"]["threads"].get(g, 0.0) for r in results)
            for g in groups}
    order = sorted(groups, key=lambda g: -max(abs(diffs[(n, g)]) for n in names[1:]))
    print()
    print("executor CPU by thread group: baseline seconds, and each variant's median difference "
          "to it (s)")
    print("| thread group | baseline | " + " | ".join(names[1:]) + " |")
    print("|---|---|" + "---|" * (len(names) - 1))
    for group in order[:top]:
        print(f"| {group} | {base[group]:.2f} | " +
              " | ".join(f"{diffs[(n, group)]:+.2f}" for n in names[1:]) + " |")
    print(f"| (all) | {sum(base.values()):.2f} | " +
          " | ".join(f"{sum(diffs[(n, g)] for g in groups):+.2f}" for n in names[1:]) + " |")


def compare_modes(args, cluster, work):
    """--modes: baseline, sparkprof cpu, sparkprof cpu+wall, async-profiler cpu+wall."""
    interval = "interval=" + args.interval
    variants = {
        "baseline": (False, SparkprofFiles(args.agent, args.plugin_jar)),
        "sparkprof cpu": (True, SparkprofFiles(args.agent, args.plugin_jar,
                                               agent_options="mode=cpu," + interval)),
        "sparkprof cpu+wall": (True, SparkprofFiles(args.agent, args.plugin_jar,
                                                    agent_options="mode=cpu+wall," + interval)),
    }
    if args.async_profiler:
        variants["async-profiler cpu+wall"] = (False, SparkprofFiles(
            args.agent, args.plugin_jar, executor_java_options=(
                f"-agentpath:{os.path.abspath(args.async_profiler)}=start,event=cpu,"
                f"interval={args.interval},wall={args.interval},file={work}/ap-%p.jfr")))
    names = list(variants)
    print(f"Spark {cluster.version}, demo scale {args.scale}, {args.pairs} rounds of "
          f"{len(names)} runs; work dir {work}", flush=True)
    results = []
    for index in range(args.pairs):
        measured = {}
        for name in names[index % len(names):] + names[:index % len(names)]:
            profiled, files = variants[name]
            run = run_demo(cluster, args.demo_jar, files,
                           os.path.join(work, f"round-{index}-{name.replace(' ', '-')}"), profiled,
                           scale=args.scale)
            if run.exit_code != 0 or not run.event_log:
                raise RuntimeError(f"{run.run_dir}: spark-submit exited {run.exit_code}\n"
                                   f"{read_tail(run.driver_log)}")
            jobs = JOB_LINE.findall(read_tail(run.driver_log, 10**8))
            m = measured[name] = {"executors_cpu_s": run.executors_cpu_s, "wall_s": run.wall_s,
                                  "jobs_s": sum(float(s) for _, s in jobs),
                                  "threads": run.executor_threads_cpu_s}
            # The JIT compilers' threads hold a third of this short application's CPU and vary
            # by seconds from run to run (what gets compiled when): the ratio without them too.
            m["no_jit_cpu_s"] = m["executors_cpu_s"] - sum(
                cpu for group, cpu in m["threads"].items() if group.startswith(JIT_THREADS))
            own = agent_cpu(run) if profiled else None
            if own:
                m["agent_share"] = own["share"]
            print(f"round {index} {name:>24}: executors CPU {m['executors_cpu_s']:6.2f} s, wall "
                  f"{m['wall_s']:6.1f} s, jobs {m['jobs_s']:6.1f} s; load average "
                  f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores" +
                  (f"; the agents' own CPU {own['ms'] / 1000:.2f} s of their JVMs' "
                   f"{own['jvm_cpu_ms'] / 1000:.1f} s ({100 * own['share']:.2f}%)" if own else ""),
                  flush=True)
        results.append(measured)
    print()
    print(f"median over {len(results)} rounds of the ratio to the same round's baseline, "
          f"Spark {cluster.version}, interval {args.interval}:")
    print("| variant | executors' CPU | without the JIT compilers' threads | wall time | "
          "the demo's jobs |")
    print("|---|---|---|---|---|")
    for name in names[1:]:
        cells = []
        for key in ("executors_cpu_s", "no_jit_cpu_s", "wall_s", "jobs_s"):
            ratios = [r[name][key] / r["baseline"][key] for r in results if r["baseline"][key] > 0]
            cells.append(f"{statistics.median(ratios):.3f} "
                         f"({', '.join(f'{x:.3f}' for x in ratios)})")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print_thread_groups(results, names)
    for name in names[1:]:
        shares = [r[name]["agent_share"] for r in results if "agent_share" in r[name]]
        if shares:
            print(f"{name}: the agents' own CPU (report.json profile.agent_cpu), share of their "
                  f"JVMs' CPU: median {100 * statistics.median(shares):.2f}% "
                  f"({', '.join(f'{100 * x:.2f}%' for x in shares)})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spark-home", required=True)
    parser.add_argument("--java-home", default=os.environ.get("JAVA_HOME", ""))
    parser.add_argument("--agent", required=True)
    parser.add_argument("--plugin-jar", required=True)
    parser.add_argument("--demo-jar", required=True)
    parser.add_argument("--sparkprof", help="the CLI, for the tasks' CPU (not with --modes)")
    parser.add_argument("--pairs", type=int, default=3, help="pairs, or with --modes rounds")
    parser.add_argument("--modes", action="store_true",
                        help="compare mode=cpu, mode=cpu+wall and async-profiler (see above)")
    parser.add_argument("--async-profiler", default="", help="libasyncProfiler.so, with --modes")
    parser.add_argument("--interval", default="10ms", help="the sampling interval, with --modes")
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--work-dir", default="build/bench-spark-overhead")
    args = parser.parse_args()

    work = os.path.abspath(args.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    cluster = SparkCluster(args.spark_home, work, args.java_home or None)
    if args.modes:
        try:
            cluster.start_master()
            cluster.start_workers(2, 1, "1g")
            compare_modes(args, cluster, work)
        finally:
            cluster.stop()
        return 0
    if not args.sparkprof:
        parser.error("--sparkprof is needed (without --modes)")
    files = SparkprofFiles(args.agent, args.plugin_jar)
    print(f"Spark {cluster.version}, demo scale {args.scale}, {args.pairs} pairs; work dir {work}",
          flush=True)
    results = []
    try:
        cluster.start_master()
        cluster.start_workers(2, 1, "1g")
        for pair in range(args.pairs):
            order = (True, False) if pair % 2 == 0 else (False, True)
            measured = {}
            for profiled in order:
                name = f"pair-{pair}-{'with' if profiled else 'without'}"
                run = run_demo(cluster, args.demo_jar, files, os.path.join(work, name), profiled,
                               scale=args.scale, spark_metrics=True)
                measured[profiled] = measure(run, args.sparkprof)
                m = measured[profiled]
                print(f"{name:>20}: wall {m['wall_s']:6.1f} s, jobs {m['jobs_s']:6.1f} s, CPU "
                      f"{m['cpu_s']:6.1f} s (driver {m['driver_cpu_s']:.1f}, executors "
                      f"{m['executors_cpu_s']:.1f}), task CPU {m['task_cpu_s']:.1f} s; load average "
                      f"{m['load']:.1f} on {os.cpu_count()} cores", flush=True)
            results.append(measured)
    finally:
        cluster.stop()

    print()
    print(f"median of {len(results)} paired ratios (with sparkprof / without), Spark {cluster.version}:")
    for key, what in (("wall_s", "wall time, spark-submit start to exit"),
                      ("jobs_s", "the demo's job durations, summed"),
                      ("cpu_s", "CPU of the driver and executor JVMs"),
                      ("driver_cpu_s", "CPU of the driver JVM"),
                      ("executors_cpu_s", "CPU of the executor JVMs"),
                      ("task_cpu_s", "tasks' executor CPU time (event log)")):
        ratios = [r[True][key] / r[False][key] for r in results if r[False][key] > 0]
        print(f"  {statistics.median(ratios):6.3f}  {what} (pairs: "
              f"{', '.join(f'{x:.3f}' for x in ratios)})")
    for kind in sorted(results[0][True]["jobs"]):
        ratios = [r[True]["jobs"][kind] / r[False]["jobs"][kind] for r in results
                  if r[False]["jobs"].get(kind)]
        print(f"  {statistics.median(ratios):6.3f}  job {kind}")

    print()
    print("Spark's own timer of listeners on the driver (LiveListenerBus listenerProcessingTime, "
          "mean per event), runs with sparkprof; then the plugin's own log line:")
    for index, r in enumerate(results):
        timers = r[True]["listeners"]
        tasks = r[True]["tasks"]
        shown = []
        for listener in [LISTENER] + SPARK_LISTENERS:
            if listener in timers:
                events, mean_ms = timers[listener]
                shown.append(f"{listener.rsplit('.', 1)[1]} {events} events, "
                             f"{mean_ms * 1000:.0f} us each ({events * mean_ms / tasks:.1f} ms per "
                             f"task)")
            else:
                shown.append(f"{listener.rsplit('.', 1)[1]}: no timer")
        print(f"  pair {index}: " + "; ".join(shown))
        print(f"          {r[True]['plugin_listener']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
