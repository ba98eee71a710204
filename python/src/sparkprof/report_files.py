"""``sparkprof reports SOURCE --output-dir DIR``: a folder of many applications analysed one
application at a time (at most ``workers`` in memory, on as many threads: the engine runs without
the GIL), each report written as soon as it is done, plus one ``index.jsonl`` line per log.

Unlike ``sparkprof analyze DIR``, which renders one report of every application at the end, memory
does not grow with the number of applications (bench/fleet_bench.py measures it on 1,000 logs).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sparkprof.analysis import Discovery, ReadErrorPolicy, Source, resolve
from sparkprof.atomic_file import open_replacing, usable_output_directory, write_file_atomically

EXTENSIONS = {"json": "json", "html": "html", "md": "md", "text": "txt"}
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class Written:
    """One log's outcome: the files written for it, or why there are none."""

    log: str
    app_id: str
    files: list[str]
    error: str = ""


def _file_stem(app_id: str, attempt_id: str, taken: set[str]) -> str:
    stem = _UNSAFE.sub("_", app_id + (f"_{attempt_id}" if attempt_id else "")) or "application"
    stem = stem.lstrip(".") or "application"
    candidate, number = stem, 1
    while candidate in taken:  # the same application logged twice (copies): keep both
        number += 1
        candidate = f"{stem}-{number}"
    taken.add(candidate)
    return candidate


def write_reports(
    source: Source,
    output_dir: str | os.PathLike[str],
    formats: Sequence[str] = ("json",),
    *,
    workers: int | None = None,
    on_read_error: ReadErrorPolicy = "report",
    **storage_options: Any,
) -> Iterator[Written]:
    """Analyses every application under ``source`` and writes ``<app id>[_<attempt>].<ext>`` per
    format into ``output_dir`` as each finishes, in discovery order; yields each outcome.
    ``workers``: applications analysed at once (default: every core)."""
    unknown = [f for f in formats if f not in EXTENSIONS]
    if unknown or not formats:
        raise ValueError(f"formats must be among {', '.join(EXTENSIONS)}: {unknown or formats}")
    # Each file is written as the engine writes its outputs (atomic_file.py): a symlink or file
    # planted in a shared folder is replaced, never followed or written through.
    folder = usable_output_directory(output_dir)
    discovery = Discovery(resolve(source, **storage_options), on_read_error)
    taken: set[str] = set()
    with open_replacing(folder / "index.jsonl") as index:
        for outcome in discovery.outcomes(workers=workers or os.cpu_count() or 1):
            log = discovery.logs[outcome.index].name
            if outcome.analysed is None:
                error = str(outcome.error) if outcome.error else "no Spark events could be read"
                written = Written(log, "", [], error)
            else:
                info = outcome.analysed.report.application
                stem = _file_stem(info.id, info.attempt_id, taken)
                files = []
                for output_format in formats:
                    path = folder / f"{stem}.{EXTENSIONS[output_format]}"
                    text = (
                        outcome.analysed.report.json
                        if output_format == "json"
                        else outcome.analysed.render(output_format)
                    )
                    write_file_atomically(path, text)
                    files.append(path.name)
                written = Written(log, info.id, files)
            index.write(json.dumps(vars(written), ensure_ascii=False) + "\n")
            index.flush()
            yield written
