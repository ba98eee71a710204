# sparkprof's Python driver sampler: runs a PySpark driver program with a sampler beside it, so
# the report can say which Python function the driver was in while no task ran (driver-bound).
#
#   python -m sparkprof_driver app.py [args...]          # instead of `python app.py`
#   spark-submit --conf spark.pyspark.driver.python=/path/to/sparkprof-python ... app.py
#
# (sparkprof-python, beside this file, runs `python sparkprof_driver.py "$@"`; Spark starts the
# driver's interpreter as `<spark.pyspark.driver.python> app.py args`.) Spark gives no hook into
# the driver's interpreter, so this is the one opt-in step; docs/agent.md, "The driver's own
# samples".
#
# The program runs on the main thread as `python app.py` would run it (runpy, as __main__, its
# directory first on sys.path). A daemon thread samples the main thread every interval (10 ms;
# SPARKPROF_DRIVER_INTERVAL_MS, 1..1000), as the workers' sampler does
# (sparkprof_pyspark_daemon.py, whose frame names it shares):
#   - on CPU: the main thread's CPU clock advance, charged to the stack seen now (python);
#   - off CPU: the rest of the wall time, charged to the stack (python_off_cpu) -- except while
#     the program waits in Py4J for the JVM (a job, planning, a collect): that is the JVM's time,
#     which the driver JVM's own samples show, and is only counted;
#   - of the off-CPU time, the kernel's run delay of the main thread
#     (/proc/self/task/<tid>/schedstat: runnable, waiting for a CPU) under an innermost frame
#     "[runnable: waiting for a CPU]", as the workers' sampler does -- in Py4J too: the JVM's
#     answer had arrived and the program could not run (the program's own wait for a CPU).
# Every flush interval (5 s; SPARKPROF_DRIVER_FLUSH_S) the window's stacks go to the driver JVM
# through Spark's own Py4J gateway, io.sparkprof.PythonDriverProfiling.add(file, start, end), in
# the workers' file format (its task line is unused: "task 0 0 0 0"), with the window's epoch ns.
# Before a SparkContext exists the stacks wait (bounded); SparkContext.stop first sends what is
# left and ends the sampling (a SparkContext made after it is not sampled). Nothing is written to
# disk.
#
# It must never harm the program: any failure turns sampling off after one line on stderr
# ("sparkprof: Python driver unprofiled ..."), and the program runs on unchanged.

import os
import runpy
import sys
import threading
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
_THIS_FILE = os.path.abspath(__file__)
_FORMAT = "sparkprof-python 1"
_MAX_STACKS = 2000
_PY4J_FRAMES = ("(py4j/",)
_SOCKET_FRAMES = ("(<stdlib>/socket.py:", "(<stdlib>/selectors.py:", "(<stdlib>/ssl.py:",
                  "(<stdlib>/threading.py:")


def _log(message):
    try:
        print("sparkprof: %s" % message, file=sys.stderr, flush=True)
    except Exception:
        pass


def _setting(name, default, low, high):
    try:
        return max(low, min(int(os.environ.get(name, default)), high))
    except ValueError:
        return default


