#!/usr/bin/env python3
"""Every value in helm/sparkprof/values.yaml is commented (STYLE.md, point 17): each key line has a
comment line right above it, except the entries of free-form maps (resources, selector,
securityContext), whose
parent key carries the comment."""

from __future__ import annotations

import re
import sys
from pathlib import Path

VALUES = Path(__file__).resolve().parents[1] / "sparkprof" / "values.yaml"
FREE_FORM = {"resources", "selector", "requests", "limits", "securityContext"}
KEY = re.compile(r"^(\s*)([A-Za-z_][\w.-]*):")


def main() -> int:
    problems = []
    parents: list[tuple[int, str]] = []  # (indent, key) of the enclosing keys
    previous = ""
    for number, line in enumerate(VALUES.read_text(encoding="utf-8").splitlines(), start=1):
        match = KEY.match(line)
        if match:
            indent, key = len(match.group(1)), match.group(2)
            while parents and parents[-1][0] >= indent:
                parents.pop()
            free = any(parent in FREE_FORM for _, parent in parents)
            if not free and not previous.lstrip().startswith("#"):
                problems.append(f"{VALUES.name}:{number}: {key} has no comment above it")
            parents.append((indent, key))
        if line.strip():
            previous = line
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
