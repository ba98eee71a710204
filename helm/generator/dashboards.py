"""The two Grafana dashboards of issue 13, as data: panels with their PromQL.

generate.py renders them into helm/sparkprof/dashboards/*.json (Grafana dashboard model,
schemaVersion 39: Grafana 10.x and 11.x). Every query is checked against docs/metrics.md.
MISSING lists the panels issue 13 asks for whose metrics do not exist yet.
"""

from __future__ import annotations

SEL = 'application_id=~"$application_id"'
APP = "application_id, application_name"


def _p95(kind: str) -> str:
    return (f'histogram_quantile(0.95, sum by (le, {APP}) '
            f'(spark_task_duration_seconds_bucket{{{SEL},stage_kind="{kind}"}}))')


# (title, type, unit, width, height, [(expr, legend), ...], options)
PHASE_TIMELINE = {
    "uid": "sparkprof-phase-timeline",
    "title": "Spark Job Phase Timeline",
    "panels": [
        ("Phase breakdown (share of wall time)", "bargauge", "percentunit", 12, 8,
         [(f"spark_phase_breakdown_ratio{{{SEL}}}", "{{phase}}")], {}),
        ("Phases over time (seconds of wall time)", "timeseries", "s", 12, 8,
         [(f"spark_phase_breakdown_ratio{{{SEL}}} * on ({APP}) group_left spark_phase_wall_seconds{{{SEL}}}",
           "{{phase}}")], {"stack": True}),
        ("Resource wait", "stat", "s", 6, 4,
         [(f"spark_resource_wait_seconds{{{SEL}}}", "{{application_name}}")], {}),
        ("Time to first executor", "stat", "s", 6, 4,
         [(f'spark_phase_breakdown_ratio{{{SEL},phase="resource_wait"}} * on ({APP}) group_left spark_phase_wall_seconds{{{SEL}}}',
           "{{application_name}}")], {}),
        ("Compute efficiency (compute / wall)", "stat", "percentunit", 6, 4,
         [(f"spark_phase_compute_seconds{{{SEL}}} / spark_phase_wall_seconds{{{SEL}}}", "{{application_name}}")], {}),
        ("I/O write phase", "stat", "s", 6, 4,
         [(f"spark_phase_io_write_seconds{{{SEL}}}", "{{application_name}}")], {}),
        ("Task p95: compute vs write stages", "timeseries", "s", 12, 8,
         [(_p95("compute"), "compute p95"), (_p95("write"), "write p95")], {}),
        ("S3A task time (sampled, per second)", "timeseries", "s", 12, 8,
         [(f'sum by (category) (rate(spark_task_time_seconds_total{{{SEL},category=~"s3a_write|s3a_read"}}[$__rate_interval]))',
           "{{category}}")], {}),
        ("Executors, slots and tasks", "timeseries", "short", 24, 8,
         [(f"spark_executors{{{SEL}}}", "executors"), (f"spark_task_slots{{{SEL}}}", "slots"),
          (f"spark_running_tasks{{{SEL}}}", "running tasks"), (f"spark_pending_tasks{{{SEL}}}", "pending tasks")], {}),
        ("Applications", "table", "short", 24, 5,
         [(f"spark_application_info{{{SEL}}}", "")], {"instant": True}),
    ],
}

PROFILING = {
    "uid": "sparkprof-profiling",
    "title": "Spark Profiling",
    "panels": [
        ("GC share of task time", "timeseries", "percentunit", 12, 8,
         [(f'sum by ({APP}) (rate(spark_task_time_seconds_total{{{SEL},category="gc"}}[$__rate_interval])) / '
           f'sum by ({APP}) (rate(spark_task_time_seconds_total{{{SEL}}}[$__rate_interval]))', "{{application_name}}")], {}),
        ("Task time by category (sampled)", "timeseries", "s", 12, 8,
         [(f"sum by (category) (rate(spark_task_time_seconds_total{{{SEL}}}[$__rate_interval]))", "{{category}}")],
         {"stack": True}),
        ("Serialization time (per second)", "timeseries", "s", 8, 8,
         [(f'sum by ({APP}) (rate(spark_task_time_seconds_total{{{SEL},category="serialization"}}[$__rate_interval]))',
           "{{application_name}}")], {}),
        ("Skew: longest / median task", "timeseries", "short", 8, 8,
         [(f"spark_stage_skew_ratio{{{SEL}}}", "{{application_name}}")], {}),
        ("Spill (bytes per second)", "timeseries", "Bps", 8, 8,
         [(f"sum by (medium) (rate(spark_spill_bytes_total{{{SEL}}}[$__rate_interval]))", "{{medium}}")], {}),
        ("Slot utilisation (running tasks / slots)", "timeseries", "percentunit", 12, 8,
         [(f"spark_running_tasks{{{SEL}}} / spark_task_slots{{{SEL}}}", "{{application_name}}")], {}),
        ("GC pause p95", "timeseries", "s", 12, 8,
         [(f"histogram_quantile(0.95, sum by (le, {APP}) (rate(spark_gc_pause_seconds_bucket{{{SEL}}}[$__rate_interval])))",
           "{{application_name}}")], {}),
        ("Task duration heatmap (by stage kind)", "heatmap", "s", 24, 8,
         [(f"sum by (le) (increase(spark_task_duration_seconds_bucket{{{SEL}}}[$__rate_interval]))", "{{le}}")],
         {"heatmap": True}),
        ("Agent health: samples, drops, walk failures (per second)", "timeseries", "short", 24, 6,
         [(f"sum(rate(spark_agent_samples_total{{{SEL}}}[$__rate_interval]))", "samples"),
          (f"sum by (reason) (rate(spark_agent_samples_dropped_total{{{SEL}}}[$__rate_interval]))", "dropped {{reason}}"),
          (f"sum(rate(spark_agent_walk_failures_total{{{SEL}}}[$__rate_interval]))", "walk failures"),
          (f"sum by (outcome) (rate(sparkprof_driver_batches_total{{{SEL}}}[$__rate_interval]))", "batches {{outcome}}")], {}),
    ],
}

