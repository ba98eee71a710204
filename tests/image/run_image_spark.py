#!/usr/bin/env python3
"""Spark with the files the image delivers: the chart's init container (podman, as
tests/image/init_container.py runs it) copies the image's /sparkprof into an empty directory,
then tests/e2e/run_real_spark.py runs the demo on a standalone cluster with -agentpath and --jars
pointing at the copied libsparkprof.so and plugin jar, and makes all its checks (the report equals
the event log's analysis, a flame graph per stage, the saved profile, Prometheus).

    run_image_spark.py --archive ARCHIVE --work-dir DIR [--helm HELM] -- RUN_REAL_SPARK_ARGS...

RUN_REAL_SPARK_ARGS are run_real_spark.py's own, without --agent, --plugin-jar and --work-dir.
Exit codes: run_real_spark.py's (0 passed, 1 failed, 77 skipped), 77 without podman or helm.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from init_container import copy_files, find_helm, missing_prerequisite


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--archive", type=Path, required=True)
    parser.add_argument("--work-dir", type=Path, required=True)
    parser.add_argument("--helm", default="")
    parser.add_argument("rest", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    helm = find_helm(args.helm)
    stop = missing_prerequisite(helm, args.archive)
    if stop is not None:
        return stop
    work = args.work_dir.resolve()
    shutil.rmtree(work, ignore_errors=True)
    installed = work / "installed"
    with tempfile.TemporaryDirectory(prefix="sparkprof-podman-") as podman_work:
        problems = copy_files(args.archive.resolve(), helm, installed, Path(podman_work))
    for problem in problems:
        print("FAIL " + problem)
    if problems:
        return 1
    jars = sorted(installed.glob("sparkprof-spark-*.jar"))
    if len(jars) != 1:
        print(f"FAIL the image copied {len(jars)} plugin jars into {installed}")
        return 1
    jar = jars[0]
    rest = [a for a in args.rest if a != "--"]
    run_real_spark = Path(__file__).resolve().parents[1] / "e2e" / "run_real_spark.py"
    command = [sys.executable, str(run_real_spark), "--agent", str(installed / "libsparkprof.so"),
               "--plugin-jar", str(jar), "--work-dir", str(work / "spark"), *rest]
    print("spark with the image's files: " + " ".join(command), flush=True)
    return subprocess.run(command).returncode


if __name__ == "__main__":
    sys.exit(main())
