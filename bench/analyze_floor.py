#!/usr/bin/env python3
"""Issue 15's ratio taken apart: `sparkprof analyze` on a compressed log against `zstd -dc` of it,
and the same analysis without the right-sizing frontier and on the already decompressed log.

Each command is timed from just before posix_spawn to waitpid's return (no shell, no `date` in
the interval), the commands interleaved round by round; medians and bests in ms, and their ratios
to `zstd -dc`.

Usage: bench/analyze_floor.py [ROUNDS] [LOG.zstd]   (SPARKPROF_CLI=path picks another build)
"""
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOGS = os.path.join(ROOT, "..", "shared", "eventlogs", "NVIDIA+spark-rapids-tools", "core", "src",
                    "test", "resources", "spark-events-qualification")


def timed_ms(argv, stdout_fd):
    start = time.perf_counter_ns()
    pid = os.posix_spawn(argv[0], argv, os.environ,
                         file_actions=[(os.POSIX_SPAWN_DUP2, stdout_fd, 1),
                                       (os.POSIX_SPAWN_DUP2, stdout_fd, 2)])
    _, status = os.waitpid(pid, 0)
    elapsed = (time.perf_counter_ns() - start) / 1e6
    if os.waitstatus_to_exitcode(status) not in (0, 3):
        sys.exit(f"{' '.join(argv)} failed ({status})")
    return elapsed


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 21
    log = sys.argv[2] if len(sys.argv) > 2 else os.path.join(LOGS, "nds_q72_dataproc_2_2.zstd")
    cli = os.path.abspath(os.environ.get("SPARKPROF_CLI", os.path.join(ROOT, "build/cli/sparkprof")))
    zstd = "/usr/bin/zstd"
    if not os.path.exists(log):
        print(f"no log at {log}; skipped")
        return
    if not os.access(cli, os.X_OK):
        sys.exit("build first: scripts/build.sh release")
    with tempfile.TemporaryDirectory() as tmp:
        plain = os.path.join(tmp, "log.json")
        with open(plain, "wb") as out:
            pid = os.posix_spawn(zstd, [zstd, "-dc", log], os.environ,
                                 file_actions=[(os.POSIX_SPAWN_DUP2, out.fileno(), 1)])
            os.waitpid(pid, 0)
        commands = {
            "zstd -dc": [zstd, "-dc", log],
            "analyze": [cli, "analyze", "-q", log],
            "analyze --no-right-sizing": [cli, "analyze", "-q", "--no-right-sizing", log],
            "analyze (plain file)": [cli, "analyze", "-q", plain],
        }
        times = {name: [] for name in commands}
        null = os.open(os.devnull, os.O_WRONLY)
        for _ in range(rounds):
            for name, argv in commands.items():
                times[name].append(timed_ms(argv, null))
        os.close(null)
    print(f"{os.path.basename(log)}, {rounds} rounds, cpus {os.cpu_count()}, "
          f"load {os.getloadavg()[0]:.2f}")
    base_median = statistics.median(times["zstd -dc"])
    base_best = min(times["zstd -dc"])
    print(f"{'command':28} {'median ms':>10} {'best ms':>8} {'ratio med':>10} {'ratio best':>11}")
    for name, values in times.items():
        median = statistics.median(values)
        best = min(values)
        print(f"{name:28} {median:10.2f} {best:8.2f} {median / base_median:10.2f} "
              f"{best / base_best:11.2f}")


if __name__ == "__main__":
    main()
