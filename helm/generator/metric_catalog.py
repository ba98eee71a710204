"""The metric names docs/metrics.md defines, and a check that a PromQL expression uses only those.

docs/metrics.md is the single source of truth for metric names (STYLE.md, point 17): every alert
rule and dashboard query the chart ships is checked against it when it is generated and in the
tests, so a renamed or removed metric fails the build instead of leaving an empty panel.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

# A metric row of a table in docs/metrics.md: | `name` | type | unit | labels | definition |
_ROW = re.compile(r"^\|\s*`([a-z_][a-z0-9_]*)`\s*\|\s*([a-z]+)\s*\|")
# Series names a histogram exposes besides its base name.
_HISTOGRAM_SUFFIXES = ("_bucket", "_count", "_sum")
# Identifiers in an expression that may be metric names: everything spark_* or sparkprof_*.
_CANDIDATE = re.compile(r"\b((?:spark|sparkprof)_[a-z0-9_]+)\b")
_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')
_LABEL_MATCHERS = re.compile(r"\{[^}]*\}")


@dataclass(frozen=True)
class MetricCatalog:
    types_by_name: dict[str, str]

    @classmethod
    def from_markdown(cls, path: Path) -> "MetricCatalog":
        types_by_name: dict[str, str] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            match = _ROW.match(line)
            if match:
                types_by_name[match.group(1)] = match.group(2)
        if not types_by_name:
            raise ValueError(f"{path}: no metric table rows (| `name` | type | ...) found")
        return cls(types_by_name)

    def series_names(self) -> set[str]:
        """Every series name a scrape can contain: the names, plus _bucket/_count/_sum of histograms."""
        names = set(self.types_by_name)
        for name, kind in self.types_by_name.items():
            if kind == "histogram":
                names.update(name + suffix for suffix in _HISTOGRAM_SUFFIXES)
        return names

    def unknown_names(self, expr: str) -> list[str]:
        """Metric names used by `expr` that docs/metrics.md does not define (sorted, unique).

        Label values and label names are removed first, so `category="spark_x"` or `by (spark_x)`
        inside matchers never count as a metric; `by (...)` lists are plain label names and are
        never spark_*/sparkprof_* in our expressions.
        """
        stripped = _LABEL_MATCHERS.sub("", _QUOTED.sub('""', expr))
        known = self.series_names()
        return sorted({name for name in _CANDIDATE.findall(stripped) if name not in known})

    def used_names(self, expr: str) -> set[str]:
        stripped = _LABEL_MATCHERS.sub("", _QUOTED.sub('""', expr))
        return set(_CANDIDATE.findall(stripped))
