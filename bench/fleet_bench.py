#!/usr/bin/env python3
"""Fleet scale: `sparkprof reports` (python/src/sparkprof/report_files.py) over a folder of N event
logs made of copies (hard links where possible) of the shared real logs, at 1 worker and at every
core, against the native `sparkprof analyze` of one copy of the set as the baseline. Prints
applications per minute per core, CPU use and peak RSS for each run (bench/RESULTS.md).

Usage: bench/fleet_bench.py --python VENV_PYTHON --cli NATIVE_SPARKPROF [--logs 1000]
       [--shared ../shared/eventlogs] [--work /tmp/sparkprof-fleet-bench]
Each measured command runs in its own process; its CPU time and peak RSS come from wait4.

       bench/fleet_bench.py --python VENV_PYTHON --sizing LOG [LOG ...] [--repeats 3]
The replays behind `recommend --input-size` (each log analysed once, then replayed at the
executor counts sizing.EXECUTOR_FACTORS): against the simulator prepared once per run, as
recommend does, and prepared again for every count (the baseline: what recommend did before).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def shared_logs(shared: Path, cli: str) -> list[Path]:
    """The shared logs the engine can analyse: each a file or a log folder (rolling, Databricks),
    found by asking the CLI about each top-level candidate."""
    candidates: list[Path] = []
    for path in sorted(shared.rglob("*")):
        if any(part.startswith(("eventlog_v2_", "databricks")) for part in path.parent.parts):
            continue  # inside a log folder: the folder is the candidate
        documentation = path.suffix in (".md", ".tsv", ".txt") or path.name == "facts.json"
        if path.is_file() and not documentation:
            candidates.append(path)
        elif path.is_dir() and path.name.startswith("eventlog_v2_"):
            candidates.append(path)
    usable = []
    for path in candidates:
        done = subprocess.run(
            [cli, "analyze", str(path), "--format", "json", "-q", "--no-right-sizing",
             "-o", os.devnull],
            capture_output=True,
            check=False,
        )
        if done.returncode == 0:
            usable.append(path)
    return usable


def link_or_copy(source: Path, target: Path) -> None:
    if source.is_dir():
        shutil.copytree(source, target, copy_function=link_or_copy_file)
    else:
        link_or_copy_file(str(source), str(target))


def link_or_copy_file(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def make_folder(logs: list[Path], count: int, folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for index in range(count):
        source = logs[index % len(logs)]
        copy = folder / f"copy-{index // len(logs):03d}"
        copy.mkdir(exist_ok=True)
        link_or_copy(source, copy / f"{index % len(logs):03d}-{source.name}")


def measure(command: list[str]) -> dict[str, float]:
    start = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{command} failed: {process.stderr.read().decode()[-2000:]}")
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mib": usage.ru_maxrss / 1024,
    }


# Run by VENV_PYTHON (the package is not importable from the bench's own Python).
SIZING_REPLAYS = """
import json, sys, time
import sparkprof
from sparkprof.sizing import EXECUTOR_FACTORS
from sparkprof.what_if import simulate
logs, repeats = sys.argv[1:-1], int(sys.argv[-1])
for log in logs:
    start = time.process_time()
    analysed = sparkprof.analyze(log).applications[0]
    analysis_s = time.process_time() - start
    executors = max(1, analysed.whatif().actual.executors)
    counts = sorted({max(1, round(executors * f)) for f in EXECUTOR_FACTORS})
    tasks = analysed.report.counts.task_attempts
    figures = {"log": log, "analysis_s": analysis_s, "tasks": tasks}
    for prepared in (False, True):
        best = float("inf")
        for _ in range(repeats):
            start = time.process_time()
            for count in counts:
                simulate(analysed, [f"spark.executor.instances={count}"], prepared=prepared)
            best = min(best, time.process_time() - start)
        figures["prepared" if prepared else "each"] = best
    figures["counts"] = len(counts)
    print(json.dumps(figures), flush=True)
"""


def sizing_bench(python: str, logs: list[str], repeats: int) -> int:
    done = subprocess.run(
        [python, "-c", SIZING_REPLAYS, *logs, str(repeats)], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    import json

    print(f"replays per log at each executor count (CPU s, best of {repeats}):")
    total_each = total_prepared = total_analysis = 0.0
    for line in done.stdout.splitlines():
        f = json.loads(line)
        total_each += f["each"]
        total_prepared += f["prepared"]
        total_analysis += f["analysis_s"]
        print(
            f"  {Path(f['log']).name:<40} {f['tasks']:>7} tasks  {f['counts']} counts  "
            f"analysis {f['analysis_s']:6.3f} s  prepared each time {f['each']:7.3f} s  "
            f"prepared once {f['prepared']:7.3f} s  x{f['each'] / f['prepared']:.2f}"
        )
    print(
        f"all: replays x{total_each / total_prepared:.2f} faster; analysis + replays "
        f"x{(total_analysis + total_each) / (total_analysis + total_prepared):.2f}"
    )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", required=True, help="a Python with the sparkprof package")
    parser.add_argument("--sizing", nargs="+", metavar="LOG", help="the sizing replays bench")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cli", help="the native sparkprof CLI")
    parser.add_argument("--logs", type=int, default=1000)
    parser.add_argument("--shared", default=str(HERE.parent.parent / "shared" / "eventlogs"))
    parser.add_argument("--work", default="/tmp/sparkprof-fleet-bench")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    if args.sizing:
        return sizing_bench(args.python, args.sizing, args.repeats)
    if not args.cli:
        parser.error("--cli is needed for the fleet bench")
    work = Path(args.work)
    logs = shared_logs(Path(args.shared), args.cli)
    print(f"{len(logs)} analysable shared logs; folder of {args.logs} copies in {work}")
    one_set, many = work / "one-set", work / "many"
    make_folder(logs, len(logs), one_set)
    make_folder(logs, args.logs, many)
    reports = [args.python, "-m", "sparkprof.cli", "reports", "-q"]
    runs = [
        ("native analyze, one set", len(logs), 1,
         [args.cli, "analyze", str(one_set), "--format", "json", "-q", "-o", os.devnull]),
        ("reports, one set, 1 worker", len(logs), 1,
         [*reports, str(one_set), "-o", str(work / "out-set"), "--workers", "1"]),
        (f"reports, {args.logs} logs, 1 worker", args.logs, 1,
         [*reports, str(many), "-o", str(work / "out-1"), "--workers", "1"]),
        (f"reports, {args.logs} logs, {args.workers} workers", args.logs, args.workers,
         [*reports, str(many), "-o", str(work / "out-n"), "--workers", str(args.workers)]),
    ]
    results = []
    for label, count, workers, command in runs:
        figures = measure(command)
        per_minute = count / figures["wall_s"] * 60
        results.append((label, count, workers, figures, per_minute))
        print(
            f"{label:<34} {figures['wall_s']:7.1f} s wall  {figures['cpu_s']:7.1f} s CPU  "
            f"{per_minute:7.1f} apps/min  {per_minute / workers:7.1f} apps/min/core  "
            f"peak RSS {figures['peak_rss_mib']:6.0f} MiB",
            flush=True,
        )
    base = results[0][3]
    print("ratios against the native CLI on one set (per application):")
    for label, count, _, figures, _ in results[1:]:
        per_app = figures["wall_s"] / count / (base["wall_s"] / results[0][1])
        print(f"  {label:<34} wall per application x{per_app:.2f}, "
              f"peak RSS x{figures['peak_rss_mib'] / base['peak_rss_mib']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
