#!/usr/bin/env python3
"""Runs one JVM test case of the sparkprof agent: starts a real JVM with -agentpath, then checks
exit code, stderr and the PATH.collapsed / PATH.json outputs. Usage:
  run_agent_case.py --java JAVA --lib libsparkprof.so --classes DIR --work DIR CASE
"""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import time


def fail(message, run=None):
    print("FAIL:", message)
    if run is not None:
        print("--- stdout ---\n" + run.stdout[-4000:])
        print("--- stderr ---\n" + run.stderr[-4000:])
    sys.exit(1)


class Case:
    def __init__(self, args, name):
        self.args = args
        self.name = name
        self.work = os.path.join(args.work, name)
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)
        self.out = os.path.join(self.work, "profile")

    def run(self, agent_options, workload, jvm_flags=(), agentpaths=None, timeout=120):
        command = [self.args.java, "-Xss1m"] + list(jvm_flags)
        if agentpaths is None:
            agentpaths = [self.args.lib]
        for path in agentpaths:
            command.append("-agentpath:" + path + ("=" + agent_options if agent_options else ""))
        command += ["-cp", self.args.classes, "AgentWorkloads"] + [str(w) for w in workload]
        started = time.monotonic()
        run = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        run.seconds = time.monotonic() - started
        print("$", " ".join(command), f"-> exit {run.returncode} in {run.seconds:.1f}s")
        if run.returncode != 0:
            fail("the JVM exited with %d" % run.returncode, run)
        if "hs_err" in run.stdout + run.stderr or "SIGSEGV" in run.stderr:
            fail("the JVM reported a crash", run)
        return run

    def profile(self, run):
        try:
            with open(self.out + ".json") as f:
                profile = json.load(f)
            with open(self.out + ".collapsed") as f:
                collapsed = f.read()
        except (OSError, ValueError) as e:
            fail("outputs missing or invalid: %s" % e, run)
        health = profile["health"]
        print("samples=%d stacks=%d walk_avg_ns=%d dropped_ring_full=%d walk_failed=%d crashes=%d "
              "threads=%d memory=%d" % (
                  profile["samples"], profile["distinct_stacks"], health["walk_time_ns_avg"],
                  health["samples_dropped_ring_full"], health["samples_walk_failed"],
                  health["walk_crashes_recovered"], health["threads_registered"],
                  health["native_memory_bytes"]))
        return profile, collapsed


def top_category(categories):
    interesting = {k: v["samples"] for k, v in categories.items() if k != "other"}
    return max(interesting, key=interesting.get) if interesting else None


def check_collapsed_format(collapsed, run):
    for line in collapsed.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            fail("bad collapsed line %r" % line, run)


def case_serialization(c, interval="10ms", walker=None, min_samples=50):
    options = "interval=%s,out=%s" % (interval, c.out)
    if walker:
        options += ",walker=" + walker
    run = c.run(options, ["serialization", 3])
    profile, collapsed = c.profile(run)
    check_collapsed_format(collapsed, run)
    if profile["samples"] < min_samples:
        fail("only %d samples" % profile["samples"], run)
    top = top_category(profile["total"]["categories"])
    print("categories:", {k: v["samples"] for k, v in profile["total"]["categories"].items()})
    if top != "serialization":
        fail("top category is %s, expected serialization" % top, run)
    if "java.io.ObjectOutputStream.writeObject" not in collapsed:
        fail("ObjectOutputStream.writeObject missing from collapsed stacks", run)
    if os.path.exists(c.out + ".html"):  # only when flamegraph/ is part of the build
        with open(c.out + ".html") as f:
            html = f.read()
        if "<html" not in html.lower() or "ObjectOutputStream" not in html:
            fail("PATH.html does not show the profile", run)
        print("html bytes:", len(html))
    return profile


def case_interval_1ms(c):
    # CPU timers fire at most once per jiffy (HZ=100 here: 10 ms), so 1 ms yields more samples
    # than 10 ms only on HZ=1000 kernels; the point is that nothing breaks or overflows.
    profile = case_serialization(c, interval="1ms", min_samples=100)
    health = profile["health"]
    if health["samples_dropped_ring_full"] > 0.05 * health["samples_taken"]:
        fail("more than 5%% of samples dropped: %s" % health)


def case_jvmti_walker(c):
    case_serialization(c, walker="jvmti", min_samples=30)


def case_threads_500(c):
    run = c.run("interval=10ms,out=" + c.out, ["threads", 1, 500])
    profile, _ = c.profile(run)
    if profile["health"]["threads_registered"] < 500:
        fail("only %d threads registered" % profile["health"]["threads_registered"], run)
    if "threads=500" not in run.stdout:
        fail("workload did not finish", run)


