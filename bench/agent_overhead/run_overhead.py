#!/usr/bin/env python3
"""Agent overhead benchmark: interleaved pairs of the same fixed workload with and without
libsparkprof.so, at 10 ms and 1 ms. Reports the median CPU-time (user+sys) ratio, the median
max-RSS difference, and the per-sample cost from the agent's own counters; then, from the agent
runs' profiles, how much of the process CPU the profile's time accounts for, the share of walks
that failed (by kind) or kept only their outer frames, and each category's share of the process
CPU (gc, jit and vm are the JVM's own threads). Prints Markdown.

  run_overhead.py --lib libsparkprof.so --classes DIR [--pairs 10] [--threads 2] [--rounds 60]
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import tempfile


def run_once(args, agent_options):
    command = [args.java, "-Xmx256m"]
    if agent_options is not None:
        command.append("-agentpath:%s=%s" % (args.lib, agent_options))
    command += ["-cp", args.classes, "OverheadWorkload", str(args.threads), str(args.rounds)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    stderr = process.stderr.read().decode()
    process.stderr.close()
    if status != 0:
        raise SystemExit("workload failed (%d): %s" % (status, stderr))
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def measure(args, interval):
    ratios, rss_deltas, health, profiles = [], [], [], []
    cpu_without, cpu_with = [], []
    with tempfile.TemporaryDirectory() as work:
        for pair in range(args.pairs):
            out = os.path.join(work, "p%d" % pair)
            options = "interval=%s,out=%s" % (interval, out)
            order = [None, options]
            random.shuffle(order)  # interleaved, random order inside each pair
            results = {}
            for agent_options in order:
                results[agent_options is not None] = run_once(args, agent_options)
            (base_cpu, base_rss), (agent_cpu, agent_rss) = results[False], results[True]
            cpu_without.append(base_cpu)
            cpu_with.append(agent_cpu)
            ratios.append(agent_cpu / base_cpu)
            rss_deltas.append(agent_rss - base_rss)
            with open(out + ".json") as f:
                profile = json.load(f)
            profile["process_cpu_s"] = agent_cpu
            profiles.append(profile)
            health.append(profile["health"])
    samples = sum(h["samples_taken"] for h in health)
    walk_ns = sum(h["walk_time_ns_total"] for h in health)
    extra_cpu_s = statistics.median(cpu_with) - statistics.median(cpu_without)
    per_pair_samples = samples / len(health)
    return {
        "interval": interval,
        "pairs": args.pairs,
        "cpu_without_s": statistics.median(cpu_without),
        "cpu_with_s": statistics.median(cpu_with),
        "median_ratio": statistics.median(ratios),
        "min_ratio": min(ratios),
        "max_ratio": max(ratios),
        "median_rss_delta_mib": statistics.median(rss_deltas) / 2**20,
        "samples_per_run": per_pair_samples,
        "walk_ns_per_sample": walk_ns / samples if samples else 0,
        "total_ns_per_sample": (extra_cpu_s * 1e9 / per_pair_samples) if per_pair_samples else 0,
        "native_memory_mib": statistics.median(h["native_memory_bytes"] for h in health) / 2**20,
        "dropped": sum(h["samples_dropped_ring_full"] for h in health),
        "fidelity": fidelity(profiles),
    }


def fidelity(profiles):
    """Time accounting, walk outcomes and category shares over the agent runs' profiles."""
    accounted, walks = [], {"complete": 0, "partial": {}, "failed": {}}
    category_ns, process_ns = {}, 0.0
    for profile in profiles:
        thread_ns = 0
        for thread in profile["threads"]:
            for category, totals in thread["categories"].items():
                thread_ns += totals["time_ns"]
                category_ns[category] = category_ns.get(category, 0) + totals["time_ns"]
        process_ns += profile["process_cpu_s"] * 1e9
        accounted.append(thread_ns / (profile["process_cpu_s"] * 1e9))
        walks["complete"] += profile["walks"]["complete"]
        for outcome in ("partial", "failed"):
            for kind, count in profile["walks"][outcome].items():
                walks[outcome][kind] = walks[outcome].get(kind, 0) + count
    walked = walks["complete"] + sum(walks["partial"].values()) + sum(walks["failed"].values())
    return {
        "accounted": statistics.median(accounted),
        "walked": walked,
        "failed_share": sum(walks["failed"].values()) / max(walked, 1),
        "failed": {k: v / max(walked, 1) for k, v in sorted(walks["failed"].items())},
        "partial_share": sum(walks["partial"].values()) / max(walked, 1),
        "categories": {k: v / process_ns for k, v in sorted(category_ns.items())},
    }


def percent(share):
    return "%.2f%%" % (100 * share)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--java", default="java")
    parser.add_argument("--lib", required=True)
    parser.add_argument("--classes", required=True)
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--intervals", default="10ms,1ms")
    args = parser.parse_args()
    rows = [measure(args, interval) for interval in args.intervals.split(",")]
    print("| interval | pairs | median CPU without (s) | median CPU with (s) | median ratio (min..max) "
          "| median max-RSS delta (MiB) | agent native memory (MiB) | samples/run | walk ns/sample "
          "| est. total ns/sample | dropped |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %d | %.2f | %.2f | %.4f (%.3f..%.3f) | %.1f | %.1f | %.0f | %.0f | %.0f | %d |" % (
            r["interval"], r["pairs"], r["cpu_without_s"], r["cpu_with_s"], r["median_ratio"],
            r["min_ratio"], r["max_ratio"], r["median_rss_delta_mib"], r["native_memory_mib"],
            r["samples_per_run"], r["walk_ns_per_sample"], r["total_ns_per_sample"], r["dropped"]))
    print()
    print("| interval | profiled time / process CPU (median) | walks | failed | failed by kind "
          "| partial (outer frames kept) | category shares of process CPU |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        f = r["fidelity"]
        print("| %s | %.3f | %d | %s | %s | %s | %s |" % (
            r["interval"], f["accounted"], f["walked"], percent(f["failed_share"]),
            ", ".join("%s %s" % (k, percent(v)) for k, v in f["failed"].items()) or "-",
            percent(f["partial_share"]),
            ", ".join("%s %s" % (k, percent(v)) for k, v in f["categories"].items())))


if __name__ == "__main__":
    main()
