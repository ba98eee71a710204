#!/usr/bin/env python3
"""Checks the objects `helm template helm/sparkprof` rendered (read from stdin) for one case.

    helm template t helm/sparkprof [--set ...] | check_rendered.py CASE

CASE is one of the cases helm_chart_test.sh renders: defaults, otel, plugin-only, connect (the Spark
Connect server with OpenTelemetry and S3A on), connect-plain (the server alone). Each names the
objects it expects (kinds, names, labels) and the spark-defaults.conf lines; any difference is
printed and exits 1.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
RULES = yaml.safe_load((ROOT / "helm/sparkprof/files/sparkprof-alerts.rules.yaml").read_text())
CHART = yaml.safe_load((ROOT / "helm/sparkprof/Chart.yaml").read_text())
# One ConfigMap per dashboard (templates/grafana-dashboards.yaml), beside spark-defaults.
DASHBOARDS = len(list((ROOT / "helm/sparkprof/dashboards").glob("*.json")))
OTEL_KEYS = {
    "spark.sparkprof.otel.enabled": "true",
    "spark.sparkprof.otel.endpoint": "http://collector.obs:4318",
    "spark.sparkprof.otel.protocol": "http",
    "spark.sparkprof.otel.samplingRatio": "0.25",
    "spark.sparkprof.otel.serviceName": "etl",
    "spark.sparkprof.otel.exporterType": "otlp",
}

problems: list[str] = []


def expect(condition: bool, message: str) -> bool:
    if not condition:
        problems.append(message)
    return condition


def parse_conf(text: str) -> dict[str, str]:
    conf = {}
    for line in text.splitlines():
        if line.strip():
            key, _, value = line.partition(" ")
            expect(key not in conf, f"spark-defaults.conf: {key} twice")
            conf[key] = value
    return conf


def check_connect(case: str, config_maps: dict, by_kind: dict, spark_conf: dict) -> None:
    """The Spark Connect server: its ConfigMap is the Spark configuration plus the server's keys
    (the interceptor only with OpenTelemetry), and the Deployment runs the server with it."""
    connect_map = config_maps.get("t-sparkprof-spark-connect")
    if not expect(connect_map is not None, "no t-sparkprof-spark-connect ConfigMap"):
        return
    conf = parse_conf(connect_map["data"]["spark-defaults.conf"])
    server_keys = {"spark.master": "local[*]", "spark.connect.grpc.binding.port": "15002"}
    if case == "connect":
        server_keys["spark.connect.grpc.interceptor.classes"] = \
            "io.sparkprof.connect.TraceparentInterceptor"
        server_keys["spark.hadoop.fs.s3a.endpoint"] = "http://minio:9000"
        for key in ("spark.sparkprof.otel.enabled", "spark.sparkprof.s3aMetrics.enabled"):
            expect(conf.get(key) == "true", f"spark-connect: {key} = {conf.get(key)!r}")
    else:
        expect("spark.connect.grpc.interceptor.classes" not in conf,
               "spark-connect: the interceptor rendered without OpenTelemetry")
    expect(conf == {**spark_conf, **server_keys},
           f"spark-connect conf is not the Spark conf plus {server_keys}: "
           f"{sorted(set(conf.items()) ^ set({**spark_conf, **server_keys}.items()))}")
    deployment = by_kind["Deployment"][0]
    expect(deployment["metadata"]["name"] == "t-sparkprof-connect", "Deployment name")
    pod = deployment["spec"]["template"]
    expect(pod["metadata"]["labels"].get("spark-role") == "driver",
           "the Connect pod is not labelled spark-role=driver (the PodMonitor's selector)")
    container = pod["spec"]["containers"][0]
    command = container["command"]
    expect(command[0] == "/opt/spark/bin/spark-submit" and command[-1] == "spark-internal"
           and "org.apache.spark.sql.connect.service.SparkConnectServer" in command
           and "/etc/sparkprof-connect/spark-defaults.conf" in command,
           f"Connect server command {command}")
    ports = {port["name"]: port["containerPort"] for port in container["ports"]}
    expect(ports == {"spark-connect": 15002, "sparkprof-metrics": 9405}, f"Connect ports {ports}")
    mounts = {mount["name"]: mount["mountPath"] for mount in container["volumeMounts"]}
    expect(mounts == {"spark-connect-conf": "/etc/sparkprof-connect",
                      "sparkprof": "/opt/sparkprof"}, f"Connect mounts {mounts}")
    volumes = {volume["name"]: volume for volume in pod["spec"]["volumes"]}
    expect(volumes.get("spark-connect-conf", {}).get("configMap", {}).get("name")
           == "t-sparkprof-spark-connect", "the Connect pod mounts its ConfigMap")
    init = pod["spec"].get("initContainers", [])
    expect(len(init) == 1 and init[0]["name"] == "sparkprof-files",
           "the Connect pod copies the sparkprof files")
    env = {item["name"]: item["value"] for item in container.get("env", [])}
    if case == "connect":
        expect(env.get("OTEL_RESOURCE_ATTRIBUTES") == "team=data", f"Connect env {env}")
    services = [service for service in by_kind.get("Service", [])
                if service["metadata"]["name"] == "t-sparkprof-connect"]
    expect(len(services) == 1 and services[0]["spec"]["selector"].items()
           <= pod["metadata"]["labels"].items(), "the Connect Service selects the Connect pod")


def main(case: str) -> int:
    objects = [doc for doc in yaml.safe_load_all(sys.stdin) if doc]
    by_kind: dict[str, list[dict]] = {}
    for obj in objects:
        by_kind.setdefault(obj["kind"], []).append(obj)
        labels = obj["metadata"].get("labels", {})
        expect(labels.get("app.kubernetes.io/name") == "sparkprof",
               f"{obj['kind']} {obj['metadata']['name']}: no app.kubernetes.io/name label")
        expect(obj["metadata"].get("namespace") == "spark-jobs",
               f"{obj['kind']} {obj['metadata']['name']}: namespace {obj['metadata'].get('namespace')}")

    expected_kinds = {"ConfigMap": 1 + DASHBOARDS, "PodMonitor": 1, "PrometheusRule": 1}
    if case == "otel":
        expected_kinds.update({"Service": 1, "ServiceMonitor": 1})
    if case.startswith("connect"):
        expected_kinds.update({"ConfigMap": 2 + DASHBOARDS, "Deployment": 1, "Service": 1})
    kinds = {kind: len(items) for kind, items in by_kind.items()}
    expect(kinds == expected_kinds, f"kinds {kinds}, expected {expected_kinds}")

    config_maps = {cm["metadata"]["name"]: cm for cm in by_kind.get("ConfigMap", [])}
    spark = config_maps.get("t-sparkprof-spark-defaults")
    expect(spark is not None, f"no t-sparkprof-spark-defaults ConfigMap in {sorted(config_maps)}")
    if spark:
        conf = parse_conf(spark["data"]["spark-defaults.conf"])
        expect(conf == {k: str(v) for k, v in yaml.safe_load(spark["data"]["spark-conf.yaml"]).items()},
               "spark-conf.yaml differs from spark-defaults.conf")
        want = {
            "spark.plugins": "io.sparkprof.SparkProfPlugin",
            "spark.driver.extraClassPath": "/opt/sparkprof/sparkprof-spark-0.1.0.jar",
            "spark.executor.extraClassPath": "/opt/sparkprof/sparkprof-spark-0.1.0.jar",
            "spark.sparkprof.prometheus.bindAddress": "0.0.0.0",
            "spark.sparkprof.prometheus.port": "9405",
            "spark.sparkprof.enabled": "true",
        }
        if case == "plugin-only":
            want["spark.sparkprof.agentOptions"] = "interval=20ms"
            expect("spark.driver.extraJavaOptions" not in conf, "plugin-only renders extraJavaOptions")
            expect("executor-pod-template.yaml" not in spark["data"], "plugin-only renders the init container")
        else:
            options = "-agentpath:/opt/sparkprof/libsparkprof.so"
            if case == "otel":
                options = "-XX:+UseG1GC " + options + "=interval=20ms,mode=wall"
                want["spark.kubernetes.driver.podTemplateFile"] = "/etc/sparkprof/driver-pod-template.yaml"
                want["spark.kubernetes.executor.podTemplateFile"] = "/etc/sparkprof/executor-pod-template.yaml"
            want["spark.driver.extraJavaOptions"] = options
            want["spark.executor.extraJavaOptions"] = options
            executor = yaml.safe_load(spark["data"]["executor-pod-template.yaml"])
            init = executor["spec"]["initContainers"][0]
            expect(init["command"][-1] == "cp -R /sparkprof/. /opt/sparkprof/", f"init command {init['command']}")
            # The default image is the one scripts/build-image.sh names (the chart's appVersion as
            # its tag), run as its non-root user on a read-only root filesystem.
            expect(init["image"] == f"ghcr.io/sparkprof/sparkprof-files:{CHART['appVersion']}",
                   f"init image {init['image']}")
            security = init.get("securityContext", {})
            expect(security.get("runAsNonRoot") is True and security.get("readOnlyRootFilesystem") is True
                   and security.get("capabilities") == {"drop": ["ALL"]}, f"init securityContext {security}")
        if case == "otel":
            want.update(OTEL_KEYS)
        elif case != "connect":
            expect(not any(k.startswith("spark.sparkprof.otel.") for k in conf), "otel keys rendered while disabled")
        for key, value in want.items():
            expect(conf.get(key) == value, f"spark-defaults.conf: {key} = {conf.get(key)!r}, expected {value!r}")
        driver = yaml.safe_load(spark["data"]["driver-pod-template.yaml"])
        ports = driver["spec"]["containers"][0]["ports"]
        expect(ports == [{"name": "sparkprof-metrics", "containerPort": 9405, "protocol": "TCP"}], f"driver ports {ports}")

    if case.startswith("connect") and spark:
        check_connect(case, config_maps, by_kind, parse_conf(spark["data"]["spark-defaults.conf"]))

    dashboards = [cm for name, cm in config_maps.items()
                  if name not in ("t-sparkprof-spark-defaults", "t-sparkprof-spark-connect")]
    titles = set()
    for cm in dashboards:
        expect(cm["metadata"]["labels"].get("grafana_dashboard") == "1", f"{cm['metadata']['name']}: no grafana_dashboard label")
        for text in cm["data"].values():
            board = json.loads(text)
            titles.add(board["title"])
            expect(all(panel["targets"] for panel in board["panels"]), f"{board['title']}: a panel without a query")
    expect(titles == {"Spark Job Phase Timeline", "Spark Profiling", "Spark Structured Streaming"},
           f"dashboards {titles}")

    for rule_object in by_kind.get("PrometheusRule", []):
        groups = rule_object["spec"]["groups"]
        alerts = [rule["alert"] for group in groups for rule in group["rules"]]
        expect(alerts == [rule["alert"] for rule in RULES["groups"][0]["rules"]], f"alerts {alerts}")
        for group in groups:
            for rule in group["rules"]:
                url = rule["annotations"]["runbook_url"]
                prefix = "https://docs.example.com/sparkprof/docs/recipes/" if case == "otel" else "docs/recipes/"
                expect(url.startswith(prefix), f"{rule['alert']}: runbook_url {url}")
                expect((ROOT / url.split("/sparkprof/", 1)[-1].split("#")[0]).is_file(), f"{rule['alert']}: {url} missing")

    for monitor in by_kind.get("PodMonitor", []):
        endpoint = monitor["spec"]["podMetricsEndpoints"][0]
        expect(endpoint["port"] == "sparkprof-metrics" and endpoint["path"] == "/metrics", f"PodMonitor endpoint {endpoint}")
        expect(monitor["spec"]["selector"]["matchLabels"] == {"spark-role": "driver"}, "PodMonitor selector")

    for problem in problems:
        print(f"check_rendered[{case}]: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
