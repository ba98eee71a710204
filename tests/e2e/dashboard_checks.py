"""The generated Grafana dashboards and alert rules against a real Prometheus that scraped a real
Spark run (tests/e2e/run_observability.py, tests/e2e/run_streaming.py): every panel query has
data over the run, every alert expression evaluates and the series it reads exist.
"""

import json
import math
import os
import re
import urllib.parse

import yaml

from e2e_checks import check
from spark_cluster import http_get

# The Structured Streaming dashboard and alerts need a streaming query: run_streaming.py has one.
STREAMING_BOARD = "spark-structured-streaming.json"
STREAMING_ALERTS = "SparkStreaming"


def query_range(prometheus, expression, start_s, end_s, step_s=1):
    """Range query: a list of (labels, [(t, value)]); raises on a PromQL error."""
    params = {"query": expression, "start": f"{start_s:.3f}", "end": f"{end_s:.3f}",
              "step": str(step_s)}
    _, body = http_get(prometheus.url + "/api/v1/query_range?" + urllib.parse.urlencode(params),
                       20)
    answer = json.loads(body)
    if answer.get("status") != "success":
        raise RuntimeError(f"{answer.get('errorType')}: {answer.get('error')}")
    return [(r["metric"], [(float(t), float(v)) for t, v in r["values"]])
            for r in answer["data"]["result"]]


def grafana_expression(expr, app_id, rate_interval, all_variables):
    """A panel's PromQL as Grafana would send it for this application (other variables: All)."""
    # Grafana escapes a multi-value variable's regex metacharacters ("\\\\" in PromQL strings).
    escaped = re.sub(r"([\\^$.|?*+()\[\]{}])", r"\\\\\1", app_id)
    expr = expr.replace("$application_id", escaped)
    for name in all_variables:
        expr = expr.replace("$" + name, ".*")
    return expr.replace("$__rate_interval", rate_interval)


def finite_points(result):
    return sum(1 for _, values in result for _, v in values if math.isfinite(v))


def check_dashboards(prometheus, dashboards_dir, app_id, start_s, end_s, wanted=lambda name: True):
    """Every panel query of the dashboards whose file name `wanted` accepts has data."""
    boards = sorted(f for f in os.listdir(dashboards_dir) if f.endswith(".json") and wanted(f))
    check(len(boards) >= 1, f"the generated dashboards are there: {boards}")
    panels = 0
    for name in boards:
        with open(os.path.join(dashboards_dir, name)) as f:
            board = json.load(f)
        all_variables = [v["name"] for v in board["templating"]["list"]
                         if v.get("includeAll") and v["name"] != "application_id"]
        for variable in board["templating"]["list"]:
            query = variable.get("query")
            definition = query.get("query", "") if isinstance(query, dict) else ""
            match = re.fullmatch(r"label_values\((\w+), (\w+)\)", definition)
            if not definition:
                continue
            values = {labels.get(match.group(2)) for labels, _ in query_range(
                prometheus, match.group(1), start_s, end_s)} if match else set()
            offered = app_id in values if variable["name"] == "application_id" else any(values)
            check(offered, f"{name} variable {variable['name']}: {definition} offers values "
                           f"({sorted(v for v in values if v)})")
        for panel in board["panels"]:
            for target in panel.get("targets", []):
                panels += 1
                expr = grafana_expression(target["expr"], app_id, "15s", all_variables)
                try:
                    result = query_range(prometheus, expr, start_s, end_s)
                except (RuntimeError, OSError, ValueError) as e:
                    check(False, f"{name} '{panel['title']}' [{target['refId']}]: {e}: {expr}")
                    continue
                points = finite_points(result)
                check(points > 0, f"{name} '{panel['title']}' [{target['refId']}] has data: "
                                  f"{len(result)} series, {points} finite points")
    print(f"{panels} panel queries run", flush=True)


METRIC_NAME = re.compile(r"\b((?:spark|sparkprof)_[a-z0-9_]+)\b")


def check_alerts(prometheus, rules_path, app_id, start_s, end_s, wanted=lambda alert: True):
    """Every alert `wanted` accepts evaluates over the run, and the series it reads exist."""
    with open(rules_path) as f:
        groups = yaml.safe_load(f)["groups"]
    rules = [rule for group in groups for rule in group["rules"]
             if "alert" in rule and wanted(rule["alert"])]
    check(len(rules) >= 3, f"{len(rules)} alert rules in {os.path.basename(rules_path)}")
    for rule in rules:
        expr = rule["expr"]
        try:
            fired = query_range(prometheus, expr, start_s, end_s)
            check(True, f"alert {rule['alert']}: its expression evaluates over the run "
                        f"({len(fired)} series would fire)")
        except (RuntimeError, OSError, ValueError) as e:
            check(False, f"alert {rule['alert']}: {e}")
            continue
        for metric in sorted(set(METRIC_NAME.findall(expr))):
            result = query_range(prometheus, f'{metric}{{application_id="{app_id}"}}', start_s,
                                 end_s)
            check(finite_points(result) > 0,
                  f"alert {rule['alert']}: the series it reads exist: {metric} "
                  f"({len(result)} series)")
