"""The Grafana dashboards, as data: panels with their PromQL (issue 13's two, and issue 32's
"Spark Structured Streaming").

generate.py renders them into helm/sparkprof/dashboards/*.json (Grafana dashboard model,
schemaVersion 39: Grafana 10.x and 11.x). Every query is checked against docs/metrics.md.
"""

from __future__ import annotations

SEL = 'application_id=~"$application_id"'
# The off-CPU categories (common/category.h, IsOffCpu).
OFF_CPU = "python_wait|shuffle_fetch_wait|io_wait|lock_wait|sleep|cpu_starved|off_cpu_other"
# The Python workers' own time (sampled in the worker): it overlaps the task threads' python_wait,
# so it is never summed with task time.
PY = "python|python_off_cpu"
APP = "application_id, application_name"


def _p95(kind: str) -> str:
    return (f'histogram_quantile(0.95, sum by (le, {APP}) '
            f'(spark_task_duration_seconds_bucket{{{SEL},stage_kind="{kind}"}}))')


# (title, type, unit, width, height, [(expr, legend), ...], options)
PHASE_TIMELINE = {
    "uid": "sparkprof-phase-timeline",
    "title": "Spark Job Phase Timeline",
    "panels": [
        ("Phase timeline (the phase each refresh was mostly in)", "state-timeline", "short", 24, 5,
         [(f"max by (phase) (spark_phase_active{{{SEL}}})", "{{phase}}")], {"state": True}),
        ("Phase start and end", "table", "dateTimeAsIso", 12, 6,
         [(f"spark_phase_start_timestamp_seconds{{{SEL}}} * 1000", "start"),
          (f"spark_phase_end_timestamp_seconds{{{SEL}}} * 1000", "end")], {"instant": True}),
        ("Airflow context (DAG, task, run, trace id)", "table", "short", 12, 6,
         [(f"spark_airflow_info{{{SEL}}}", "")], {"instant": True}),
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
        ("S3 throughput (bytes per second)", "timeseries", "Bps", 12, 8,
         [(f"sum by (direction) (rate(spark_s3a_bytes_total{{{SEL}}}[$__rate_interval]))", "{{direction}}")], {}),
        ("S3 bytes written and read", "stat", "bytes", 6, 4,
         [(f"sum by (direction) (spark_s3a_bytes_total{{{SEL}}})", "{{direction}}")], {}),
        ("S3 multipart uploads and blocks", "stat", "short", 6, 4,
         [(f'sum(spark_s3a_requests_total{{{SEL},request="multipart_initiate"}})', "multipart uploads"),
          (f"sum(spark_s3a_block_uploads_total{{{SEL}}})", "blocks")], {}),
        ("S3 requests, retries and throttling (per interval)", "timeseries", "short", 12, 8,
         [(f"sum by (request) (increase(spark_s3a_requests_total{{{SEL}}}[$__rate_interval]))", "{{request}}"),
          (f"sum(increase(spark_s3a_retries_total{{{SEL}}}[$__rate_interval]))", "retries"),
          (f"sum(increase(spark_s3a_throttled_total{{{SEL}}}[$__rate_interval]))", "throttled")], {}),
        ("S3 mean request latency", "timeseries", "s", 12, 8,
         [(f"sum by (request) (rate(spark_s3a_request_duration_seconds_total{{{SEL}}}[$__rate_interval])) / "
           f"sum by (request) (rate(spark_s3a_requests_total{{{SEL}}}[$__rate_interval]))", "{{request}}")], {}),
        ("S3A task time (sampled, per second)", "timeseries", "s", 12, 8,
         [(f'sum by (category) (rate(spark_task_time_seconds_total{{{SEL},category=~"s3a_write|s3a_read"}}[$__rate_interval]))',
           "{{category}}")], {}),
        ("Executors, slots and tasks", "timeseries", "short", 24, 8,
         [(f"spark_executors{{{SEL}}}", "executors"), (f"spark_task_slots{{{SEL}}}", "slots"),
          (f"spark_running_tasks{{{SEL}}}", "running tasks"), (f"spark_pending_tasks{{{SEL}}}", "pending tasks")], {}),
        ("Executor lifecycle (added, removed by reason)", "timeseries", "short", 12, 8,
         [(f"sum(spark_executors_added_total{{{SEL}}})", "added"),
          (f"sum by (reason) (spark_executors_removed_total{{{SEL}}})", "removed: {{reason}}")], {}),
        ("Executors alive", "stat", "short", 12, 8,
         [(f"spark_executors{{{SEL}}}", "{{application_name}}")], {}),
        ("Applications", "table", "short", 24, 5,
         [(f"spark_application_info{{{SEL}}}", "")], {"instant": True}),
    ],
}

