"""``collect --emr``: where Amazon EMR (on EC2) clusters' Spark event logs can be read, from the
EMR API (boto3).

Per cluster (``DescribeCluster``):
  1. ``spark.eventLog.dir`` in the cluster's ``spark-defaults`` configuration, when it is an
     object store (s3://, s3a://): that folder, read by the event-log-dir collector.
  2. Else, while the cluster runs (RUNNING, WAITING): the Spark History Server EMR starts on the
     primary node (``MasterPublicDnsName``, port 18080), read by the History Server collector
     from wherever that port is reachable (a VPN, an SSH tunnel: ``--emr-history-port``).
  3. Else none: EMR's default ``spark.eventLog.dir`` is the cluster's own HDFS
     (hdfs:///var/log/spark/apps), gone with the cluster; the ``LogUri`` bucket receives the
     nodes', steps' and containers' logs, not Spark's event logs. The answer says so.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sparkprof.collect.cloud import (
    LogLocation,
    Resolution,
    Unreachable,
    event_log_setting,
    readable_from_outside,
)

PLATFORM = "emr"
HISTORY_SERVER_PORT = 18080
RUNNING_STATES = ("RUNNING", "WAITING")
LISTED_STATES = ("STARTING", "BOOTSTRAPPING", "RUNNING", "WAITING", "TERMINATING", "TERMINATED")


def spark_defaults(configurations: Iterable[dict[str, Any]]) -> dict[str, str]:
    """The ``spark-defaults`` classification's properties (nested configurations included; a
    later one overrides an earlier one, as EMR applies them)."""
    properties: dict[str, str] = {}
    for configuration in configurations:
        if configuration.get("Classification") == "spark-defaults":
            properties.update(configuration.get("Properties") or {})
        properties.update(spark_defaults(configuration.get("Configurations") or []))
    return properties


def resolve_cluster(
    cluster: dict[str, Any], history_port: int = HISTORY_SERVER_PORT
) -> LogLocation | Unreachable:
    """One ``DescribeCluster`` answer's ``Cluster`` object to where its event logs are."""
    cluster_id = str(cluster.get("Id", ""))
    folder = event_log_setting(spark_defaults(cluster.get("Configurations") or []))
    if folder and readable_from_outside(folder):
        return LogLocation(
            PLATFORM, cluster_id, "event-log-dir", folder, "spark-defaults spark.eventLog.dir"
        )
    state = (cluster.get("Status") or {}).get("State", "")
    primary = cluster.get("MasterPublicDnsName") or ""
    if state in RUNNING_STATES and primary:
        return LogLocation(
            PLATFORM,
            cluster_id,
            "history-server",
            f"http://{primary}:{history_port}",
            f"the running cluster's Spark History Server on its primary node ({state})",
        )
    where = f"spark.eventLog.dir is {folder}" if folder else "spark.eventLog.dir is EMR's default"
    log_uri = cluster.get("LogUri")
    return Unreachable(
        PLATFORM,
        cluster_id,
        f"{where} (the cluster's HDFS) and the cluster is {state or 'in an unknown state'}; "
        + (
            f"its LogUri {log_uri} holds node, step and container logs, not event logs; "
            if log_uri
            else ""
        )
        + "set spark-defaults spark.eventLog.dir to an s3:// folder, or open the persistent "
        "application UI in the EMR console",
    )


class EmrResolver:
    """Asks the EMR API (a boto3 ``emr`` client) where its clusters' event logs are."""

    def __init__(self, client: Any, history_port: int = HISTORY_SERVER_PORT) -> None:
        self.client = client
        self.history_port = history_port

    @classmethod
    def connect(
        cls,
        region: str | None = None,
        endpoint_url: str | None = None,
        history_port: int = HISTORY_SERVER_PORT,
    ) -> EmrResolver:
        import boto3

        return cls(boto3.client("emr", region_name=region, endpoint_url=endpoint_url), history_port)

    def cluster_ids(self, states: Iterable[str] = LISTED_STATES) -> list[str]:
        """Every cluster in those states (ListClusters, all pages; EMR lists about two months)."""
        ids = []
        paginator = self.client.get_paginator("list_clusters")
        for page in paginator.paginate(ClusterStates=list(states)):
            ids += [summary["Id"] for summary in page.get("Clusters", [])]
        return ids

    def resolve(self, cluster_ids: Iterable[str] | None = None) -> Resolution:
        resolution = Resolution()
        wanted = list(cluster_ids) if cluster_ids is not None else self.cluster_ids()
        for cluster_id in wanted:
            cluster = self.client.describe_cluster(ClusterId=cluster_id)["Cluster"]
            resolution.add(resolve_cluster(cluster, self.history_port))
        return resolution
