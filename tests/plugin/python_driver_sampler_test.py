#!/usr/bin/env python3
"""sparkprof's Python driver sampler (spark-plugin/src/main/python/sparkprof_driver.py) around a
real interpreter with pyspark, the JVM replaced by a stand-in that records what the sampler hands
to io.sparkprof.PythonDriverProfiling.add: the program runs as `python prog.py` would (argv,
sys.path[0], __main__), its CPU and its sleep land on its own frames in windows that follow each
other, its wait for a CPU it shares with a busy child under the runnable frame, SparkContext.stop sends the last window, and a driver JVM without the plugin turns the
sampler off with one line while the program runs on.

    python_driver_sampler_test.py PYTHON     # an interpreter that imports pyspark; exits 77 without
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
WRAPPER = os.path.join(HERE, "..", "..", "spark-plugin", "src", "main", "python", "sparkprof-python")

PROGRAM = r'''
import json, os, sys, time
import pyspark.context as context

calls = []


class Profiling(object):
    @staticmethod
    def add(data, start, end):
        calls.append([bytes(data).decode("utf-8"), start, end])
        return 0


class Namespace(object):
    pass


jvm = Namespace()
if os.environ.get("WITH_PLUGIN") == "1":
    jvm.io = Namespace()
    jvm.io.sparkprof = Namespace()
    jvm.io.sparkprof.PythonDriverProfiling = Profiling


class StandIn(object):
    _jvm = jvm


context.SparkContext._active_spark_context = StandIn()


def work_on_driver(seconds):
    end = time.process_time() + seconds
    value = 0
    while time.process_time() < end:
        value = (value * 31 + 7) % 1000003
    return value


def wait_on_driver(seconds):
    time.sleep(seconds)


def crowd_on_driver(seconds):
    # The main thread and a busy child pinned to one CPU: the main thread is runnable about half
    # the time with no CPU (the kernel's run delay).
    cpus = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(cpus)})  # this thread only
    child = os.fork()
    if child == 0:
        end = time.monotonic() + seconds + 0.3
        while time.monotonic() < end:
            pass
        os._exit(0)
    end = time.monotonic() + seconds
    value = 0
    while time.monotonic() < end:
        value = (value * 31 + 7) % 1000003
    os.waitpid(child, 0)
    os.sched_setaffinity(0, cpus)
    return value


work_on_driver(1.5)
wait_on_driver(0.6)
crowd_on_driver(1.2)
try:
    context.SparkContext.stop(StandIn())  # sparkprof's wrapper sends the last window first
except Exception:
    pass  # Spark's own stop on the stand-in
print(json.dumps({"argv": sys.argv, "path0": sys.path[0], "name": __name__, "calls": calls}))
'''


def run(python, directory, with_plugin):
    env = dict(os.environ, SPARKPROF_DRIVER_PYTHON=python, SPARKPROF_DRIVER_FLUSH_S="1",
               WITH_PLUGIN="1" if with_plugin else "0")
    return subprocess.run([WRAPPER, os.path.join(directory, "prog.py"), "first", "second"],
                          cwd="/", env=env, capture_output=True, text=True, timeout=120)


def main(python):
    if not os.path.exists(python) or subprocess.run(
            [python, "-c", "import pyspark"], capture_output=True).returncode != 0:
        print("SKIP: %s cannot import pyspark" % python)
        return 77
    problems = []
    with tempfile.TemporaryDirectory() as directory:
        with open(os.path.join(directory, "prog.py"), "w") as handle:
            handle.write(PROGRAM)
        done = run(python, directory, True)
        if done.returncode != 0:
            print(done.stderr)
            print("FAIL: exit %d" % done.returncode)
            return 1
        out = json.loads(done.stdout.strip().splitlines()[-1])
        if out["argv"] != [os.path.join(directory, "prog.py"), "first", "second"]:
            problems.append("argv %r" % out["argv"])
        if out["path0"] != directory or out["name"] != "__main__":
            problems.append("ran as %r with sys.path[0] %r" % (out["name"], out["path0"]))
        cpu = {}
        off = {}
        runnable = {}
        previous_end = None
        for text, start, end in out["calls"]:
            if not start < end:
                problems.append("window [%d, %d)" % (start, end))
            if previous_end is not None and start != previous_end:
                problems.append("windows do not follow each other: %d after %d" %
                                (start, previous_end))
            previous_end = end
            lines = text.splitlines()
            if lines[0] != "sparkprof-python 1" or not lines[1].startswith("task "):
                problems.append("file header %r" % lines[:2])
            for line in lines:
                if not line.startswith("s "):
                    continue
                _, cpu_ns, off_ns, _samples, frames = line.split(" ", 4)
                leaf = [f for f in frames.split("\t") if "(prog.py:" in f][-1].split(" (")[0]
                if frames.endswith("\t[runnable: waiting for a CPU]"):
                    runnable[leaf] = runnable.get(leaf, 0) + int(off_ns)
                    if int(cpu_ns):
                        problems.append("CPU under the runnable frame: %r" % line)
                else:
                    cpu[leaf] = cpu.get(leaf, 0) + int(cpu_ns)
                    off[leaf] = off.get(leaf, 0) + int(off_ns)
                if "sparkprof_driver" in frames or "runpy" in frames:
                    problems.append("the sampler's own frames are shown: %r" % frames)
        if len(out["calls"]) < 2:
            problems.append("%d window(s) sent, want one a second and the last at stop" %
                            len(out["calls"]))
        if not 1.0e9 <= cpu.get("work_on_driver", 0) <= 2.5e9:
            problems.append("work_on_driver on CPU %r ns, want about 1.5 s" % cpu)
        if not 0.4e9 <= off.get("wait_on_driver", 0) <= 1.5e9:
            problems.append("wait_on_driver off CPU %r ns, want about 0.6 s" % off)
        # Sharing one CPU with a busy child for 1.2 s: about half of it runnable, waiting; a
        # sleep is not (its run delay is only the wake-up's).
        if not 0.25e9 <= runnable.get("crowd_on_driver", 0) <= 1.2e9:
            problems.append("crowd_on_driver waited for a CPU %r ns, want about 0.6 s" % runnable)
        if runnable.get("wait_on_driver", 0) > 0.1e9:
            problems.append("wait_on_driver's sleep counted as run delay: %r" % runnable)

        done = run(python, directory, False)
        out = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else None
        lines = [l for l in done.stderr.splitlines() if "Python driver unprofiled" in l]
        if out is None or out["calls"] or len(lines) != 1:
            problems.append("without the plugin: exit %d, %d line(s) saying so: %s" %
                            (done.returncode, len(lines), done.stderr[-500:]))
    for problem in problems:
        print("FAIL:", problem)
    print("PASS" if not problems else "FAILED")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