PROFILING = {
    "uid": "sparkprof-profiling",
    "title": "Spark Profiling",
    "variables": [("executor_id", "Executor",
                   "label_values(spark_executor_task_duration_seconds_count, executor_id)")],
    "panels": [
        ("GC share of task time", "timeseries", "percentunit", 12, 8,
         [(f'sum by ({APP}) (rate(spark_task_time_seconds_total{{{SEL},category="gc"}}[$__rate_interval])) / '
           f'sum by ({APP}) (rate(spark_task_time_seconds_total{{{SEL},category!~"{PY}"}}[$__rate_interval]))', "{{application_name}}")], {}),
        ("Task time by category (sampled)", "timeseries", "s", 12, 8,
         [(f'sum by (category) (rate(spark_task_time_seconds_total{{{SEL},category!~"{PY}"}}[$__rate_interval]))', "{{category}}")],
         {"stack": True}),
        # Agent mode cpu+wall: the part of task threads' time off CPU, by what they waited in.
        ("Task time on and off CPU (sampled)", "timeseries", "s", 12, 8,
         [(f'sum by ({APP}) (rate(spark_task_time_seconds_total{{{SEL},category!~"{OFF_CPU}|{PY}"}}[$__rate_interval]))',
           "on CPU: {{application_name}}"),
          (f'sum by ({APP}) (rate(spark_task_time_seconds_total{{{SEL},category=~"{OFF_CPU}"}}[$__rate_interval]))',
           "off CPU: {{application_name}}")], {"stack": True}),
        ("Off-CPU task time by what it waited in", "timeseries", "s", 12, 8,
         [(f'sum by (category) (rate(spark_task_time_seconds_total{{{SEL},category=~"{OFF_CPU}"}}[$__rate_interval]))',
           "{{category}}")], {"stack": True}),
        # Who held the CPUs while task threads waited for one (the agents' CPU use per batch).
        ("CPU: the JVMs' own, task threads waiting for one, containers throttled", "timeseries", "s", 12, 8,
         [(f'sum by ({APP}) (rate(spark_jvm_process_cpu_seconds_total{{{SEL}}}[$__rate_interval]))',
           "JVMs' CPU: {{application_name}}"),
          (f'sum by ({APP}) (rate(spark_task_time_seconds_total{{{SEL},category="cpu_starved"}}[$__rate_interval]))',
           "waiting for a CPU: {{application_name}}"),
          (f'sum by ({APP}) (rate(spark_cgroup_cpu_throttled_seconds_total{{{SEL}}}[$__rate_interval]))',
           "throttled by the quota: {{application_name}}")], {}),
        # A busy group under a quota counts 10 periods a second (the 100 ms default period; 1 with
        # the longest, 1 s): the divisor clamped at 1 leaves a busy group's share as it is, and a
        # JVM without a quota (no periods) reads 0% instead of 0/0.
        ("Containers' CPU periods throttled", "timeseries", "percentunit", 12, 8,
         [(f'sum by ({APP}) (rate(spark_cgroup_cpu_periods_total{{{SEL},state="throttled"}}[$__rate_interval])) / '
           f'clamp_min(sum by ({APP}) (rate(spark_cgroup_cpu_periods_total{{{SEL},state="all"}}[$__rate_interval])), 1)',
           "{{application_name}}")], {}),
        # Each JVM's memory as its agent reads it (issue 29): the heap's peak per batch window
        # against its maximum, what stayed live after the last collection, and the process's
        # resident set (heap, metaspace, buffers, threads and native memory together).
        ("JVM memory per executor: heap peak, live after GC, resident set", "timeseries", "bytes", 12, 8,
         [(f'max by (executor_id) (spark_jvm_memory_bytes{{{SEL},kind="heap_used_peak"}})',
           "heap peak: {{executor_id}}"),
          (f'max by (executor_id) (spark_jvm_memory_bytes{{{SEL},kind="heap_after_gc"}})',
           "live after GC: {{executor_id}}"),
          (f'max by (executor_id) (spark_jvm_memory_bytes{{{SEL},kind="rss"}})',
           "resident set: {{executor_id}}")], {}),
        ("Heap used of its maximum, per executor", "timeseries", "percentunit", 12, 8,
         [(f'max by (executor_id) (spark_jvm_memory_bytes{{{SEL},kind="heap_used_peak"}}) / '
           f'max by (executor_id) (spark_jvm_memory_bytes{{{SEL},kind="heap_max"}})',
           "{{executor_id}}")], {}),
        # The PySpark workers, sampled in the worker: on CPU (python) and waiting in their own code.
        ("Python workers: on CPU and waiting in their code (sampled)", "timeseries", "s", 12, 8,
         [(f'sum by (category) (rate(spark_task_time_seconds_total{{{SEL},category=~"{PY}"}}[$__rate_interval]))',
           "{{category}}")], {"stack": True}),
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
        ("Peak JVM heap per executor", "bargauge", "bytes", 12, 8,
         [(f'max by (executor_id) (spark_executor_peak_memory_bytes{{{SEL},area="jvm_heap"}})', "{{executor_id}}")], {}),
        ("Peak execution memory of one task, per executor", "bargauge", "bytes", 12, 8,
         [(f'max by (executor_id) (spark_executor_peak_memory_bytes{{{SEL},area="task_execution"}})', "{{executor_id}}")], {}),
        ("Task duration heatmap (executor $executor_id)", "heatmap", "s", 12, 8,
         [(f'sum by (le) (increase(spark_executor_task_duration_seconds_bucket{{{SEL},executor_id=~"$executor_id"}}[$__rate_interval]))',
           "{{le}}")], {"heatmap": True}),
        ("Task p95 per executor", "timeseries", "s", 12, 8,
         [(f"histogram_quantile(0.95, sum by (le, executor_id) (rate(spark_executor_task_duration_seconds_bucket{{{SEL}}}[$__rate_interval])))",
           "{{executor_id}}")], {}),
        ("Agent health: samples, drops, walk failures (per second)", "timeseries", "short", 24, 6,
         [(f"sum(rate(spark_agent_samples_total{{{SEL}}}[$__rate_interval]))", "samples"),
          (f"sum by (reason) (rate(spark_agent_samples_dropped_total{{{SEL}}}[$__rate_interval]))", "dropped {{reason}}"),
          (f"sum(rate(spark_agent_walk_failures_total{{{SEL}}}[$__rate_interval]))", "walk failures"),
          (f"sum by (outcome) (rate(sparkprof_driver_batches_total{{{SEL}}}[$__rate_interval]))", "batches {{outcome}}")], {}),
    ],
}

