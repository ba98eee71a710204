"""Cloud collectors: EMR against moto's EMR and S3 emulation (server mode, on loopback), end to end
through ``sparkprof collect --emr``; Databricks and Dataproc resolution on their SDKs' own
response types (no control plane of theirs can run here), Databricks' delivered folder layout
read from S3 (moto)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import boto3
import fsspec
import pytest
from servers import s3_options
from synthetic_runs import make_run

from sparkprof.collect.cloud import LogLocation, Resolution, Unreachable, collect_locations
from sparkprof.collect.databricks import DatabricksResolver
from sparkprof.collect.databricks import resolve_cluster as databricks_cluster
from sparkprof.collect.dataproc import DataprocResolver
from sparkprof.collect.dataproc import resolve_cluster as dataproc_cluster
from sparkprof.collect.emr import EmrResolver, spark_defaults
from sparkprof.collect.emr import resolve_cluster as emr_cluster
from sparkprof.store import HistoryStore

ENTRY = [sys.executable, "-m", "sparkprof.cli"]
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}


@pytest.fixture()
def aws(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in CREDENTIALS.items():
        monkeypatch.setenv(key, value)


def _emr(endpoint: str) -> Any:
    return boto3.client("emr", endpoint_url=endpoint, region_name="us-east-1")


def _start_cluster(emr: Any, name: str, **extra: Any) -> str:
    answer = emr.run_job_flow(
        Name=name,
        ReleaseLabel="emr-7.5.0",
        Instances={
            "MasterInstanceType": "m5.xlarge",
            "SlaveInstanceType": "m5.xlarge",
            "InstanceCount": 3,
            "KeepJobFlowAliveWhenNoSteps": True,
        },
        JobFlowRole="EMR_EC2_DefaultRole",
        ServiceRole="EMR_DefaultRole",
        **extra,
    )
    return str(answer["JobFlowId"])


def _put_logs(endpoint: str, bucket: str, folder: str, logs: list[Path]) -> None:
    boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").create_bucket(Bucket=bucket)
    s3 = fsspec.filesystem("s3", **s3_options(endpoint))
    for log in logs:
        s3.put(str(log), f"{bucket}/{folder}/{log.name}")


def test_emr_resolution_against_moto(aws: None, s3_endpoint: str) -> None:
    emr = _emr(s3_endpoint)
    on_s3 = _start_cluster(
        emr,
        "nightly",
        LogUri="s3://emr-resolve/logs/",
        Configurations=[
            {
                "Classification": "spark-defaults",
                "Properties": {"spark.eventLog.dir": "s3a://emr-resolve/events"},
            }
        ],
    )
    running = _start_cluster(emr, "adhoc", LogUri="s3://emr-resolve/logs/")
    ended = _start_cluster(emr, "gone", LogUri="s3://emr-resolve/logs/")
    emr.terminate_job_flows(JobFlowIds=[ended])
    resolution = EmrResolver(emr, history_port=18999).resolve([on_s3, running, ended])
    by_cluster = {found.cluster: found for found in resolution.locations}
    assert by_cluster[on_s3] == LogLocation(
        "emr",
        on_s3,
        "event-log-dir",
        "s3://emr-resolve/events",
        "spark-defaults spark.eventLog.dir",
    )
    state = emr.describe_cluster(ClusterId=running)["Cluster"]
    assert state["Status"]["State"] in ("RUNNING", "WAITING")
    history = by_cluster[running]
    assert history.kind == "history-server"
    assert history.url == f"http://{state['MasterPublicDnsName']}:18999"
    (gone,) = resolution.unreachable
    assert gone.cluster == ended
    assert "s3://emr-resolve/logs/" in gone.reason and "not event logs" in gone.reason
    # Without ids: every cluster the API lists (ListClusters, paged).
    listed = EmrResolver(emr).cluster_ids()
    assert {on_s3, running, ended} <= set(listed)


def test_emr_spark_defaults_nested_and_disabled() -> None:
    configurations = [
        {
            "Classification": "spark",
            "Configurations": [
                {
                    "Classification": "spark-defaults",
                    "Properties": {"spark.eventLog.dir": "s3://a/x"},
                }
            ],
        },
        {"Classification": "spark-defaults", "Properties": {"spark.eventLog.dir": "s3n://b/y"}},
    ]
    assert spark_defaults(configurations)["spark.eventLog.dir"] == "s3n://b/y"
    cluster = {"Id": "j-1", "Status": {"State": "TERMINATED"}, "Configurations": configurations}
    found = emr_cluster(cluster)
    assert isinstance(found, LogLocation) and found.url == "s3://b/y"
    configurations[1]["Properties"]["spark.eventLog.enabled"] = "false"
    assert isinstance(emr_cluster(cluster), Unreachable)
    hdfs = {
        "Id": "j-2",
        "Status": {"State": "TERMINATED"},
        "Configurations": [
            {
                "Classification": "spark-defaults",
                "Properties": {"spark.eventLog.dir": "hdfs:///logs"},
            }
        ],
    }
    reason = emr_cluster(hdfs).reason  # type: ignore[union-attr]
    assert "hdfs:///logs" in reason


def test_collect_emr_end_to_end(
    aws: None, s3_endpoint: str, demo_logs: dict[str, Path], tmp_path: Path
) -> None:
    logs = [make_run(demo_logs["plain"], tmp_path, day) for day in (1, 2)]  # two applications
    _put_logs(s3_endpoint, "emr-logs", "spark-events", logs)
    emr = _emr(s3_endpoint)
    cluster = _start_cluster(
        emr,
        "etl",
        Configurations=[
            {
                "Classification": "spark-defaults",
                "Properties": {"spark.eventLog.dir": "s3a://emr-logs/spark-events/"},
            }
        ],
    )
    store = f"sqlite:///{tmp_path}/history.sqlite"
    options = s3_options(s3_endpoint)
    command = [
        *ENTRY,
        "collect",
        "--emr",
        cluster,
        "--endpoint-url",
        s3_endpoint,
        "--region",
        "us-east-1",
        "--store",
        store,
        "--json",
        *[f"--option={key}={json.dumps(value)}" for key, value in options.items()],
    ]
    env = {**os.environ, **CREDENTIALS}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    answer = json.loads(done.stdout)
    assert [loc["url"] for loc in answer["locations"]] == ["s3://emr-logs/spark-events/"]
    assert len(answer["stored"]) == 2 and answer["failed"] == []
    runs = HistoryStore(store).runs()
    assert {Path(run.source).name for run in runs} == {log.name for log in logs}
    again = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    assert json.loads(again.stdout)["unchanged"] == 2


# Databricks: the SDK's own ClusterDetails.


def _details(**log_conf: Any) -> Any:
    from databricks.sdk.service.compute import ClusterDetails

    body: dict[str, Any] = {"cluster_id": "0123-456789-abcdefgh", "cluster_name": "etl"}
    if log_conf:
        body["cluster_log_conf"] = log_conf
    return ClusterDetails.from_dict(body)


def test_databricks_destinations() -> None:
    s3 = databricks_cluster(_details(s3={"destination": "s3a://logs/clusters/", "region": "x"}))
    assert s3 == LogLocation(
        "databricks",
        "0123-456789-abcdefgh",
        "event-log-dir",
        "s3://logs/clusters/0123-456789-abcdefgh/eventlog",
        "cluster log delivery (S3)",
    )
    dbfs = databricks_cluster(_details(dbfs={"destination": "dbfs:/cluster-logs"}))
    assert isinstance(dbfs, LogLocation)
    assert dbfs.url == "dbfs:///cluster-logs/0123-456789-abcdefgh/eventlog"
    volume = databricks_cluster(_details(volumes={"destination": "/Volumes/main/ops/logs"}))
    assert isinstance(volume, Unreachable)
    assert "/Volumes/main/ops/logs/0123-456789-abcdefgh/eventlog" in volume.reason
    nothing = databricks_cluster(_details())
    assert isinstance(nothing, Unreachable) and "no cluster log delivery" in nothing.reason


def test_databricks_delivered_layout_collected_from_s3(
    aws: None, s3_endpoint: str, demo_logs: dict[str, Path], tmp_path: Path
) -> None:
    """The folder Databricks delivers (<dest>/<cluster>/eventlog/<cluster>_<driver ip>/<context
    id>/eventlog), found through the resolver and read by the event-log-dir collector."""
    cluster = "0123-456789-abcdefgh"
    boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1").create_bucket(
        Bucket="dbx-logs"
    )
    s3 = fsspec.filesystem("s3", **s3_options(s3_endpoint))
    s3.put(
        str(demo_logs["plain"]),
        f"dbx-logs/delivery/{cluster}/eventlog/{cluster}_10_0_0_1/5432101234567890/eventlog",
    )
    calls: list[tuple[str, str]] = []

    def get(cluster_id: str) -> Any:
        calls.append(("get", cluster_id))
        return _details(s3={"destination": "s3://dbx-logs/delivery"})

    workspace = SimpleNamespace(
        clusters=SimpleNamespace(get=get, list=lambda: [get(cluster)]),
        config=SimpleNamespace(host="https://adb-1.azuredatabricks.net/", token="dapi-x"),
    )
    resolver = DatabricksResolver(workspace)
    assert resolver.storage_options() == {
        "instance": "adb-1.azuredatabricks.net",
        "token": "dapi-x",
    }
    resolution = resolver.resolve([cluster])
    assert calls == [("get", cluster)]
    store = HistoryStore(f"sqlite:///{tmp_path}/history.sqlite")
    summary = collect_locations(store, resolution, storage_options=s3_options(s3_endpoint))
    assert (summary.found, len(summary.stored), summary.failed) == (1, 1, [])
    (run,) = store.runs()
    assert run.source.startswith(f"s3://dbx-logs/delivery/{cluster}/eventlog/")


# Dataproc: the SDK's own Cluster messages and requests.


def _dataproc_cluster(name: str, properties: dict[str, str] | None = None, bucket: str = "") -> Any:
    from google.cloud import dataproc_v1

    return dataproc_v1.Cluster(
        cluster_name=name,
        cluster_uuid=f"uuid-{name}",
        config=dataproc_v1.ClusterConfig(
            temp_bucket=bucket,
            config_bucket="dataproc-staging-us-central1-1",
            software_config=dataproc_v1.SoftwareConfig(properties=properties or {}),
        ),
    )


def test_dataproc_locations() -> None:
    default = dataproc_cluster(_dataproc_cluster("etl", bucket="dataproc-temp-us-central1-1"))
    assert default == LogLocation(
        "dataproc",
        "etl",
        "event-log-dir",
        "gs://dataproc-temp-us-central1-1/uuid-etl/spark-job-history",
        "the cluster's temp bucket (Dataproc's default)",
    )
    moved = dataproc_cluster(
        _dataproc_cluster("bi", {"spark:spark.eventLog.dir": "gs://history/bi"}, "t")
    )
    assert isinstance(moved, LogLocation) and moved.url == "gs://history/bi"
    inside = dataproc_cluster(
        _dataproc_cluster("x", {"spark:spark.eventLog.dir": "hdfs:///h"}, "t")
    )
    assert isinstance(inside, Unreachable) and "hdfs:///h" in inside.reason
    assert isinstance(dataproc_cluster(_dataproc_cluster("none")), Unreachable)


def test_dataproc_requests() -> None:
    requests: list[tuple[str, dict[str, str]]] = []

    def get_cluster(request: dict[str, str]) -> Any:
        requests.append(("get", request))
        return _dataproc_cluster(request["cluster_name"], bucket="tmp")

    def list_clusters(request: dict[str, str]) -> list[Any]:
        requests.append(("list", request))
        return [_dataproc_cluster("a", bucket="tmp"), _dataproc_cluster("b")]

    client = SimpleNamespace(get_cluster=get_cluster, list_clusters=list_clusters)
    resolver = DataprocResolver(client, "my-project", "us-central1")
    one = resolver.resolve(["etl"])
    assert requests[-1] == (
        "get",
        {"project_id": "my-project", "region": "us-central1", "cluster_name": "etl"},
    )
    assert [loc.url for loc in one.locations] == ["gs://tmp/uuid-etl/spark-job-history"]
    every = resolver.resolve()
    assert requests[-1] == ("list", {"project_id": "my-project", "region": "us-central1"})
    assert [loc.cluster for loc in every.locations] == ["a"]
    assert [c.cluster for c in every.unreachable] == ["b"]


def test_a_location_that_cannot_be_listed_is_one_failure(tmp_path: Path) -> None:
    store = HistoryStore(f"sqlite:///{tmp_path}/history.sqlite")
    resolution = Resolution(
        [LogLocation("emr", "j-1", "event-log-dir", str(tmp_path / "missing"), "test")] * 2
    )
    summary = collect_locations(store, resolution)
    assert len(summary.failed) == 1 and summary.failed[0][0] == str(tmp_path / "missing")
