# sparkprof's PySpark daemon: Spark's own pyspark.daemon, with a sampler in every Python worker.
#
# The executor plugin (io.sparkprof.PythonWorkerProfiling) writes this file and its settings,
# sparkprof_pyspark.json, into the executor's working directory and sets
# spark.python.daemon.module to this module's name before the executor's first Python task;
# Spark starts the daemon as `python -m sparkprof_pyspark_daemon` in that directory (so the
# directory is on sys.path). The daemon is pyspark.daemon unchanged except for the function each
# forked worker calls once per task (pyspark.daemon.worker): around it a sampler thread, started
# in the worker after the fork (never in the daemon, which must hold no thread when it forks),
# samples the worker's main thread every interval:
#   - on CPU: the main thread's CPU clock advance since the previous sample
#     (time.pthread_getcpuclockid), charged to the stack seen now -> category `python`;
#   - off CPU: the rest of the wall time; when the worker waits for the JVM (reading its input or
#     writing its output in pyspark's serializers) it is the JVM's time and not charged (but its
#     run delay there is the worker's: runnable, the data there, no CPU); otherwise
#     (its own I/O, sleeps, locks) -> category `python_off_cpu`; of it, the kernel's run delay
#     (/proc/self/task/<tid>/schedstat: runnable, waiting for a CPU) under an innermost frame
#     "[runnable: waiting for a CPU]".
# At the end of each task (and every flush_s during a long one) the task's stacks go to the spool
# directory as one small text file (format below), written to a temporary name and renamed; the
# executor plugin reads them into the native agent, which puts them under the JVM frame that
# waited on this worker and ships them with the task's other samples.
#
# It must never harm the worker: every failure turns sampling off in this worker after one line
# on stderr ("sparkprof: Python unprofiled ..."), and the task runs on as if it were not here.
#
# File format (UTF-8 text, one record per line, fields separated by single spaces except frames):
#   sparkprof-python 1
#   task <stage_id> <partition_id> <attempt_number> <task_attempt_id>
#   worker <pid> <interval_ns>
#   totals <samples> <cpu_ns> <off_cpu_ns> <jvm_wait_ns> <stacks_folded> <files_dropped>
#   s <cpu_ns> <off_cpu_ns> <samples> <frame>\t<frame>...      (root first)
# A frame is "qualname (where:line)"; where is the file's base name for the application's code,
# "pyspark/...", "<site>/pkg/..." for installed packages and "<stdlib>/..." for the standard library.

import json
import os
import sys
import threading
import time

# The executor plugin's probe, before it sets spark.python.daemon.module: this interpreter finds
# this module from the executor's working directory (nothing else is imported).
if __name__ == "__main__" and sys.argv[1:2] == ["--sparkprof-probe"]:
    sys.stdout.write("sparkprof-daemon-ok\n")
    sys.exit(0)

import pyspark.daemon as _daemon

_FORMAT = "sparkprof-python 1"
_SETTINGS_FILE = "sparkprof_pyspark.json"
_MAX_DEPTH = 128
_MAX_FRAME_NAMES = 20000
_JVM_IO_MODULES = ("pyspark/serializers.py", "pyspark/sql/pandas/serializers.py",
                   "pyspark/daemon.py")
RUNNABLE_FRAME = "[runnable: waiting for a CPU]"  # the driver's sampler uses it too
_IO_FRAMES = ("<stdlib>/socket.py", "<stdlib>/selectors.py", "<stdlib>/ssl.py")


def _log(message):
    try:
        sys.stderr.write("sparkprof: %s\n" % message)
        sys.stderr.flush()
    except Exception:
        pass


def _load_settings():
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, _SETTINGS_FILE), "r", encoding="utf-8") as handle:
        raw = json.load(handle)
    spool = raw["spool"]
    if not isinstance(spool, str) or not os.path.isabs(spool):
        raise ValueError("spool must be an absolute path")
    interval_ms = int(raw.get("interval_ms", 10))
    return {
        "spool": spool,
        "interval_ns": max(1, min(interval_ms, 1000)) * 1000000,
        "max_stacks": max(16, min(int(raw.get("max_stacks", 2000)), 20000)),
        "max_files": max(1, min(int(raw.get("max_files", 1000)), 100000)),
        "flush_ns": max(1, min(int(raw.get("flush_s", 5)), 3600)) * 1000000000,
    }


