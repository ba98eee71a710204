"""The end-to-end scripts' check lines: each prints ok/FAIL and the run fails if any failed."""

import time

failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what, flush=True)
    if not condition:
        failures.append(what)
    return condition


def verdict(version, started_monotonic, work):
    """The run's last lines and its exit code: 1 when any check failed, else 0."""
    print(f"Spark {version}: took {time.monotonic() - started_monotonic:.0f} s; logs in {work}")
    if failures:
        print(f"Spark {version}: {len(failures)} check(s) failed")
        return 1
    print(f"Spark {version}: PASS")
    return 0


def broke_off(error, driver_log, cluster):
    """A run that stopped with an exception: one failed check, the driver's and the cluster's logs."""
    from spark_cluster import read_tail

    check(False, f"the run broke off: {type(error).__name__}: {error}")
    print(f"--- driver log\n{read_tail(driver_log)}")
    print(cluster.log_tails())
