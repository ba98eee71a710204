#!/usr/bin/env python3
"""Runs the what-if validation suite (suite.json) on real Spark and keeps one event log per
workload and setting.

Every workload runs at its base setting and at each variant, each on a fresh standalone cluster
(the corpus's generate.run_workload: loopback Master and Workers, client-mode spark-submit,
zstd event log). Settings run in --repeats rounds over all of them; a setting whose runs' wall
times (application start to end, from the log) differ by more than --spread gets one more run
(up to --max-runs). The log kept is the median run's (of two: the faster, since a concurrent
build only ever slows a run down). runs.json next to the logs records every run's wall time and
the load average before it.

Exit codes: 0 every setting ran, 1 a run failed, 77 skipped (no Spark, Python or java).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.dirname(HERE)
sys.path.insert(0, CORPUS)
import generate as corpus  # noqa: E402  (tests/workloads/generate.py)

SUITE = os.path.join(HERE, "suite.json")
FIXTURES = os.path.join(HERE, "fixtures")


def load_suite(path=SUITE):
    with open(path) as f:
        return json.load(f)["workloads"]


def settings(workload):
    """(variant name, manifest-style workload dict) for the base and each variant. A workload
    may name the corpus's own program ("script", relative to tests/workloads, and "args"); a
    variant may run other "args" (a finding's fix: the same job written another way). Only the
    base of a "profile" workload runs with the agent: its findings predict the variants."""
    out = []
    for variant in [{"name": "base"}] + workload["variants"]:
        cluster = dict(workload["cluster"], **variant.get("cluster", {}))
        conf = dict(workload.get("conf", {}), **variant.get("conf", {}))
        script = workload.get("script", os.path.relpath(os.path.join(HERE, "apps.py"), CORPUS))
        args = variant.get("args", workload.get("args", [workload["name"]]))
        out.append((variant["name"], {
            "name": f"{workload['name']}.{variant['name']}",
            "script": script, "args": args,
            "problem": variant.get("change", "the base setting"),
            "cluster": cluster, "conf": conf, "action": None,
            "profile": bool(workload.get("profile")) and variant["name"] == "base",
            # The PySpark driver program under sparkprof-python (its own samples and run delay).
            "python_driver": bool(workload.get("python_driver")),
            "timeout_s": workload.get("timeout_s", 300)}))
    return out


class AutogroupBooster:
    """On a shared machine: every 0.25 s, gives the autogroups (sessions) of this script's
    descendant processes -- the Master, Workers, executors and driver each start their own
    session -- the scheduling nice `nice`, so concurrent builds in other sessions do not distort
    the timings (CFS autogroup: a process's own nice only counts within its session). Needs
    root for a negative nice; does nothing where /proc/<pid>/autogroup is absent."""

    def __init__(self, nice):
        self.nice = nice
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _descendants(self):
        children = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat") as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(parent, []).append(int(name))
        pending, found = [os.getpid()], []
        while pending:
            pid = pending.pop()
            for child in children.get(pid, []):
                found.append(child)
                pending.append(child)
        return found

    def _run(self):
        while not self.stop.wait(0.25):
            for pid in self._descendants():
                try:
                    with open(f"/proc/{pid}/autogroup", "w") as f:
                        f.write(str(self.nice))
                except OSError:
                    pass

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def app_wall_ms(event_log):
    """Application start to end from the log's ApplicationStart/End timestamps (the wall time
    sparkprof reports), or None."""
    text = corpus.decompressed_log(event_log)
    if text is None:
        return None
    start = end = None
    for line in text.splitlines():
        if '"SparkListenerApplicationStart"' in line:
            start = json.loads(line).get("Timestamp")
        elif '"SparkListenerApplicationEnd"' in line:
            end = json.loads(line).get("Timestamp")
    return end - start if start is not None and end is not None else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spark-home", required=True)
    parser.add_argument("--python", help="default: <spark home>/../venv/bin/python")
    parser.add_argument("--java-home", default=os.environ.get("JAVA_HOME", ""))
    parser.add_argument("--only", nargs="+", metavar="WORKLOAD[.VARIANT]")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--max-runs", type=int, default=3)
    parser.add_argument("--spread", type=float, default=0.10,
                        help="re-run while the runs' wall times differ by more than this")
    parser.add_argument("--quiet-wait-s", type=float, default=120,
                        help="before each run, wait up to this long for idle CPUs")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--write-fixtures", action="store_true",
                        help=f"keep the logs in {os.path.relpath(FIXTURES)}/<version>/")
    output.add_argument("--out", help="keep the logs in OUT/<version>/")
    parser.add_argument("--autogroup-nice", type=int, metavar="N",
                        help="give the Spark processes' sessions this CFS autogroup nice (e.g. "
                        "-10 on a machine shared with builds; needs root for < 0)")
    parser.add_argument("--agent", default=corpus.DEFAULT_AGENT,
                        help="libsparkprof.so, for the profiled bases")
    parser.add_argument("--plugin-jar", default=corpus.DEFAULT_PLUGIN_JAR,
                        help="the Spark plugin's jar, for the profiled bases")
    parser.add_argument("--validate", metavar="SPARKPROF",
                        help="then check the fresh logs with validate.py and this sparkprof "
                        "(its exit code is ours)")
    args = parser.parse_args()

    spark_home = os.path.abspath(args.spark_home)
    python = args.python or os.path.join(os.path.dirname(spark_home), "venv", "bin", "python")
    java = os.path.join(args.java_home, "bin", "java") if args.java_home else shutil.which("java")
    if not os.access(os.path.join(spark_home, "bin", "spark-submit"), os.X_OK) or \
            not os.access(python, os.X_OK) or not java:
        print(f"SKIPPED: no Spark at {spark_home}, no Python at {python}, or no java")
        return corpus.SKIPPED
    if not shutil.which("zstd"):
        print("SKIPPED: the zstd command is needed to read the logs' wall times")
        return corpus.SKIPPED
    version = corpus.spark_version(spark_home)
    destination = os.path.join(FIXTURES if args.write_fixtures else
                               args.out or tempfile.mkdtemp(prefix="sparkprof-whatif-"), version)
    os.makedirs(destination, exist_ok=True)
    work_root = tempfile.mkdtemp(prefix="sparkprof-whatif-work-")
    record_path = os.path.join(destination, "runs.json")
    record = {}
    if os.path.exists(record_path):
        with open(record_path) as f:
            record = json.load(f)
    print(f"Spark {version}; logs to {destination}", flush=True)
    failed = []
    booster = AutogroupBooster(args.autogroup_nice) if args.autogroup_nice is not None else None
    if booster:
        booster.__enter__()
    chosen = [spec for workload in load_suite() for _, spec in settings(workload)
              if not args.only or workload["name"] in args.only or spec["name"] in args.only]
    runs = {spec["name"]: [] for spec in chosen}
    failures = {}
    sparkprof = corpus.Sparkprof(args.agent, args.plugin_jar)
    if any(spec["profile"] for spec in chosen):
        missing = [p for p in (sparkprof.agent, sparkprof.plugin_jar) if not os.path.isfile(p)]
        if missing:
            print(f"SKIPPED: the profiled bases need {', '.join(missing)} "
                  "(scripts/build.sh release)")
            return corpus.SKIPPED
    jvm_jar = None
    if any(corpus.is_jvm_workload(spec) for spec in chosen):
        jvm_jar = corpus.build_jvm_apps(spark_home, args.java_home or None, work_root)

    def run_once(spec):
        corpus.wait_for_quiet_machine(args.quiet_wait_s)
        load = os.getloadavg()[0]
        run = corpus.run_workload(spec, spark_home, python, work_root, args.java_home or None,
                                  sparkprof, jvm_jar)
        wall = app_wall_ms(run.event_log) if run.event_log else None
        if run.problems or wall is None:
            # One failed run (a driver killed on a loaded machine) does not lose the others:
            # the setting fails when a second run fails too.
            print(f"  FAIL {spec['name']}: {run.problems}", flush=True)
            failures[spec["name"]] = failures.get(spec["name"], 0) + 1
            if failures[spec["name"]] >= 2:
                failed.append(spec["name"])
            return
        kept = os.path.join(work_root, f"{spec['name']}.{len(runs[spec['name']])}.zstd")
        shutil.copyfile(run.event_log, kept)
        profile = None
        if run.profile:  # kept beside its run's log, compressed like the corpus's
            profile = kept[:-len(".zstd")] + corpus.PROFILE_SUFFIX
            if not corpus.compress_profile(run.profile, profile):
                profile = None
        corpus.remove_outputs(os.path.join(work_root, spec["name"]))
        runs[spec["name"]].append({"wall_ms": wall, "load_1m": round(load, 2), "log": kept,
                                   "profile": profile})
        print(f"  {spec['name']} run {len(runs[spec['name']])}: {wall / 1000:.1f} s "
              f"(load {load:.2f})", flush=True)

    def spread_too_wide(name):
        walls = [r["wall_ms"] for r in runs[name]]
        return 0 < len(walls) < args.max_runs and max(walls) > (1 + args.spread) * min(walls)

    try:
        # Rounds over every setting (not one setting's repeats back to back): a busy spell on
        # the machine then slows one run of several settings, not every run of one.
        for _ in range(args.repeats):
            for spec in chosen:
                if spec["name"] not in failed:
                    run_once(spec)
        for spec in chosen:
            if spec["name"] not in failed and (len(runs[spec["name"]]) < args.repeats or
                                               spread_too_wide(spec["name"])):
                run_once(spec)
        for spec in chosen:
            if spec["name"] in failed or not runs[spec["name"]]:
                continue
            ordered = sorted(runs[spec["name"]], key=lambda r: r["wall_ms"])
            median = ordered[(len(ordered) - 1) // 2]  # of two, the faster
            shutil.copyfile(median["log"], os.path.join(destination, spec["name"] + ".zstd"))
            if median["profile"]:
                shutil.copyfile(median["profile"],
                                os.path.join(destination, spec["name"] + corpus.PROFILE_SUFFIX))
            record[spec["name"]] = {
                "wall_ms": [r["wall_ms"] for r in runs[spec["name"]]],
                "load_1m": [r["load_1m"] for r in runs[spec["name"]]],
                "kept_wall_ms": median["wall_ms"],
                "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        with open(record_path, "w") as f:
            json.dump(record, f, indent=1, sort_keys=True)
            f.write("\n")
    finally:
        if booster:
            booster.__exit__(None, None, None)
        shutil.rmtree(work_root, ignore_errors=True)
    outcome = f"FAILED: {', '.join(failed)}" if failed else "every setting ran"
    print(f"Spark {version}: {outcome}", flush=True)
    if failed:
        return 1
    if args.validate:
        validate = [sys.executable, os.path.join(HERE, "validate.py"), "--sparkprof",
                    args.validate, "--fixtures", os.path.dirname(destination)]
        return subprocess.run(validate).returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())