def _path_roots():
    import sysconfig
    roots = []
    paths = sysconfig.get_paths()
    for key in ("purelib", "platlib"):
        if paths.get(key):
            roots.append((os.path.normpath(paths[key]) + os.sep, "<site>/"))
    for key in ("stdlib", "platstdlib"):
        if paths.get(key):
            roots.append((os.path.normpath(paths[key]) + os.sep, "<stdlib>/"))
    # Longest first: site-packages sits inside the standard library's directory.
    roots.sort(key=lambda root: len(root[0]), reverse=True)
    return roots


def _clean(text):
    # Frames are separated by tabs and records by newlines: no control character may remain.
    return "".join(c if (" " <= c and c != "\x7f" and not ("\x80" <= c <= "\x9f")) else "?"
                   for c in text)


class FrameNames(object):
    """A code object and line as the profile names the frame: "qualname (where:line)", where is
    "pyspark/..." or "py4j/..." for Spark's Python side, "<site>/..." and "<stdlib>/..." for
    installed packages and the standard library, else the file's base name (the application's
    code). Memoised, at most _MAX_FRAME_NAMES at once. Also used by sparkprof_driver.py."""

    def __init__(self):
        self.roots = _path_roots()
        self.names = {}

    def name(self, code, line):
        key = (code, line)
        name = self.names.get(key)
        if name is not None:
            return name
        path = os.path.normpath(code.co_filename) if code.co_filename else "?"
        where = None
        for package in ("pyspark", "py4j"):
            marker = os.sep + package + os.sep
            if marker in path:
                where = package + "/" + path.rsplit(marker, 1)[1].replace(os.sep, "/")
                break
        if where is None:
            for root, label in self.roots:
                if path.startswith(root):
                    where = label + path[len(root):].replace(os.sep, "/")
                    break
        if where is None:
            where = path if path.startswith("<") else os.path.basename(path)
        qualname = getattr(code, "co_qualname", code.co_name)
        name = _clean("%s (%s:%d)" % (qualname, where, line if line is not None else 0))
        if len(self.names) >= _MAX_FRAME_NAMES:
            self.names.clear()
        self.names[key] = name
        return name


def stack_names(frame, frame_names, skip_files):
    """The stack from `frame` outwards as frame names, root first; frames of the files in
    `skip_files` (the sampler's own) left out; at most _MAX_DEPTH, then "[truncated]"."""
    names = []
    while frame is not None and len(names) < _MAX_DEPTH:
        if frame.f_code.co_filename not in skip_files:
            names.append(frame_names.name(frame.f_code, frame.f_lineno))
        frame = frame.f_back
    if frame is not None:
        names.append("[truncated]")
    names.reverse()
    return names


def add_stack(stacks, key, cpu_ns, off_ns, samples, max_stacks):
    """Adds to stacks[key] = [cpu ns, off-CPU ns, samples]; past max_stacks distinct keys the
    time goes to one folded key. True when it was folded."""
    entry = stacks.get(key)
    folded = False
    if entry is None:
        if len(stacks) >= max_stacks:
            folded = True
            key = "[python: stacks beyond the cap]"
            entry = stacks.get(key)
        if entry is None:
            entry = [0, 0, 0]
            stacks[key] = entry
    entry[0] += cpu_ns
    entry[1] += off_ns
    entry[2] += samples
    return folded