# Panels issue 13 asks for that need metrics docs/metrics.md does not define yet.
MISSING = [
    ("Spark Job Phase Timeline", "Phase Gantt / state timeline with each phase's start and end",
     "per-phase intervals (the breakdown is shares only)"),
    ("Spark Job Phase Timeline", "S3 throughput (bytes/s)", "S3A IOStatistics metrics (bytes written/read)"),
    ("Spark Job Phase Timeline", "Executor lifecycle (add/remove per executor, reasons)", "executor lifecycle metrics"),
    ("Spark Job Phase Timeline", "Airflow context: DAG, task, trace_id", "OTel / traceparent attributes on spark_application_info"),
    ("Spark Profiling", "Peak memory per executor", "per-executor peak memory metric"),
    ("Spark Profiling", "Task duration heatmap per executor", "per-executor task duration histogram (the shipped heatmap is over all executors)"),
]


def _target(expr: str, legend: str, ref: str, options: dict) -> dict:
    target = {"datasource": {"type": "prometheus", "uid": "${datasource}"}, "expr": expr,
              "legendFormat": legend, "refId": ref}
    if options.get("instant"):
        target.update({"instant": True, "range": False, "format": "table"})
    if options.get("heatmap"):
        target["format"] = "heatmap"
    return target


def dashboard(spec: dict) -> dict:
    panels, x, y, row_height = [], 0, 0, 0
    for number, (title, kind, unit, width, height, queries, options) in enumerate(spec["panels"], start=1):
        if x + width > 24:
            x, y, row_height = 0, y + row_height, 0
        defaults: dict = {"unit": unit}
        if options.get("stack"):
            defaults["custom"] = {"stacking": {"mode": "normal", "group": "A"}, "fillOpacity": 60}
        panels.append({
            "id": number, "type": kind, "title": title,
            "datasource": {"type": "prometheus", "uid": "${datasource}"},
            "gridPos": {"h": height, "w": width, "x": x, "y": y},
            "fieldConfig": {"defaults": defaults, "overrides": []},
            "options": {"calculate": False} if kind == "heatmap" else {},
            "targets": [_target(expr, legend, chr(ord("A") + i), options) for i, (expr, legend) in enumerate(queries)],
        })
        x += width
        row_height = max(row_height, height)
    return {
        "uid": spec["uid"], "title": spec["title"], "tags": ["spark", "sparkprof"],
        "schemaVersion": 39, "version": 1, "editable": True, "timezone": "browser",
        "time": {"from": "now-6h", "to": "now"}, "refresh": "30s",
        "annotations": {"list": []},
        "templating": {"list": [
            {"name": "datasource", "type": "datasource", "query": "prometheus", "label": "Data source"},
            {"name": "application_id", "type": "query", "label": "Application",
             "datasource": {"type": "prometheus", "uid": "${datasource}"},
             "query": {"query": "label_values(spark_application_info, application_id)", "refId": "app"},
             "definition": "label_values(spark_application_info, application_id)",
             "includeAll": True, "multi": True, "allValue": ".*", "refresh": 2,
             "current": {"selected": True, "text": "All", "value": "$__all"}},
        ]},
        "panels": panels,
    }


def all_dashboards() -> dict[str, dict]:
    return {"spark-job-phase-timeline.json": dashboard(PHASE_TIMELINE),
            "spark-profiling.json": dashboard(PROFILING)}


def all_queries(board: dict) -> list[str]:
    exprs = [panel_target["expr"] for panel in board["panels"] for panel_target in panel["targets"]]
    exprs += [v["definition"] for v in board["templating"]["list"] if "definition" in v]
    return exprs
