"""``collect --databricks``: where Databricks clusters' Spark event logs are delivered, from the
Clusters API (databricks-sdk).

Databricks writes a cluster's event logs only where cluster log delivery sends them
(``cluster_log_conf``): ``<destination>/<cluster id>/eventlog/`` (one folder per driver and Spark
context below it, which the engine reads as Databricks folders). Per cluster:
  * an S3 destination: ``s3://bucket/prefix/<cluster id>/eventlog``, read with s3fs;
  * a DBFS destination: ``dbfs:///path/<cluster id>/eventlog``, read with fsspec's DBFS client
    (the workspace's host and token become its storage options);
  * a Unity Catalog volume (``/Volumes/...``): readable only where the volume is mounted, so
    the answer names the folder to collect there;
  * no delivery configured: nothing outside the cluster holds its event logs (said so).
No Databricks control plane runs here: the tests feed the SDK's own ClusterDetails objects to
the resolver; the calls themselves (``clusters.get``/``clusters.list``) are untested.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sparkprof.collect.cloud import LogLocation, Resolution, Unreachable, join

PLATFORM = "databricks"


def resolve_cluster(details: Any) -> LogLocation | Unreachable:
    """A ``databricks.sdk.service.compute.ClusterDetails`` to where its event logs are."""
    cluster_id = str(details.cluster_id or "")
    conf = details.cluster_log_conf
    s3 = getattr(conf, "s3", None) if conf else None
    dbfs = getattr(conf, "dbfs", None) if conf else None
    volumes = getattr(conf, "volumes", None) if conf else None
    if s3 is not None and s3.destination:
        url = join(s3.destination.replace("s3a://", "s3://", 1), cluster_id, "eventlog")
        return LogLocation(PLATFORM, cluster_id, "event-log-dir", url, "cluster log delivery (S3)")
    if dbfs is not None and dbfs.destination:
        path = dbfs.destination.removeprefix("dbfs:").lstrip("/")
        url = join("dbfs:///" + path, cluster_id, "eventlog")
        return LogLocation(
            PLATFORM, cluster_id, "event-log-dir", url, "cluster log delivery (DBFS)"
        )
    if volumes is not None and volumes.destination:
        folder = join(volumes.destination, cluster_id, "eventlog")
        return Unreachable(
            PLATFORM,
            cluster_id,
            f"cluster log delivery to a Unity Catalog volume: collect --event-log-dir {folder} "
            "where the volume is mounted (a Databricks cluster or job)",
        )
    return Unreachable(
        PLATFORM,
        cluster_id,
        "no cluster log delivery (cluster_log_conf): its event logs stay on the driver; set a "
        "log delivery destination (S3 or DBFS) on the cluster or its policy",
    )


class DatabricksResolver:
    """Asks a workspace (``databricks.sdk.WorkspaceClient``) where its clusters' event logs
    are."""

    def __init__(self, workspace: Any) -> None:
        self.workspace = workspace

    @classmethod
    def connect(cls, profile: str | None = None) -> DatabricksResolver:
        from databricks.sdk import WorkspaceClient

        return cls(WorkspaceClient(profile=profile))

    def storage_options(self) -> dict[str, Any]:
        """What fsspec's DBFS client needs to read dbfs:// locations (a personal access token
        from the workspace's configuration)."""
        config = self.workspace.config
        host = str(config.host or "").removeprefix("https://").rstrip("/")
        return {"instance": host, "token": config.token} if config.token else {}

    def resolve(self, cluster_ids: Iterable[str] | None = None) -> Resolution:
        resolution = Resolution()
        if cluster_ids is None:
            clusters = list(self.workspace.clusters.list())
        else:
            clusters = [self.workspace.clusters.get(cluster_id) for cluster_id in cluster_ids]
        for details in clusters:
            resolution.add(resolve_cluster(details))
        return resolution