class _Sampler(object):
    def __init__(self, settings):
        self.settings = settings
        self.main_ident = threading.get_ident()
        self.cpu_clock = time.pthread_getcpuclockid(self.main_ident)
        time.clock_gettime_ns(self.cpu_clock)  # fails here, not in the thread, when unsupported
        self.schedstat_fd = None
        try:
            self.schedstat_fd = os.open("/proc/self/task/%d/schedstat" % threading.get_native_id(),
                                        os.O_RDONLY)
            self._run_delay()
        except (OSError, ValueError, IndexError, AttributeError):
            self.schedstat_fd = None  # no split of the run delay: all off-CPU time is the wait
        self.frame_names = FrameNames()
        self.lock = threading.Lock()
        self.active = False
        self.ids_before = None
        self.reset_task()
        self.seq = 0
        self.files_dropped = 0
        self.failed = False
        self.thread = threading.Thread(target=self._run, name="sparkprof-python-sampler")
        self.thread.daemon = True
        self.thread.start()

    def _run_delay(self):
        if self.schedstat_fd is None:
            return 0
        return int(os.pread(self.schedstat_fd, 128, 0).split()[1])

    def reset_task(self):
        self.task_ids = None
        self.reset_task_stacks()

    # The task's bounds, called on the main thread by the daemon's worker function.
    def begin(self, context_before):
        with self.lock:
            self.reset_task()
            # Spark 3.5 keeps one TaskContext per worker and rewrites its fields for each task:
            # the ids it held before this task are not this task's.
            self.ids_before = _context_ids(context_before)
            self.wall_base = time.monotonic_ns()
            self.cpu_base = time.clock_gettime_ns(self.cpu_clock)
            self.delay_base = self._run_delay()
            self.last_flush = self.wall_base
            self.active = True

    def end(self):
        with self.lock:
            if not self.active:
                return
            self.active = False
            # The CPU after the last sample goes to the last stack seen (under one interval).
            tail = time.clock_gettime_ns(self.cpu_clock) - self.cpu_base
            if tail > 0 and self.last_key is not None and self.last_key in self.stacks:
                self.stacks[self.last_key][0] += tail
                self.cpu_ns += tail
            self._flush_locked()

    def _run(self):
        interval = self.settings["interval_ns"] / 1e9
        while not self.failed:
            time.sleep(interval)
            try:
                with self.lock:
                    if self.active:
                        self._sample_locked()
                        if time.monotonic_ns() - self.last_flush >= self.settings["flush_ns"]:
                            self._flush_locked()
            except Exception as error:  # never let the worker see it
                self.failed = True
                self.active = False
                _log("Python unprofiled in worker %d from now on: sampling failed: %r"
                     % (os.getpid(), error))

    def _sample_locked(self):
        if self.task_ids is None:
            from pyspark.taskcontext import TaskContext
            self.note_context(TaskContext._taskContext)
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
        names = stack_names(frame, self.frame_names, (_THIS_FILE,))  # not this module's frames
        key = "\t".join(names) if names else "[no Python frame]"
        waits_for_jvm = False
        if off_ns > 0:
            # Innermost frames, past the socket layer: in pyspark's serializers the worker reads its
            # input from the JVM or writes its output to it -- the JVM's time, not the worker's.
            for name in reversed(names):
                if any(("(%s:" % io) in name for io in _IO_FRAMES):
                    continue
                waits_for_jvm = any(("(%s:" % module) in name for module in _JVM_IO_MODULES)
                break
        if waits_for_jvm:
            # Its input had arrived, or its output was taken, when it was runnable with no CPU:
            # that part is the worker's own delay, not the JVM's.
            self.jvm_wait_ns += off_ns - starved_ns
            off_ns = starved_ns
        self.samples += 1
        self.cpu_ns += cpu_ns
        self.off_ns += off_ns
        # The sample counts once, with its largest part.
        waited_ns = off_ns - starved_ns
        largest = max(cpu_ns, waited_ns, starved_ns)
        if cpu_ns or waited_ns:
            self._add(key, cpu_ns, waited_ns, 1 if largest in (cpu_ns, waited_ns) else 0)
            self.last_key = key
        if starved_ns:
            self._add(key + "\t" + RUNNABLE_FRAME, 0, starved_ns,
                      0 if largest in (cpu_ns, waited_ns) else 1)

    def _add(self, key, cpu_ns, off_ns, samples):
        if add_stack(self.stacks, key, cpu_ns, off_ns, samples, self.settings["max_stacks"]):
            self.folded += 1

    def note_context(self, context):
        """This task's ids, as soon as they are known (every sample, and when Spark 4 sets the
        task's context: it unsets it before the task returns)."""
        if self.task_ids is None:
            ids = _context_ids(context)
            if ids is not None and ids != self.ids_before:
                self.task_ids = ids

    def _task_ids(self):
        if self.task_ids is None:
            from pyspark.taskcontext import TaskContext
            self.note_context(TaskContext._taskContext)
        return self.task_ids  # None: this task's context is not read yet

    def _flush_locked(self):
        self.last_flush = time.monotonic_ns()
        if not self.stacks:
            return
        ids = self._task_ids()
        if ids is None:
            return  # kept for the next flush, when the task's ids are known
        spool = self.settings["spool"]
        try:
            pending = len(os.listdir(spool))
        except OSError:
            pending = 0
        if pending >= self.settings["max_files"]:
            # The executor is not reading them (or is far behind): drop, and say how many.
            self.files_dropped += 1
            self.reset_task_stacks()
            return
        lines = [_FORMAT,
                 "task %d %d %d %d" % ids,
                 "worker %d %d" % (os.getpid(), self.settings["interval_ns"]),
                 "totals %d %d %d %d %d %d" % (self.samples, self.cpu_ns, self.off_ns,
                                               self.jvm_wait_ns, self.folded, self.files_dropped)]
        for key, (cpu_ns, off_ns, samples) in self.stacks.items():
            lines.append("s %d %d %d %s" % (cpu_ns, off_ns, samples, key))
        data = ("\n".join(lines) + "\n").encode("utf-8", "replace")
        self.seq += 1
        name = "%d-%d" % (os.getpid(), self.seq)
        temporary = os.path.join(spool, "." + name + ".tmp")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(temporary, flags, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.rename(temporary, os.path.join(spool, name + ".pyprof"))
        self.files_dropped = 0
        self.reset_task_stacks()

    def reset_task_stacks(self):
        """What one file holds (a long task flushes several; its ids stay)."""
        self.stacks = {}
        self.samples = 0
        self.cpu_ns = 0
        self.off_ns = 0
        self.jvm_wait_ns = 0
        self.folded = 0
        self.last_key = None


def _context_ids(context):
    if context is None:
        return None
    try:
        return (int(context._stageId), int(context._partitionId),
                int(context._attemptNumber), int(context._taskAttemptId))
    except (TypeError, AttributeError, ValueError):
        return None


def _install_context_hook():
    """Spark 4 sets the task's TaskContext through TaskContext._setTaskContext and unsets it
    before the task returns: note the ids when it is set."""
    from pyspark.taskcontext import TaskContext
    original = TaskContext.__dict__.get("_setTaskContext")
    if not isinstance(original, classmethod):
        return  # Spark 3.5: the ids are read from the context the task leaves behind
    spark_set = original.__func__

    def _setTaskContext(cls, taskContext):
        spark_set(cls, taskContext)
        sampler = _sampler
        if sampler is not None and taskContext is not None:
            try:
                sampler.note_context(taskContext)
            except Exception:
                pass

    TaskContext._setTaskContext = classmethod(_setTaskContext)


_THIS_FILE = __file__
_sampler = None
_sampler_failed = False


def _get_sampler():
    global _sampler, _sampler_failed
    if _sampler is not None or _sampler_failed:
        return _sampler
    try:
        _sampler = _Sampler(_load_settings())
    except Exception as error:
        _sampler_failed = True
        _log("Python unprofiled in worker %d: the sampler could not start: %r"
             % (os.getpid(), error))
    return _sampler


_spark_worker = getattr(_daemon, "worker", None)


def _profiled_worker(sock, authenticated):
    """pyspark.daemon.worker with this task sampled; runs in the forked worker, once per task."""
    sampler = _get_sampler()
    if sampler is not None and not sampler.failed:
        try:
            from pyspark.taskcontext import TaskContext
            sampler.begin(TaskContext._taskContext)
        except Exception as error:
            sampler.failed = True
            _log("Python unprofiled in worker %d: %r" % (os.getpid(), error))
    try:
        return _spark_worker(sock, authenticated)
    finally:
        if sampler is not None and not sampler.failed:
            try:
                sampler.end()
            except Exception as error:
                sampler.failed = True
                _log("Python unprofiled in worker %d from now on: %r" % (os.getpid(), error))


if _spark_worker is not None:
    _daemon.worker = _profiled_worker
else:
    _log("Python workers unprofiled: this pyspark.daemon has no worker function to wrap")
try:
    _install_context_hook()
except Exception as _error:
    _log("no TaskContext hook (%r): a task's ids are read by the sampler only, and a task "
         "shorter than the interval may go unattributed" % (_error,))

if __name__ == "__main__":
    _daemon.manager()
