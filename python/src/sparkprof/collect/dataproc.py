"""``collect --dataproc``: where Google Cloud Dataproc clusters' Spark event logs are, from the
Dataproc API (google-cloud-dataproc).

Dataproc sets ``spark.eventLog.dir`` to ``gs://<temp bucket>/<cluster uuid>/spark-job-history``
(the cluster's temp bucket: the one given at creation, else the per-region bucket Dataproc made;
the API reports it either way). Per cluster:
  * ``spark:spark.eventLog.dir`` in the cluster's software properties, when it is a gs:// folder:
    that folder;
  * else the temp bucket's ``<cluster uuid>/spark-job-history``;
  * else (no temp bucket in the answer) none, said so.
The folder is read with gcsfs by the event-log-dir collector. No Dataproc control plane runs
here: the tests feed the SDK's own ``dataproc_v1.Cluster`` messages to the resolver and check the
requests it makes; the calls to Google's service are untested.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sparkprof.collect.cloud import (
    LogLocation,
    Resolution,
    Unreachable,
    event_log_setting,
    join,
    readable_from_outside,
)

PLATFORM = "dataproc"
HISTORY_FOLDER = "spark-job-history"


def resolve_cluster(cluster: Any) -> LogLocation | Unreachable:
    """A ``google.cloud.dataproc_v1.Cluster`` to where its event logs are."""
    name = str(cluster.cluster_name)
    properties = dict(cluster.config.software_config.properties)
    spark = {
        key[len("spark:") :]: value for key, value in properties.items() if key.startswith("spark:")
    }
    folder = event_log_setting(spark)
    if folder and readable_from_outside(folder):
        return LogLocation(
            PLATFORM, name, "event-log-dir", folder, "software property spark:spark.eventLog.dir"
        )
    if folder:
        return Unreachable(PLATFORM, name, f"spark.eventLog.dir is {folder}, inside the cluster")
    bucket = str(cluster.config.temp_bucket or "")
    if bucket and cluster.cluster_uuid:
        url = join(
            f"gs://{bucket.removeprefix('gs://')}", str(cluster.cluster_uuid), HISTORY_FOLDER
        )
        return LogLocation(
            PLATFORM, name, "event-log-dir", url, "the cluster's temp bucket (Dataproc's default)"
        )
    return Unreachable(PLATFORM, name, "the API reported no temp bucket or cluster uuid")


class DataprocResolver:
    """Asks the Dataproc API (a ``dataproc_v1.ClusterControllerClient``) where a project's
    clusters in one region keep their event logs."""

    def __init__(self, client: Any, project_id: str, region: str) -> None:
        self.client = client
        self.project_id = project_id
        self.region = region

    @classmethod
    def connect(cls, project_id: str, region: str) -> DataprocResolver:
        from google.cloud import dataproc_v1

        client = dataproc_v1.ClusterControllerClient(
            client_options={"api_endpoint": f"{region}-dataproc.googleapis.com:443"}
        )
        return cls(client, project_id, region)

    def resolve(self, cluster_names: Iterable[str] | None = None) -> Resolution:
        resolution = Resolution()
        where = {"project_id": self.project_id, "region": self.region}
        if cluster_names is None:
            clusters = list(self.client.list_clusters(request=where))
        else:
            clusters = [
                self.client.get_cluster(request={**where, "cluster_name": name})
                for name in cluster_names
            ]
        for cluster in clusters:
            resolution.add(resolve_cluster(cluster))
        return resolution