# Per streaming query (docs/metrics.md, "Structured Streaming queries"): the latest batch's
# figures and the engine's falling-behind judgement, for the queries the $query variable picks.
Q = f'{SEL},query=~"$query"'
STREAMING = {
    "uid": "sparkprof-structured-streaming",
    "title": "Spark Structured Streaming",
    "variables": [("query", "Query",
                   "label_values(spark_streaming_batches_total, query)")],
    "panels": [
        ("Falling behind (the engine's falling-behind rule on the recent batches)", "state-timeline", "short", 24, 5,
         [(f"max by (query) (spark_streaming_falling_behind{{{Q}}})", "{{query}}")],
         {"state": {"0": "keeps up", "1": "falling behind"}}),
        ("Input and processed rows per second (latest batch)", "timeseries", "short", 12, 8,
         [(f"spark_streaming_input_rows_per_second{{{Q}}}", "input: {{query}}"),
          (f"spark_streaming_processed_rows_per_second{{{Q}}}", "processed: {{query}}")], {}),
        ("Busy ratio of the recent batches (input rate / processing rate; over 1 falls behind)",
         "timeseries", "short", 12, 8,
         [(f"spark_streaming_busy_ratio{{{Q}}}", "{{query}}")], {}),
        ("Batch duration and trigger interval", "timeseries", "s", 12, 8,
         [(f"spark_streaming_batch_duration_seconds{{{Q}}}", "batch: {{query}}"),
          (f"spark_streaming_trigger_interval_seconds{{{Q}}}", "trigger: {{query}}")], {}),
        ("Batch steps (latest batch)", "timeseries", "s", 12, 8,
         [(f"spark_streaming_batch_step_seconds{{{Q}}}", "{{query}}: {{step}}")], {"stack": True}),
        ("Batches per minute", "timeseries", "short", 8, 8,
         [(f"sum by (query) (rate(spark_streaming_batches_total{{{Q}}}[$__rate_interval])) * 60", "{{query}}")], {}),
        ("Input rows per second (over the interval)", "timeseries", "short", 8, 8,
         [(f"sum by (query) (rate(spark_streaming_input_rows_total{{{Q}}}[$__rate_interval]))", "{{query}}")], {}),
        ("Event-time watermark lag", "timeseries", "s", 8, 8,
         [(f"spark_streaming_watermark_lag_seconds{{{Q}}}", "{{query}}")], {}),
        ("State rows", "timeseries", "short", 12, 8,
         [(f"spark_streaming_state_rows{{{Q}}}", "{{query}}")], {}),
        ("State memory", "timeseries", "bytes", 12, 8,
         [(f"spark_streaming_state_memory_bytes{{{Q}}}", "{{query}}")], {}),
        ("Queries: batches and rows so far", "table", "short", 24, 6,
         [(f"spark_streaming_batches_total{{{Q}}}", ""),
          (f"spark_streaming_input_rows_total{{{Q}}}", "")], {"instant": True}),
    ],
}