class DriverSampler(object):
    def __init__(self, daemon):
        # The workers' sampler module: its frame names and stack bookkeeping are shared.
        self.frame_names = daemon.FrameNames()
        self.stack_names = daemon.stack_names
        self.add_stack = daemon.add_stack
        # This module's and runpy's frames (runpy is frozen from Python 3.11 on).
        self.skip_files = (_THIS_FILE, runpy.__file__, "<frozen runpy>")
        self.interval_ns = _setting("SPARKPROF_DRIVER_INTERVAL_MS", 10, 1, 1000) * 1000000
        self.flush_ns = _setting("SPARKPROF_DRIVER_FLUSH_S", 5, 1, 3600) * 1000000000
        self.main_ident = threading.main_thread().ident
        self.cpu_clock = time.pthread_getcpuclockid(self.main_ident)
        time.clock_gettime_ns(self.cpu_clock)  # fails here, not in the thread, when unsupported
        self.runnable_frame = daemon.RUNNABLE_FRAME
        self.schedstat_fd = None
        try:
            self.schedstat_fd = os.open(
                "/proc/self/task/%d/schedstat" % threading.main_thread().native_id, os.O_RDONLY)
            self._run_delay()
        except (OSError, ValueError, IndexError, AttributeError):
            self.schedstat_fd = None  # no split of the run delay: all off-CPU time is the wait
        self.lock = threading.Lock()
        self.failed = False
        self.stopped = False
        self.sent = 0
        self.jvm_wait_ns = 0
        self.folded = 0
        self._reset_window()
        self.wall_base = time.monotonic_ns()
        self.cpu_base = time.clock_gettime_ns(self.cpu_clock)
        self.delay_base = self._run_delay()
        self.thread = threading.Thread(target=self._run, name="sparkprof-python-driver-sampler")
        self.thread.daemon = True
        self.thread.start()

    def _run_delay(self):
        if self.schedstat_fd is None:
            return 0
        return int(os.pread(self.schedstat_fd, 128, 0).split()[1])

    def _reset_window(self, start_ns=None):
        self.window_start = time.time_ns() if start_ns is None else start_ns
        self.window_monotonic = time.monotonic_ns()
        self.stacks = {}
        self.samples = 0
        self.cpu_ns = 0
        self.off_ns = 0

    def _run(self):
        interval = self.interval_ns / 1e9
        while not (self.failed or self.stopped):
            time.sleep(interval)
            try:
                with self.lock:
                    if self.stopped:
                        return
                    self._sample_locked()
                if time.monotonic_ns() - self.window_monotonic >= self.flush_ns:
                    self.flush()
            except Exception as error:  # never let the program see it
                self._fail("sampling failed: %r" % (error,))

    def _fail(self, why):
        if not self.failed:
            self.failed = True
            _log("Python driver unprofiled from now on: %s" % why)

    def _sample_locked(self):
        frame = sys._current_frames().get(self.main_ident)
        now = time.monotonic_ns()
        cpu = time.clock_gettime_ns(self.cpu_clock)
        delay = self._run_delay()
        wall_ns = max(0, now - self.wall_base)
        cpu_ns = min(max(0, cpu - self.cpu_base), wall_ns)
        off_ns = wall_ns - cpu_ns
        starved_ns = min(max(0, delay - self.delay_base), off_ns)
        self.wall_base = now
        self.cpu_base = cpu
        self.delay_base = delay
        names = self.stack_names(frame, self.frame_names, self.skip_files)
        if off_ns > 0:
            # Innermost frames, past the socket layer: in Py4J the program waits for the JVM --
            # except for its run delay there (the answer had come; no CPU to take it).
            for name in reversed(names):
                if any(marker in name for marker in _SOCKET_FRAMES):
                    continue
                if any(marker in name for marker in _PY4J_FRAMES):
                    self.jvm_wait_ns += off_ns - starved_ns
                    off_ns = starved_ns
                break
        if not (cpu_ns or off_ns):
            return
        key = "\t".join(names) if names else "[no Python frame]"
        # The sample counts once, with its largest part (as in the workers' sampler).
        waited_ns = off_ns - starved_ns
        starved_largest = starved_ns > max(cpu_ns, waited_ns)
        if cpu_ns or waited_ns:
            self._add(key, cpu_ns, waited_ns, 0 if starved_largest else 1)
        if starved_ns:
            self._add(key + "\t" + self.runnable_frame, 0, starved_ns, 1 if starved_largest else 0)
        self.samples += 1
        self.cpu_ns += cpu_ns
        self.off_ns += off_ns

    def _add(self, key, cpu_ns, off_ns, samples):
        if self.add_stack(self.stacks, key, cpu_ns, off_ns, samples, _MAX_STACKS):
            self.folded += 1

    def flush(self):
        """Sends the window's stacks to the driver JVM; keeps them while no SparkContext exists."""
        with self.lock:
            if self.failed or not self.stacks:
                return
            context = _active_spark_context()
            if context is None:
                return  # the window grows until the JVM can take it (bounded by _MAX_STACKS)
            lines = [_FORMAT, "task 0 0 0 0", "worker %d %d" % (os.getpid(), self.interval_ns),
                     "totals %d %d %d %d %d 0" % (self.samples, self.cpu_ns, self.off_ns,
                                                  self.jvm_wait_ns, self.folded)]
            for key, (cpu_ns, off_ns, samples) in self.stacks.items():
                lines.append("s %d %d %d %s" % (cpu_ns, off_ns, samples, key))
            data = ("\n".join(lines) + "\n").encode("utf-8", "replace")
            start, end = self.window_start, time.time_ns()
            self._reset_window(end)  # the next window starts where this one ends
            self.jvm_wait_ns = 0
            self.folded = 0
        try:
            outcome = context._jvm.io.sparkprof.PythonDriverProfiling.add(
                bytearray(data), start, end)
        except Exception as error:
            self._fail("the driver JVM did not take the samples (is sparkprof's plugin on the "
                       "driver, spark.plugins=io.sparkprof.SparkProfPlugin?): %r" % (error,))
            return
        if outcome == -1:
            self._fail("sparkprof's driver plugin is not running in the driver JVM")
        elif outcome == 0:
            self.sent += 1

    def stop(self):
        if self.stopped:
            return
        self.flush()
        with self.lock:
            self.stopped = True


def _active_spark_context():
    module = sys.modules.get("pyspark.context") or sys.modules.get("pyspark")
    context_class = getattr(module, "SparkContext", None) if module else None
    context = getattr(context_class, "_active_spark_context", None) if context_class else None
    return context if context is not None and getattr(context, "_jvm", None) else None


def _send_before_stop(sampler):
    """SparkContext.stop sends the last window first: the driver's report is written inside it."""
    try:
        import pyspark.context
    except Exception as error:
        _log("Python driver: pyspark is not importable (%r); samples are sent only while the "
             "program runs" % (error,))
        return
    original = pyspark.context.SparkContext.stop

    def stop(self, *args, **kwargs):
        # The last window, then no more: once the driver JVM stops there is nowhere to send one
        # (a SparkContext made after this one is not sampled).
        try:
            sampler.stop()
        except Exception:
            pass
        return original(self, *args, **kwargs)

    stop.__doc__ = original.__doc__
    pyspark.context.SparkContext.stop = stop


def start():
    """Starts sampling this process's main thread; None (after one log line) when it cannot."""
    try:
        if _HERE not in sys.path:
            sys.path.append(_HERE)
        import sparkprof_pyspark_daemon
        sampler = DriverSampler(sparkprof_pyspark_daemon)
        _send_before_stop(sampler)
        return sampler
    except Exception as error:
        _log("Python driver unprofiled: the sampler could not start: %r" % (error,))
        return None


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        sys.stderr.write("usage: python -m sparkprof_driver PROGRAM.py [ARGS...]\n")
        return 2
    program = os.path.abspath(argv[1])
    sys.argv = argv[1:]
    sys.path[0] = os.path.dirname(program)  # as `python PROGRAM.py` sets it
    sampler = start()
    try:
        runpy.run_path(program, run_name="__main__")
    finally:
        if sampler is not None:
            try:
                sampler.stop()
            except Exception:
                pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
