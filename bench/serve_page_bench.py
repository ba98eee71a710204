#!/usr/bin/env python3
"""`sparkprof serve`'s page `/` over a long run history: JOBS jobs x RUNS runs each (default
1,000 x 100 = 100,000 runs, every one a copy of the demo log's stored run: its 66 KB report,
settings and findings; python/tests/synthetic_runs.py fill_history), served by a real uvicorn
on loopback and fetched over HTTP. Prints the store's size and the wall time of each `/`
(first and median of --repeats), and of `/?page=N` for the last page.

Usage: bench/serve_page_bench.py --python VENV_PYTHON --store-dir DIR [--jobs 1000] [--runs 100]
       [--repeats 5] [--package-dir DIR]
The store is built once in DIR (history.sqlite; kept for the next run: delete DIR to rebuild).
--package-dir runs the page of another copy of the package (a folder holding `sparkprof/`, e.g.
an older commit's python/src with the native module linked in) against the same store: the
baseline "before" of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent / "python" / "tests"

# Runs in the venv's Python (the package under test importable): builds the store if missing,
# starts uvicorn, fetches the pages, prints one line per measurement.
_MEASURE = r"""
import os, statistics, subprocess, sys, tempfile, threading, time
from pathlib import Path
import httpx, uvicorn
import sparkprof
from sparkprof.store import HistoryStore
from sparkprof.server import create_app
sys.path.insert(0, os.environ["BENCH_TESTS"])
from synthetic_runs import fill_history

folder, jobs, runs, repeats = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
database = folder / "history.sqlite"
fresh = not database.exists()
store = HistoryStore(f"sqlite:///{database}")
if fresh:
    cli = Path(sparkprof.__file__).resolve().parent / "bin" / "sparkprof"
    log = folder / "demo.log"
    subprocess.run([str(cli), "demo-log", "-o", str(log)], check=True, capture_output=True)
    template = store.save_run(next(sparkprof.iter_applications(log)), "demo")
    began = time.monotonic()
    fill_history(store, template, jobs, runs)
    from sqlalchemy import delete
    from sparkprof.store.schema import Run
    with store.session() as session, session.begin():
        session.execute(delete(Run).where(Run.id == template.id))
    print(f"filled {jobs * runs} runs in {time.monotonic() - began:.1f} s")
print(f"store: {database.stat().st_size / 2**30:.2f} GiB, {len(store.jobs())} jobs")
app = create_app(store)  # the old and the new signature alike
with __import__("socket").socket() as probe:
    probe.bind(("127.0.0.1", 0)); port = probe.getsockname()[1]
server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
threading.Thread(target=server.run, daemon=True).start()
while not server.started:
    time.sleep(0.05)
base = f"http://127.0.0.1:{port}"
for label, path in (("/", "/"), ("last page", f"/?page={-(-jobs // 20)}")):
    times, size = [], 0
    for _ in range(repeats):
        began = time.monotonic()
        answer = httpx.get(base + path, timeout=3600)
        times.append(time.monotonic() - began)
        answer.raise_for_status()
        size = len(answer.content)
    print(f"{label}: first {times[0]:.3f} s, median {statistics.median(times):.3f} s "
          f"of {repeats}, {size / 1024:.0f} KiB, {answer.text.count('<section')} job sections")
server.should_exit = True
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", required=True, help="the venv's python (sparkprof[serve])")
    parser.add_argument("--store-dir", required=True, type=Path)
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=100, help="runs per job")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--package-dir", help="another sparkprof package to serve the page")
    args = parser.parse_args()
    args.store_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "BENCH_TESTS": str(TESTS)}
    if args.package_dir:
        env["PYTHONPATH"] = args.package_dir
    command = [args.python, "-c", _MEASURE, str(args.store_dir), str(args.jobs), str(args.runs)]
    began = time.monotonic()
    done = subprocess.run([*command, str(args.repeats)], env=env, check=False)
    print(f"({time.monotonic() - began:.0f} s in all)", file=sys.stderr)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
