"""Where a cloud platform's clusters write Spark event logs: each platform's resolver (emr.py,
databricks.py, dataproc.py) asks its control plane about clusters and answers with locations the
plain collectors read (an event-log folder URL, or a History Server's URL), or says why a cluster
has none that can be read from outside it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from sparkprof.collect.event_log_dir import EventLogDirCollector
from sparkprof.collect.history_server import HistoryServerClient, HistoryServerCollector
from sparkprof.collect.summary import CollectSummary
from sparkprof.run_record import JobKeyRule
from sparkprof.store import HistoryStore

LocationKind = Literal["event-log-dir", "history-server"]


@dataclass(frozen=True)
class LogLocation:
    """Where one cluster's event logs can be read, and how that was decided."""

    platform: str  # emr, databricks, dataproc
    cluster: str  # the platform's cluster id or name
    kind: LocationKind
    url: str
    reason: str  # which setting or rule gave the location


@dataclass(frozen=True)
class Unreachable:
    """A cluster whose event logs cannot be read from outside it, and what would change that."""

    platform: str
    cluster: str
    reason: str


@dataclass
class Resolution:
    locations: list[LogLocation] = field(default_factory=list)
    unreachable: list[Unreachable] = field(default_factory=list)

    def add(self, found: LogLocation | Unreachable) -> None:
        if isinstance(found, LogLocation):
            self.locations.append(found)
        else:
            self.unreachable.append(found)


def event_log_setting(properties: dict[str, str]) -> str | None:
    """The folder ``spark.eventLog.dir`` names, with Hadoop's s3a/s3n schemes read as s3 (the
    fsspec name of the same store); None when logging is off or the setting is absent."""
    if properties.get("spark.eventLog.enabled", "true").strip().lower() == "false":
        return None
    folder = properties.get("spark.eventLog.dir", "").strip()
    if not folder:
        return None
    for hadoop_scheme in ("s3a://", "s3n://"):
        if folder.startswith(hadoop_scheme):
            folder = "s3://" + folder[len(hadoop_scheme) :]
    return folder


def readable_from_outside(url: str) -> bool:
    """A location another machine can read: an object store, not the cluster's own HDFS or
    local disks."""
    return url.split("://", 1)[0] in ("s3", "gs", "gcs", "abfs", "abfss", "az", "dbfs", "wasbs")


def join(folder: str, *parts: str) -> str:
    return "/".join([folder.rstrip("/"), *(part.strip("/") for part in parts)])


def collect_locations(
    store: HistoryStore,
    resolution: Resolution,
    *,
    job_keys: JobKeyRule | None = None,
    workers: int = 1,
    limit: int | None = None,
    storage_options: dict[str, object] | None = None,
    retries: int = 5,
) -> CollectSummary:
    """Hands each location to its collector; one summary for all of them (a location that
    cannot be listed at all is one failure, the others are still collected)."""
    total = CollectSummary()
    seen: set[tuple[str, str]] = set()
    for location in resolution.locations:
        if (location.kind, location.url) in seen:  # clusters sharing one folder
            continue
        seen.add((location.kind, location.url))
        try:
            if location.kind == "event-log-dir":
                summary = EventLogDirCollector(
                    store,
                    location.url,
                    job_keys=job_keys,
                    workers=workers,
                    limit=limit,
                    storage_options=dict(storage_options or {}),
                ).collect()
            else:
                client = HistoryServerClient(location.url, retries=retries)
                summary = HistoryServerCollector(
                    store, client, job_keys=job_keys, limit=limit
                ).collect()
        except Exception as error:  # storage or network: reported, retried next time
            total.failed.append((location.url, f"{type(error).__name__}: {error}"))
            continue
        total.found += summary.found
        total.unchanged += summary.unchanged
        total.stored += summary.stored
        total.not_analysable += summary.not_analysable
        total.failed += summary.failed
        total.deferred += summary.deferred
    return total