def _target(expr: str, legend: str, ref: str, options: dict) -> dict:
    target = {"datasource": {"type": "prometheus", "uid": "${datasource}"}, "expr": expr,
              "legendFormat": legend, "refId": ref}
    if options.get("instant"):
        target.update({"instant": True, "range": False, "format": "table"})
    if options.get("heatmap"):
        target["format"] = "heatmap"
    return target


def _variable(name: str, label: str, definition: str) -> dict:
    return {"name": name, "type": "query", "label": label,
            "datasource": {"type": "prometheus", "uid": "${datasource}"},
            "query": {"query": definition, "refId": name},
            "includeAll": True, "multi": True, "allValue": ".*", "refresh": 2,
            "current": {"selected": True, "text": "All", "value": "$__all"}}


def dashboard(spec: dict) -> dict:
    panels, x, y, row_height = [], 0, 0, 0
    for number, (title, kind, unit, width, height, queries, options) in enumerate(spec["panels"], start=1):
        if x + width > 24:
            x, y, row_height = 0, y + row_height, 0
        defaults: dict = {"unit": unit}
        if options.get("state"):
            texts = options["state"] if isinstance(options["state"], dict) else {"0": "-", "1": "active"}
            defaults["mappings"] = [{"type": "value", "options": {v: {"text": t} for v, t in texts.items()}}]
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
            _variable("application_id", "Application",
                      "label_values(spark_application_info, application_id)"),
        ] + [_variable(*extra) for extra in spec.get("variables", [])]},
        "panels": panels,
    }


def all_dashboards() -> dict[str, dict]:
    return {"spark-job-phase-timeline.json": dashboard(PHASE_TIMELINE),
            "spark-profiling.json": dashboard(PROFILING),
            "spark-structured-streaming.json": dashboard(STREAMING)}


def all_queries(board: dict) -> list[str]:
    exprs = [panel_target["expr"] for panel in board["panels"] for panel_target in panel["targets"]]
    exprs += [v["query"]["query"] for v in board["templating"]["list"] if "query" in v
              and isinstance(v["query"], dict)]
    return exprs
