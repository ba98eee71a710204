#!/usr/bin/env python3
"""Every manifest the chart renders, validated against the Kubernetes and the operators' JSON
schemas with kubeconform (strict: an unknown field is an error), as a cluster's API server would
check them on `kubectl apply`:

- the chart's objects in six cases (defaults; OpenTelemetry with a ServiceMonitor and pod
  templates; plugin-only; the Spark Connect server; a SparkApplication for the Spark Operator,
  with the init container and plugin-only without it);
- the pod templates `spark-submit --master k8s://` reads (spark.kubernetes.{driver,executor}.
  podTemplateFile), taken out of the ConfigMap and validated as the Pods they are;
- the SparkApplication's spec.sparkConf is the ConfigMap's spark-conf.yaml, and its driver's and
  executors' init container is the pod templates' one;
- mutated copies (an unknown field, a wrong type) of a Pod template, a PodMonitor and a
  SparkApplication must be refused, so the validation can fail.

Schemas (pinned, scripts/install-kubeconform.sh): Kubernetes 1.34's strict JSON schemas from
kubernetes-validate; the PodMonitor, ServiceMonitor and PrometheusRule CRDs of the Prometheus
Operator's Go module (their openAPIV3Schema made strict here: additionalProperties false wherever
properties are listed, unless the CRD keeps unknown fields); the SparkApplication schema derived
from the Spark Operator's API models (kubeflow-spark-api, pydantic) the same way.

Exit codes: 0 passed, 1 failed, 77 skipped (no helm, kubeconform or schema environment).
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TOOLS = REPO / "build" / "tools"
VENV_PYTHON = TOOLS / "k8s-schemas-venv" / "bin" / "python"
SKIPPED = 77
KUBERNETES_VERSION = "1.34.0"
SPARK_APPLICATION = {"sparkApplication.enabled": "true", "sparkApplication.sparkVersion": "3.5.9",
                     "sparkApplication.image": "registry.example.com/spark-with-app:3.5.9",
                     "sparkApplication.mainClass": "io.sparkprof.demo.SparkProfDemo",
                     "sparkApplication.mainApplicationFile": "local:///opt/app/demo.jar",
                     "sparkApplication.arguments[0]": "/tmp/out"}
CASES = {
    "defaults": {},
    "otel": {"monitoring.openTelemetry.enabled": "true", "serviceMonitor.enabled": "true",
             "sparkprof.podTemplateDir": "/etc/sparkprof"},
    "plugin-only": {"sparkprof.pluginOnly": "true", "installFromImage.enabled": "false"},
    "connect": {"sparkConnect.enabled": "true", "monitoring.openTelemetry.enabled": "true"},
    "spark-operator": SPARK_APPLICATION,
    "spark-operator-plugin-only": {**SPARK_APPLICATION, "sparkprof.pluginOnly": "true",
                                   "installFromImage.enabled": "false"},
}

try:
    import kubernetes_validate
    import yaml
    from kubeflow_spark_api.models.spark_v1beta2_spark_application import (
        SparkV1beta2SparkApplication,
    )
except ImportError:
    if Path(sys.executable) != VENV_PYTHON and VENV_PYTHON.exists():
        os.execv(str(VENV_PYTHON), [str(VENV_PYTHON), *sys.argv])
    print("SKIPPED: no schema environment (scripts/install-kubeconform.sh)")
    sys.exit(SKIPPED)

problems: list[str] = []


def expect(condition: bool, message: str) -> bool:
    print(("ok   " if condition else "FAIL ") + message, flush=True)
    if not condition:
        problems.append(message)
    return condition


# ---- schemas --------------------------------------------------------------------------------

def make_strict(node):
    """additionalProperties: false on every object that lists its properties (unless it keeps
    unknown fields), int-or-string as either type: what kubeconform's strict schemas do."""
    if isinstance(node, list):
        return [make_strict(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: make_strict(value) for key, value in node.items()}
    if node.pop("x-kubernetes-int-or-string", False):
        node.pop("type", None)
        node["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if "properties" in node and "additionalProperties" not in node \
            and not node.get("x-kubernetes-preserve-unknown-fields"):
        node["additionalProperties"] = False
    return node


def write_kubernetes_schemas(objects: list[dict], out: Path) -> list[str]:
    """Standalone copies of kubernetes-validate's strict schemas for the kinds in objects, named
    as kubeconform looks them up: their references into _definitions.json made local (no
    schema is fetched from anywhere)."""
    source = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema" / \
        f"v{KUBERNETES_VERSION}-local-strict"
    definitions = json.loads((source / "_definitions.json").read_text())["$defs"]
    written = []
    for api_version, kind in sorted({(o["apiVersion"], o["kind"]) for o in objects}):
        group, _, version = api_version.rpartition("/")
        name = "-".join(part for part in (kind.lower(), group.split(".")[0], version) if part)
        path = source / f"{name}.json"
        if not path.exists():
            continue  # not a Kubernetes kind (a CRD's): the CRD schemas have it
        text = path.read_text().replace('"/api/_definitions.json#/$defs/', '"#/$defs/')
        schema = json.loads(text)
        schema.pop("$id", None)  # its base would send the references back to the web
        schema["$defs"] = definitions
        (out / "kubernetes").mkdir(parents=True, exist_ok=True)
        (out / "kubernetes" / f"{name}.json").write_text(json.dumps(schema))
        written.append(f"{api_version} {kind}")
    return written


def write_crd_schemas(crd_dir: Path, out: Path) -> list[str]:
    written = []
    for crd_file in sorted(crd_dir.glob("*.yaml")):
        crd = yaml.safe_load(crd_file.read_text())
        group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            schema = make_strict(version["schema"]["openAPIV3Schema"])
            schema["properties"]["apiVersion"]["enum"] = [f"{group}/{version['name']}"]
            schema["properties"]["kind"]["enum"] = [kind]
            target = out / group / f"{kind.lower()}_{version['name']}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(schema))
            written.append(f"{group}/{version['name']} {kind}")
    return written


def write_spark_application_schema(out: Path) -> None:
    schema = SparkV1beta2SparkApplication.model_json_schema(by_alias=True)
    # The generated models wrap a oneOf (Quantity: string or number; IntOrString) in a class whose
    # own JSON schema lists its Python fields; the value is one of actual_instance's types.
    for name, definition in schema["$defs"].items():
        instance = definition.get("properties", {}).get("actual_instance")
        if instance is not None:
            types = [t for t in instance["anyOf"] if t != {"type": "null"}]
            schema["$defs"][name] = {"anyOf": types}
    schema = make_strict(schema)
    schema["properties"]["apiVersion"] = {"enum": ["sparkoperator.k8s.io/v1beta2"]}
    schema["properties"]["kind"] = {"enum": ["SparkApplication"]}
    schema["required"] = sorted(set(schema.get("required", [])) | {"apiVersion", "kind", "spec"})
    target = out / "sparkoperator.k8s.io" / "sparkapplication_v1beta2.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(schema))


# ---- manifests --------------------------------------------------------------------------------

def render(helm: str, values: dict[str, str]) -> list[dict]:
    command = [helm, "template", "t", str(REPO / "helm/sparkprof"), "--namespace", "spark-jobs"]
    for key, value in values.items():
        command += ["--set-string" if key.endswith(("Version", "image", "File", "]")) else "--set",
                    f"{key}={value}"]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return [doc for doc in yaml.safe_load_all(output) if doc]


def pod_templates(objects: list[dict]) -> dict[str, dict]:
    templates = {}
    for obj in objects:
        if obj["kind"] == "ConfigMap":
            for key, text in obj.get("data", {}).items():
                if key.endswith("-pod-template.yaml"):
                    templates[key.removesuffix(".yaml")] = yaml.safe_load(text)
    return templates


def check_spark_application(case: str, objects: list[dict], templates: dict[str, dict]) -> None:
    apps = [obj for obj in objects if obj["kind"] == "SparkApplication"]
    if not expect(len(apps) == 1, f"{case}: one SparkApplication rendered ({len(apps)})"):
        return
    spec = apps[0]["spec"]
    spark_defaults = next(obj for obj in objects if obj["kind"] == "ConfigMap"
                          and "spark-conf.yaml" in obj["data"])
    expect(spec["sparkConf"] == yaml.safe_load(spark_defaults["data"]["spark-conf.yaml"]),
           f"{case}: the SparkApplication's sparkConf is the ConfigMap's spark-conf.yaml")
    executor_template = templates.get("executor-pod-template")
    for role in ("driver", "executor"):
        init = spec[role].get("initContainers")
        if executor_template is None:
            expect(init is None and "volumes" not in spec,
                   f"{case}: no init container or volume without installFromImage ({role})")
        else:
            expect(init == executor_template["spec"]["initContainers"],
                   f"{case}: the {role}'s init container is the pod templates' one")


def run_kubeconform(kubeconform: str, schemas: Path, files: list[Path]) -> list[dict]:
    command = [kubeconform, "-strict", "-summary", "-verbose", "-output", "json",
               "-kubernetes-version", KUBERNETES_VERSION,
               "-schema-location",
               f"{schemas}/kubernetes/{{{{.ResourceKind}}}}{{{{.KindSuffix}}}}.json",
               "-schema-location",
               f"{schemas}/{{{{.Group}}}}/{{{{.ResourceKind}}}}_{{{{.ResourceAPIVersion}}}}.json"]
    result = subprocess.run(command + [str(f) for f in files], capture_output=True, text=True)
    try:
        return json.loads(result.stdout)["resources"] or []
    except (json.JSONDecodeError, KeyError) as e:
        raise RuntimeError(f"kubeconform said {result.stdout[:2000]} {result.stderr[:2000]}") from e


def mutants(objects_by_kind: dict[str, dict]) -> dict[str, tuple[dict, str]]:
    """Wrong copies the schemas must refuse: an unknown field, a wrong type; each with the path
    kubeconform's refusal must name."""
    out = {}
    pod = copy.deepcopy(objects_by_kind["Pod"])
    pod["spec"]["initContainers"][0]["comand"] = ["/bin/sh"]
    out["pod-template-unknown-field"] = (pod, "'comand' not allowed")
    pod = copy.deepcopy(objects_by_kind["Pod"])
    pod["spec"]["initContainers"][0]["securityContext"]["runAsNonRoot"] = "yes"
    out["pod-template-wrong-type"] = (pod, "/initContainers/0/securityContext/runAsNonRoot")
    monitor = copy.deepcopy(objects_by_kind["PodMonitor"])
    monitor["spec"]["podMetricsEndpoints"][0]["scrapeEvery"] = "15s"
    out["podmonitor-unknown-field"] = (monitor, "'scrapeEvery' not allowed")
    app = copy.deepcopy(objects_by_kind["SparkApplication"])
    app["spec"]["driver"]["cores"] = "one"
    out["sparkapplication-wrong-type"] = (app, "/spec/driver/cores")
    app = copy.deepcopy(objects_by_kind["SparkApplication"])
    app["spec"]["executor"]["initContainers"][0]["volumeMount"] = []
    out["sparkapplication-unknown-field"] = (app, "'volumeMount' not allowed")
    return out


def main() -> int:
    helm = os.environ.get("HELM") or (str(TOOLS / "helm") if (TOOLS / "helm").exists() else "")
    helm = helm or shutil.which("helm") or ""
    kubeconform = str(TOOLS / "kubeconform")
    crds = TOOLS / "k8s-crds"
    if not helm or not os.access(kubeconform, os.X_OK) or not crds.is_dir():
        print("SKIPPED: helm (scripts/install-helm.sh) or kubeconform and the CRDs "
              "(scripts/install-kubeconform.sh) are missing")
        return SKIPPED
    with tempfile.TemporaryDirectory(prefix="sparkprof-k8s-") as work_dir:
        work = Path(work_dir)
        schemas = work / "schemas"
        crd_kinds = write_crd_schemas(crds, schemas)
        write_spark_application_schema(schemas)
        print(f"schemas: Kubernetes {KUBERNETES_VERSION} (kubernetes-validate), CRDs "
              f"{crd_kinds}, sparkoperator.k8s.io/v1beta2 SparkApplication", flush=True)
        files: list[Path] = []
        first_of_kind: dict[str, dict] = {}
        for case, values in CASES.items():
            objects = render(helm, values)
            templates = pod_templates(objects)
            for template in templates.values():
                objects.append(template)
                first_of_kind.setdefault("Pod", template)
            if case.startswith("spark-operator"):
                check_spark_application(case, objects, templates)
            for number, obj in enumerate(objects):
                first_of_kind.setdefault(obj["kind"], obj)
                path = work / "manifests" / case / f"{number:02d}-{obj['kind']}.yaml"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(yaml.safe_dump(obj))
                files.append(path)
        kinds_written = write_kubernetes_schemas(
            [yaml.safe_load(path.read_text()) for path in files], schemas)
        print(f"Kubernetes kinds: {kinds_written}", flush=True)
        results = run_kubeconform(kubeconform, schemas, files)
        by_status: dict[str, list[str]] = {}
        for resource in results:
            by_status.setdefault(resource["status"], []).append(
                f"{resource['filename'].split('manifests/')[-1]}: {resource.get('msg', '')}")
        valid = by_status.pop("statusValid", [])
        kinds = sorted({path.name.split("-", 1)[1].removesuffix(".yaml") for path in files})
        expect(len(valid) == len(files) and not by_status,
               f"kubeconform -strict: {len(valid)} of {len(files)} manifests valid ({kinds}); "
               f"others: {json.dumps(by_status)[:3000]}")

        wrong, reasons = [], {}
        for name, (obj, reason) in mutants(first_of_kind).items():
            path = work / "mutants" / f"{name}.yaml"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(yaml.safe_dump(obj))
            wrong.append(path)
            reasons[str(path)] = reason
        refused = {r["filename"]: r.get("msg", "") for r in
                   run_kubeconform(kubeconform, schemas, wrong) if r["status"] == "statusInvalid"}
        for path, reason in reasons.items():
            expect(reason in refused.get(path, ""),
                   f"kubeconform refuses {Path(path).stem} naming {reason!r}: "
                   f"{refused.get(path, 'not refused')[-200:]}")
    print("validate_manifests: " + ("PASS" if not problems else f"{len(problems)} failed"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
