"""The executors' and the driver's own logs at an fsspec URL, for ``sparkprof.analyze(...,
logs=URL)``: the engine reads local files only (``sparkprof analyze --logs``), so the files it
would look at (by name: stderr, stdout, log4j*, *.log, *.json, ...) are copied to a temporary
directory first, within the engine's own bounds (docs/limits.md: files, total bytes, depth)."""

from __future__ import annotations

import os
import posixpath
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sparkprof import _native


@contextmanager
def fetch_logs(logs: str | os.PathLike[str] | None, **storage_options: Any) -> Iterator[str | None]:
    """Yields a local path holding the logs: ``logs`` itself when it is local (or None), else a
    temporary directory (removed afterwards) with the log files below the URL, in the same
    layout. Files past the engine's limits are not copied."""
    if logs is None:
        yield None
        return
    path = os.fspath(logs)
    if "://" not in path:
        yield path
        return
    import fsspec  # the URL sources' dependency, as for the event logs

    fs, root = fsspec.core.url_to_fs(path, **storage_options)
    limits = _native.executor_log_limits()
    with tempfile.TemporaryDirectory(prefix="sparkprof-logs-") as local:
        if fs.isfile(root):
            fs.get_file(root, os.path.join(local, posixpath.basename(root.rstrip("/"))))
            yield local
            return
        root = root.rstrip("/")
        copied = 0
        total = 0
        for remote in sorted(fs.find(root, maxdepth=limits["max_depth"] + 1)):
            relative = posixpath.relpath(remote, root)
            parts = relative.split("/")
            if ".." in parts or not _native.is_executor_log_name(parts[-1]):
                continue
            size = fs.size(remote) or 0
            if copied >= limits["max_files"] or total + size > limits["max_total_bytes"]:
                break
            target = os.path.join(local, *parts)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            fs.get_file(remote, target)
            copied += 1
            total += size
        yield local