def case_class_churn(c):
    run = c.run("interval=2ms,out=" + c.out, ["classchurn", 3],
                jvm_flags=["-Xlog:class+unload=info:file=%s/unload.log" % c.work])
    profile, collapsed = c.profile(run)
    with open(os.path.join(c.work, "unload.log")) as f:
        unloaded = sum(1 for line in f if "ChurnTarget" in line)
    print("ChurnTarget classes unloaded:", unloaded)
    if unloaded == 0:
        fail("no ChurnTarget class was unloaded: the test did not churn", run)
    if "ChurnTarget.getAsInt" not in collapsed:
        fail("samples in churned classes were not resolved by name", run)


def case_gc_churn(c):
    run = c.run("interval=10ms,out=" + c.out, ["gcchurn", 2], jvm_flags=["-Xmx64m", "-XX:+UseSerialGC"])
    profile, _ = c.profile(run)
    gc = profile["gc"]
    print("gc pauses=%d total_ms=%.1f" % (gc["pauses"], gc["total_pause_ns"] / 1e6))
    if gc["pauses"] < 3:
        fail("expected GC pauses, saw %d" % gc["pauses"], run)


def case_exit_while_sampling(c):
    run = c.run("interval=1ms,out=" + c.out, ["exit", 1])
    profile, _ = c.profile(run)
    if "exiting" not in run.stdout or profile["samples"] == 0:
        fail("no samples or no exit", run)


def case_tagged(c):
    run = c.run("interval=5ms,out=" + c.out, ["tagged", 2])
    profile, _ = c.profile(run)
    if "loaded=true" not in run.stdout:
        fail("NativeAgent.isLoaded() is false under -agentpath", run)
    batches = [l for l in run.stdout.splitlines() if l.startswith("batches=")]
    if not batches or batches[0].startswith("batches=0"):
        fail("drainBatch returned nothing", run)
    status_line = [l for l in run.stdout.splitlines() if l.startswith("status=")][0]
    status = json.loads(status_line[len("status="):])
    if not status["running"] or status["batches_encoded"] < 1:
        fail("bad status %s" % status, run)
    tasks = {t["task_attempt_id"]: t for t in profile["tasks"]}
    for task in (100, 101, 102, 103):
        if task not in tasks:
            fail("task %d has no samples; tasks=%s" % (task, sorted(tasks)), run)
        if tasks[task]["stage_id"] != 7:
            fail("task %d has stage %d" % (task, tasks[task]["stage_id"]), run)
        top = top_category(tasks[task]["categories"])
        expected = "serialization" if task % 2 == 0 else "compute"
        print("task", task, "top", top, {k: v["samples"] for k, v in tasks[task]["categories"].items()})
        if top != expected:
            fail("task %d top category %s, expected %s" % (task, top, expected), run)


def case_bad_options(c):
    run = c.run("interval=bogus,out=" + c.out, ["compute", 0.2])
    lines = [l for l in run.stderr.splitlines() if l.startswith("sparkprof:")]
    if len(lines) != 1 or "bad agent options" not in lines[0] or "interval" not in lines[0]:
        fail("expected one clear sparkprof line on stderr", run)
    if "done compute" not in run.stdout or os.path.exists(c.out + ".json"):
        fail("the JVM should run on without profiling", run)


def case_loaded_twice(c):
    copy = os.path.join(c.work, "libsparkprof-copy.so")
    shutil.copy(c.args.lib, copy)
    for paths in ([c.args.lib, c.args.lib], [c.args.lib, copy]):
        run = c.run("interval=10ms,out=" + c.out, ["compute", 0.5], agentpaths=paths)
        if run.stderr.count("already loaded") != 1:
            fail("the second agent did not decline exactly once", run)
        profile, _ = c.profile(run)
        if profile["samples"] == 0:
            fail("the first agent should still profile", run)


def case_wall_mode(c):
    run = c.run("mode=wall,interval=10ms,out=" + c.out, ["sleepers", 1])
    profile, collapsed = c.profile(run)
    sleeping = sum(int(l.rpartition(" ")[2]) for l in collapsed.splitlines() if "Thread.sleep" in l)
    print("samples in Thread.sleep:", sleeping)
    if sleeping < 50:
        fail("wall mode should sample sleeping threads", run)


def case_prometheus(c):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    run = c.run("interval=5ms,prometheus=127.0.0.1:%d" % port, ["prometheus", 1, port])
    for needle in ("# TYPE sparkprof_agent_samples_total counter", "sparkprof_agent_samples_total ",
                   "sparkprof_agent_gc_pause_seconds_bucket{le=\"+Inf\"}",
                   "sparkprof_agent_task_time_seconds_total{category=\"compute\"}"):
        if needle not in run.stdout:
            fail("missing %r in /metrics" % needle, run)


def case_no_agent(c):
    run = c.run(None, ["noagent"], agentpaths=[])
    if "loaded=false" not in run.stdout or "batch=null" not in run.stdout:
        fail("NativeAgent must be a no-op without the agent", run)


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--java", default="java")
    parser.add_argument("--lib", required=True)
    parser.add_argument("--classes", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("case", choices=sorted(CASES))
    args = parser.parse_args()
    CASES[args.case](Case(args, args.case))
    print("PASS", args.case)


if __name__ == "__main__":
    main()
