"""The fleet commands of ``sparkprof`` (collect, history, compare, regressions, feedback)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

COMMANDS: dict[str, Callable[[Sequence[str]], int]] = {}
