"""The generated Grafana dashboards against a maintained dashboard model: grafana-foundation-sdk
(PyPI, pinned by scripts/install-helm.sh to its Grafana 11.6 build, in
build/tools/grafana-sdk-venv). No Grafana server can run here, so this is the schema check:

* the dashboard survives Dashboard.from_json -> to_json unchanged: every field and value is one
  the model knows (a misspelled or unknown key shows as a difference; value types are not
  checked beyond what the model parses);
* every panel's type is a panel plugin the SDK models, and its options and fieldConfig.custom
  survive that plugin's Options / FieldConfig model the same way;
* every target is a Prometheus query the SDK's prometheus.Dataquery model keeps whole.

Exit 77 (skipped) when the SDK's environment is missing (scripts/install-helm.sh).
"""

import importlib
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VENV_PYTHON = ROOT / "build" / "tools" / "grafana-sdk-venv" / "bin" / "python"
DASHBOARDS = ROOT / "helm" / "sparkprof" / "dashboards"


def differences(expected, actual, path=""):
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{path}: not an object in the model"]
        found = []
        for key, value in expected.items():
            if key not in actual:
                found.append(f"{path}/{key}: unknown to the model (dropped)")
            else:
                found += differences(value, actual[key], f"{path}/{key}")
        return found
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{path}: list changed by the model"]
        found = []
        for index, (a, b) in enumerate(zip(expected, actual)):
            found += differences(a, b, f"{path}[{index}]")
        return found
    return [] if expected == actual else [f"{path}: {expected!r} became {actual!r}"]


def as_json(model):
    return json.loads(json.dumps(model.to_json(), default=lambda o: o.to_json()))


def main():
    if Path(sys.prefix).resolve() != VENV_PYTHON.parents[1].resolve():
        if not VENV_PYTHON.exists():
            print(f"SKIPPED: no {VENV_PYTHON} (scripts/install-helm.sh)")
            return 77
        os.execv(str(VENV_PYTHON), [str(VENV_PYTHON), __file__] + sys.argv[1:])
    from grafana_foundation_sdk.models import dashboard, prometheus

    problems = []
    boards = sorted(DASHBOARDS.glob("*.json"))
    if len(boards) < 2:
        problems.append(f"expected the two generated dashboards in {DASHBOARDS}")
    panels = 0
    for path in boards:
        board = json.loads(path.read_text(encoding="utf-8"))
        name = path.name
        problems += [f"{name}{p}" for p in differences(
            board, as_json(dashboard.Dashboard.from_json(board)))]
        for panel in board["panels"]:
            panels += 1
            where = f"{name} panel '{panel['title']}'"
            module_name = panel["type"].replace("-", "")
            try:
                plugin = importlib.import_module(f"grafana_foundation_sdk.models.{module_name}")
            except ImportError:
                problems.append(f"{where}: type {panel['type']} is not a panel the SDK models")
                continue
            options = panel.get("options", {})
            problems += [f"{where} options{p}" for p in differences(
                options, as_json(plugin.Options.from_json(options)))]
            custom = panel.get("fieldConfig", {}).get("defaults", {}).get("custom")
            if custom is not None:
                if not hasattr(plugin, "FieldConfig"):
                    problems.append(f"{where}: fieldConfig.custom on a panel without one")
                else:
                    problems += [f"{where} fieldConfig.custom{p}" for p in differences(
                        custom, as_json(plugin.FieldConfig.from_json(custom)))]
            for target in panel.get("targets", []):
                problems += [f"{where} target {target.get('refId')}{p}" for p in differences(
                    target, as_json(prometheus.Dataquery.from_json(target)))]
    for problem in problems:
        print(f"FAIL {problem}")
    print(f"{len(boards)} dashboards, {panels} panels checked against grafana-foundation-sdk")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
