#!/usr/bin/env python3
"""The chart's pod templates as Spark itself reads them: for each pinned Spark release,
helm/tests/spark/LoadPodTemplates.java (compiled against the release's jars) loads the rendered
driver-pod-template.yaml and executor-pod-template.yaml with Spark's
KubernetesUtils.loadPodFromTemplate -- what spark-submit --master k8s:// does with
spark.kubernetes.{driver,executor}.podTemplateFile -- and the result must keep the init container
(image, command, security context), the sparkprof emptyDir volume, the Spark container chosen by
the podTemplateContainerName the chart sets, with the volume mounted at installDir, and the
driver's metrics port. No API server is involved (none can run here: docs/image.md).

    spark_pod_templates_test.py --spark-root build/spark [--versions 3.5.9 4.2.0]

Exit codes: 0 passed, 1 failed, 77 skipped (no helm, javac or Spark release).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
SKIPPED = 77
SOURCE = Path(__file__).resolve().parent / "spark" / "LoadPodTemplates.java"

problems: list[str] = []


def expect(condition: bool, message: str) -> None:
    print(("ok   " if condition else "FAIL ") + message, flush=True)
    if not condition:
        problems.append(message)


def rendered(helm: str, work: Path) -> tuple[dict, dict[str, Path]]:
    """The spark-defaults conf and the two pod templates written to files."""
    output = subprocess.run([helm, "template", "t", str(REPO / "helm/sparkprof"), "--namespace",
                             "spark-jobs", "--set", "sparkprof.podTemplateDir=/etc/sparkprof"],
                            check=True, capture_output=True, text=True).stdout
    config_map = next(doc for doc in yaml.safe_load_all(output) if doc and doc["kind"] ==
                      "ConfigMap" and "executor-pod-template.yaml" in doc.get("data", {}))
    files = {}
    for role in ("driver", "executor"):
        path = work / f"{role}-pod-template.yaml"
        path.write_text(config_map["data"][f"{role}-pod-template.yaml"])
        files[role] = path
    return yaml.safe_load(config_map["data"]["spark-conf.yaml"]), files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spark-root", type=Path, required=True)
    parser.add_argument("--versions", nargs="*", default=None)
    args = parser.parse_args()
    helm = next((h for h in (str(REPO / "build/tools/helm"), shutil.which("helm"))
                 if h and Path(h).exists()), None)
    versions = args.versions or subprocess.run(
        [str(REPO / "scripts/spark-versions.sh")], check=True, capture_output=True,
        text=True).stdout.split()
    homes = {v: args.spark_root / v / "home" for v in versions}
    if not helm or not shutil.which("javac") or not all((h / "jars").is_dir()
                                                        for h in homes.values()):
        print("SKIPPED: helm, javac or a Spark release (scripts/install-spark.sh) is missing")
        return SKIPPED
    with tempfile.TemporaryDirectory(prefix="sparkprof-pod-templates-") as work_dir:
        work = Path(work_dir)
        conf, files = rendered(helm, work)
        for version, home in homes.items():
            classes = work / f"classes-{version}"
            classpath = f"{home / 'jars'}/*"
            subprocess.run(["javac", "-nowarn", "-cp", classpath, "-d", str(classes),
                            str(SOURCE)], check=True)
            names = {role: conf[f"spark.kubernetes.{role}.podTemplateContainerName"]
                     for role in files}
            command = ["java", "-cp", f"{classpath}:{classes}", "LoadPodTemplates"]
            for role, path in files.items():
                command += [str(path), names[role]]
            run = subprocess.run(command, capture_output=True, text=True)
            line = next((ln for ln in run.stdout.splitlines() if ln.startswith("{")), "")
            if not line:
                expect(False, f"Spark {version} loaded the templates: {run.stderr[-1500:]}")
                continue
            loaded = json.loads(line)
            for role, path in files.items():
                template = yaml.safe_load(path.read_text())
                spark_pod = loaded[str(path)]
                spec = spark_pod["pod"]["spec"]
                expect(spec.get("initContainers") == template["spec"]["initContainers"],
                       f"Spark {version} {role}: the init container is kept as rendered "
                       f"({spec.get('initContainers', [{}])[0].get('image')})")
                expect(spec.get("volumes") == [{"emptyDir": {}, "name": "sparkprof"}],
                       f"Spark {version} {role}: the sparkprof emptyDir volume "
                       f"({spec.get('volumes')})")
                container = spark_pod["container"]
                mounts = container.get("volumeMounts", [])
                expect(container["name"] == names[role] and
                       {"mountPath": "/opt/sparkprof", "name": "sparkprof"} in mounts,
                       f"Spark {version} {role}: Spark runs in container {container['name']} "
                       f"with the volume at /opt/sparkprof ({mounts})")
                if role == "driver":
                    ports = container.get("ports", [])
                    expect({"containerPort": 9405, "name": "sparkprof-metrics",
                            "protocol": "TCP"} in ports,
                           f"Spark {version} driver: the named metrics port ({ports})")
    print("spark_pod_templates: " + ("PASS" if not problems else f"{len(problems)} failed"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
