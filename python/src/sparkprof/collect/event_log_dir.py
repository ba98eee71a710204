"""``collect --event-log-dir URL``: every application log under a local folder or any fsspec URL,
found by the engine's own discovery; only new or grown logs are read."""

from __future__ import annotations

import dataclasses
import io
import json
import os
from collections.abc import Callable, Iterator
from typing import Any

from sparkprof._tree import BinaryStream, Root, Tree, TreeEntry, fsspec_root, local_root
from sparkprof.analysis import Discovery, FoundLog
from sparkprof.collect.summary import CollectSummary, failed, keep
from sparkprof.executor_logs import fetch_logs
from sparkprof.run_record import JobKeyRule
from sparkprof.store import HistoryStore

COLLECTOR = "event-log-dir"


class KnownHeadsTree:
    """A tree whose files' first bytes come from the store when the file has not changed since
    the last collect (discovery looks at them to tell zips from logs): an unchanged folder costs
    a listing, no reads. Records the heads of new files for the next time."""

    HEAD_BYTES = 16

    def __init__(self, inner: Tree, location_prefix: str, store: HistoryStore) -> None:
        self.inner = inner
        self.prefix = location_prefix
        self.store = store
        self.signatures: dict[str, str] = {}  # path -> "size:version", from the listings
        self.known_heads: dict[str, tuple[str, bytes]] = {}  # location -> (signature, head)
        self.new_heads: dict[str, tuple[str, bytes]] = {}

    def list(self, path: str) -> Iterator[TreeEntry]:
        entries = list(self.inner.list(path))
        files = [entry for entry in entries if entry[2] == "file"]
        for _, child, _, size, _, version in files:
            self.signatures[child] = f"{size}:{version}"
        self.known_heads.update(self.store.file_heads(self.prefix + entry[1] for entry in files))
        return iter(entries)

    def open(self, path: str) -> BinaryStream:
        return self.inner.open(path)

    def open_for_scan(self, path: str) -> BinaryStream:
        location = self.prefix + path
        signature = self.signatures.get(path, "")
        known = self.known_heads.get(location)
        if signature and known is not None and known[0] == signature:
            return _HeadThenFile(known[1], lambda: self.inner.open(path))
        with self.inner.open(path) as stream:
            head = _read_up_to(stream, self.HEAD_BYTES)
        if signature:
            self.new_heads[location] = (signature, head)
        return _HeadThenFile(head, lambda: self.inner.open(path))


class EventLogDirCollector:
    """Collects the application logs under ``url`` (one file, one log folder or a folder of many,
    zips included) into ``store``."""

    def __init__(
        self,
        store: HistoryStore,
        url: str,
        *,
        job_keys: JobKeyRule | None = None,
        workers: int = 1,
        limit: int | None = None,
        storage_options: dict[str, Any] | None = None,
        profile: str | None = None,
        logs: str | None = None,
    ) -> None:
        """``profile``: the Spark plugin's output directory (``spark.sparkprof.outputDir``), each
        application's agent profile under its id, as ``analyze --profile DIR``: the runs then
        keep the agent's measurements (executors' memory peaks, task time by stack).
        ``logs``: the executors' and the driver's own logs of these applications (a directory or
        an fsspec URL, as ``analyze --logs``; each application reads only its own, by its id):
        the runs' reports then carry ``logs`` and the kill causes read them."""
        self.profile = profile
        self.logs = logs
        self.store = store
        self.url = url
        self.job_keys = job_keys or JobKeyRule()
        self.workers = workers
        self.limit = limit
        self.storage_options = storage_options or {}

    def collect(self) -> CollectSummary:
        with fetch_logs(self.logs, **self.storage_options) as local_logs:
            return self._collect(local_logs)

    def _collect(self, local_logs: str | None) -> CollectSummary:
        root, prefix = self._root()
        tree = KnownHeadsTree(root.tree, prefix, self.store)
        discovery = Discovery(
            dataclasses.replace(root, tree=tree),
            on_read_error="report",
            profile=self.profile,
            logs=local_logs,
        )
        if discovery.native.errors and not discovery.logs:  # nothing could be listed or opened
            raise discovery.native.errors[0]
        # A file that could not be opened now is not in the logs and has no recorded head: the
        # next collect tries it again.
        self.store.record_file_heads(tree.new_heads)
        summary = CollectSummary(found=len(discovery.logs))
        changed: list[FoundLog] = []
        for log in discovery.logs:
            previous = self.store.collected_log(COLLECTOR, _location(log))
            if previous is not None and previous.signature == _signature(log):
                summary.unchanged += 1
            else:
                changed.append(log)
        if self.limit is not None and len(changed) > self.limit:
            summary.deferred = len(changed) - self.limit
            changed = changed[: self.limit]
        by_index = {log.index: log for log in changed}
        for outcome in discovery.outcomes(by_index, workers=self.workers):
            log = by_index[outcome.index]
            location = _location(log)
            if outcome.error is not None:
                failed(self.store, summary, COLLECTOR, location, outcome.error)
                continue
            keep(
                self.store,
                summary,
                COLLECTOR,
                location,
                _signature(log),
                outcome.analysed,
                _source(log),
                self.job_keys,
            )
        return summary

    def _root(self) -> tuple[Root, str]:
        if "://" in self.url or "::" in self.url:
            root = fsspec_root(self.url, self.storage_options)
            protocol = self.url.split("://", 1)[0] + "://" if "://" in self.url else ""
            return root, protocol
        root = local_root(os.path.abspath(self.url))
        return root, "file://"

    @staticmethod
    def location_of(log: FoundLog) -> str:
        return _location(log)


def _location(log: FoundLog) -> str:
    """A log is known by its first part (unique under one root)."""
    return log.parts[0][0] if log.parts else log.name


def _source(log: FoundLog) -> str:
    """What to give ``sparkprof analyze`` for this log: the file, or the folder of its parts."""
    first = _location(log)
    if log.layout in ("rolling", "databricks") and "/" in first:
        return first.rsplit("/", 1)[0]
    return first


def _signature(log: FoundLog) -> str:
    """Parts and their sizes: Spark only appends to logs and adds parts, so a log that grew or
    rolled over differs."""
    return json.dumps([log.layout, log.parts])


def _read_up_to(stream: BinaryStream, count: int) -> bytes:
    data = bytearray()
    while len(data) < count:
        chunk = stream.read(count - len(data))
        if not chunk:
            break
        data += chunk
    return bytes(data)


class _HeadThenFile(io.RawIOBase):
    """Serves a file's known first bytes; opens the file only if more is wanted (a zip)."""

    def __init__(self, head: bytes, opener: Callable[[], BinaryStream]) -> None:
        super().__init__()
        self._head = memoryview(head)
        self._opener = opener
        self._stream: BinaryStream | None = None
        self._offset = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        target = memoryview(buffer).cast("B")
        if self._offset < len(self._head):
            count = min(len(target), len(self._head) - self._offset)
            target[:count] = self._head[self._offset : self._offset + count]
            self._offset += count
            return count
        if self._stream is None:
            self._stream = self._opener()
            skipped = _read_up_to(self._stream, len(self._head))
            if len(skipped) != len(self._head):
                raise OSError("the file changed while it was being read")
        data = self._stream.read(len(target))
        target[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None
        super().close()
