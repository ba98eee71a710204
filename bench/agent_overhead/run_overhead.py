#!/usr/bin/env python3
"""Agent overhead benchmark: interleaved pairs of the same fixed workload with and without
libsparkprof.so, at 10 ms and 1 ms. Reports the median CPU-time (user+sys) ratio, the median
max-RSS difference, and the per-sample cost from the agent's own counters; then, from the agent
runs' profiles, how much of the process CPU the profile's time accounts for, the share of walks
that failed (by kind) or kept only their outer frames, and each category's share of the process
CPU (gc, jit and vm are the JVM's own threads). Prints Markdown.

With --async-profiler LIB (scripts/install-async-profiler.sh), each group also runs the workload
under async-profiler (its ctimer engine by default: per-thread CPU timers like sparkprof's; same
interval, collapsed output with thread names) in the same random order, and a side-by-side table
compares CPU overhead, samples on Java threads, incomplete walks by kind (async-profiler marks them
with frames such as [unknown_Java], [deoptimization] or [break_stack_range]) and category shares.
async-profiler's Java-thread stacks are classified by the sparkprof CLI given as --sparkprof
(`flamegraph --format collapsed`: the agent's own frame rules).

  run_overhead.py --lib libsparkprof.so --classes DIR [--pairs 10] [--threads 2] [--rounds 60]
                  [--workload plain|serialization] [--java JAVA]
                  [--async-profiler libasyncProfiler.so --sparkprof build/cli/sparkprof]
"""
import argparse
import json
import os
import random
import re
import statistics
import subprocess
import tempfile


def run_once(args, agentpath):
    command = [args.java, "-Xmx256m"]
    if agentpath is not None:
        command.append("-agentpath:" + agentpath)
    command += ["-cp", args.classes, "OverheadWorkload", str(args.threads), str(args.rounds),
                args.workload]
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
    reference = {"ratios": [], "profiles": []}
    with tempfile.TemporaryDirectory() as work:
        for pair in range(args.pairs):
            out = os.path.join(work, "p%d" % pair)
            agentpaths = {"none": None,
                          "sparkprof": "%s=interval=%s,out=%s" % (args.lib, interval, out)}
            if args.async_profiler:
                agentpaths["async-profiler"] = "%s=start,event=%s,interval=%s,threads,file=%s" % (
                    args.async_profiler, args.async_profiler_event, interval,
                    out + "-ap.collapsed")
            order = list(agentpaths)
            random.shuffle(order)  # interleaved, random order inside each group
            results = {name: run_once(args, agentpaths[name]) for name in order}
            (base_cpu, base_rss), (agent_cpu, agent_rss) = results["none"], results["sparkprof"]
            cpu_without.append(base_cpu)
            cpu_with.append(agent_cpu)
            ratios.append(agent_cpu / base_cpu)
            rss_deltas.append(agent_rss - base_rss)
            with open(out + ".json") as f:
                profile = json.load(f)
            profile["process_cpu_s"] = agent_cpu
            profiles.append(profile)
            health.append(profile["health"])
            if args.async_profiler:
                reference["ratios"].append(results["async-profiler"][0] / base_cpu)
                reference["profiles"].append(
                    read_async_profiler(out + "-ap.collapsed", args.sparkprof))
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
        "ratios": ratios,
        "median_rss_delta_mib": statistics.median(rss_deltas) / 2**20,
        "samples_per_run": per_pair_samples,
        "walk_ns_per_sample": walk_ns / samples if samples else 0,
        "total_ns_per_sample": (extra_cpu_s * 1e9 / per_pair_samples) if per_pair_samples else 0,
        "native_memory_mib": statistics.median(h["native_memory_bytes"] for h in health) / 2**20,
        "dropped": sum(h["samples_dropped_ring_full"] for h in health),
        "fidelity": fidelity(profiles),
        "reference": reference if args.async_profiler else None,
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
        "partial": {k: v / max(walked, 1) for k, v in sorted(walks["partial"].items())},
        "categories": {k: v / process_ns for k, v in sorted(category_ns.items())},
        "category_ns": dict(sorted(category_ns.items())),
    }


# A frame async-profiler puts where a walk stopped: AsyncGetCallTrace's error codes and its own
# VM-structure walker's breaks (src/profiler.cpp asgctError, src/stackWalker.cpp). "[unknown]"
# is not one: a native frame whose symbol is unknown, the walk went on.
ASYNC_PROFILER_MARKER = re.compile(
    r"^\[(unknown_Java|not_walkable_Java|unknown_not_Java|not_walkable_not_Java|deoptimization|"
    r"GC_active|safepoint|skipped|thread_exit|unknown_state|unexpected_state|unknown_nmethod|"
    r"break_[a-z_]+)\]$")
# async-profiler's `threads` option puts "[NAME tid=N]" at the root; NAME is the 15-byte comm.
THREAD_FRAME = re.compile(r"^\[(.*) tid=\d+\]$")
# The JVM's own threads by name, as the agent sorts them (native-agent/jvm_internal_threads.cc
# holds the full list; these prefixes cover what G1 and C1/C2 start on JDK 17-25).
JVM_THREAD_PREFIXES = (("gc", ("GC Thread#", "G1 ", "ParGC Thread#")),
                       ("jit", ("C1 CompilerThre", "C2 CompilerThre", "Sweeper thread")),
                       ("vm", ("VM Thread", "VM Periodic Tas", "Service Thread",
                               "Monitor Deflati")))


def jvm_thread_category(name):
    for category, prefixes in JVM_THREAD_PREFIXES:
        if name.startswith(prefixes):
            return category
    return None


