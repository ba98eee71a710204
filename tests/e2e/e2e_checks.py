"""The end-to-end scripts' check lines: each prints ok/FAIL and the run fails if any failed."""

failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what, flush=True)
    if not condition:
        failures.append(what)
    return condition
