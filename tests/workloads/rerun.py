#!/usr/bin/env python3
"""The nightly check: re-runs the workload corpus on a fresh cluster and checks the fresh logs.

Runs every workload (or --only NAME...) of manifest.json on one Spark release exactly as
generate.py does, into a temporary directory (the committed fixtures are not touched), then
applies accuracy.py's checks to the fresh event logs. Catches what the committed fixtures cannot:
a Spark release, a JVM or a workload change that no longer plants its problem, or a diagnosis
that only holds on the one run that was committed.

Exit codes: 0 every workload ran as planted and passed the accuracy checks, 1 otherwise, 77
skipped (no Spark at --spark-home, no Python, no java).
"""

import argparse
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import accuracy  # noqa: E402
import generate  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spark-home", required=True)
    parser.add_argument("--python", help="as for generate.py")
    parser.add_argument("--java-home", default=os.environ.get("JAVA_HOME", ""))
    parser.add_argument("--sparkprof", required=True, help="the sparkprof CLI")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="just these workloads")
    parser.add_argument("--manifest", default=generate.MANIFEST)
    parser.add_argument("--work-dir", help="kept after the run (default: a temp directory, "
                        "removed at the end)")
    parser.add_argument("--quiet-wait-s", type=float, default=600)
    args = parser.parse_args()

    work = os.path.abspath(args.work_dir) if args.work_dir else tempfile.mkdtemp(
        prefix="sparkprof-rerun-")
    try:
        run_args = argparse.Namespace(
            spark_home=args.spark_home, python=args.python, java_home=args.java_home,
            only=args.only, manifest=args.manifest, work_dir=os.path.join(work, "clusters"),
            keep_work=True, write_fixtures=False, out=os.path.join(work, "logs"),
            quiet_wait_s=args.quiet_wait_s)
        generated, runs = generate.generate(run_args)
        if generated == generate.SKIPPED:
            return generate.SKIPPED
        if not runs:
            return 1
        check_args = argparse.Namespace(
            sparkprof=args.sparkprof, fixtures=run_args.out, manifest=args.manifest,
            only=args.only, write=None, check_docs=None)
        checked = accuracy.check(check_args)
        return 1 if generated != 0 or checked != 0 else 0
    finally:
        if not args.work_dir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