def classify_java_stacks(stacks, sparkprof):
    """{category: samples} of collapsed Java-thread stacks, by the sparkprof CLI's classifier."""
    if not sparkprof or not stacks:
        return {}
    text = "".join("%s %d\n" % (stack, count) for stack, count in stacks.items())
    with tempfile.NamedTemporaryFile("w", suffix=".collapsed") as f:
        f.write(text)
        f.flush()
        output = subprocess.run([sparkprof, "flamegraph", f.name, "--format", "collapsed",
                                 "-o", "-"], capture_output=True, text=True, check=True).stdout
    categories = {}
    for line in output.splitlines():
        stack, _, count = line.rpartition(" ")
        match = re.match(r"^\[category=(\w+)\]", stack)
        category = match.group(1) if match else "other"
        categories[category] = categories.get(category, 0) + int(count)
    return categories


def read_async_profiler(path, sparkprof):
    """Samples, incomplete walks by marker and categories of one async-profiler collapsed file.
    Only Java threads' samples count as walks (sparkprof walks no other thread)."""
    java_samples, markers, categories, java_stacks = 0, {}, {}, {}
    with open(path) as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            frames = stack.split(";")
            count = int(count)
            thread = THREAD_FRAME.match(frames[0])
            jvm_category = jvm_thread_category(thread.group(1)) if thread else None
            if jvm_category:
                categories[jvm_category] = categories.get(jvm_category, 0) + count
                continue
            frames = frames[1:] if thread else frames
            java_samples += count
            marker = next((m for m in frames if ASYNC_PROFILER_MARKER.match(m)), None)
            if marker:
                markers[marker] = markers.get(marker, 0) + count
            if not frames:  # the thread's name alone: nothing to classify
                categories["other"] = categories.get("other", 0) + count
                continue
            key = ";".join(frames)
            java_stacks[key] = java_stacks.get(key, 0) + count
    for category, count in classify_java_stacks(java_stacks, sparkprof).items():
        categories[category] = categories.get(category, 0) + count
    return {"java_samples": java_samples, "markers": markers, "categories": categories}


def side_by_side(r):
    """Rows comparing sparkprof with async-profiler over the same groups."""
    f, ref = r["fidelity"], r["reference"]
    runs = len(ref["profiles"])
    ap_java = sum(p["java_samples"] for p in ref["profiles"])
    ap_markers, ap_categories = {}, {}
    for p in ref["profiles"]:
        for k, v in p["markers"].items():
            ap_markers[k] = ap_markers.get(k, 0) + v
        for k, v in p["categories"].items():
            ap_categories[k] = ap_categories.get(k, 0) + v
    ap_total = sum(ap_categories.values())
    sp_total = sum(f["category_ns"].values())
    return [
        ("sparkprof", r["median_ratio"], min(r["ratios"]), max(r["ratios"]),
         f["walked"] / len(r["ratios"]), f["failed_share"] + f["partial_share"],
         "failed %s (%s); partial %s (%s)" % (
             percent(f["failed_share"]), kinds(f["failed"]), percent(f["partial_share"]),
             kinds(f["partial"])),
         kinds({k: v / sp_total for k, v in f["category_ns"].items()})),
        ("async-profiler", statistics.median(ref["ratios"]), min(ref["ratios"]),
         max(ref["ratios"]), ap_java / runs, sum(ap_markers.values()) / max(ap_java, 1),
         kinds({k: v / max(ap_java, 1) for k, v in sorted(ap_markers.items())}),
         kinds({k: v / max(ap_total, 1) for k, v in sorted(ap_categories.items())})),
    ]


def kinds(shares):
    return ", ".join("%s %s" % (k, percent(v)) for k, v in shares.items()) or "-"


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
    parser.add_argument("--workload", choices=("plain", "serialization"), default="plain")
    parser.add_argument("--async-profiler", help="libasyncProfiler.so: also run it side by side")
    parser.add_argument("--async-profiler-event", default="ctimer",
                        help="its CPU engine: ctimer (default), itimer or cpu (perf_events)")
    parser.add_argument("--sparkprof", help="the sparkprof CLI, to classify async-profiler's "
                        "stacks into categories (without it: JVM-thread categories only)")
    args = parser.parse_args()
    rows = [measure(args, interval) for interval in args.intervals.split(",")]
    print("| interval | pairs | median CPU without (s) | median CPU with (s) "
          "| median ratio (min..max) | median max-RSS delta (MiB) | agent native memory (MiB) "
          "| samples/run | walk ns/sample | est. total ns/sample | dropped |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        row = ("| %s | %d | %.2f | %.2f | %.4f (%.3f..%.3f) | %.1f | %.1f | %.0f | %.0f | %.0f "
               "| %d |")
        print(row % (r["interval"], r["pairs"], r["cpu_without_s"], r["cpu_with_s"],
                     r["median_ratio"], r["min_ratio"], r["max_ratio"], r["median_rss_delta_mib"],
                     r["native_memory_mib"], r["samples_per_run"], r["walk_ns_per_sample"],
                     r["total_ns_per_sample"], r["dropped"]))
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
    if not args.async_profiler:
        return
    print()
    print("| interval | profiler | median CPU ratio (min..max) | Java-thread samples/run "
          "| incomplete walks | by kind | category shares of the profile |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        for name, ratio, low, high, samples, incomplete, by_kind, shares in side_by_side(r):
            print("| %s | %s | %.4f (%.3f..%.3f) | %.0f | %s | %s | %s |" % (
                r["interval"], name, ratio, low, high, samples, percent(incomplete), by_kind,
                shares))


if __name__ == "__main__":
    main()
