"""The sparkprof alert rules: one entry per alert, with its threshold's reason and its recipe.

Rendered by generate.py into helm/sparkprof/files/sparkprof-alerts.rules.yaml (a plain Prometheus
rules file, checked by `promtool check rules` and unit-tested by helm/tests/alerts_test.yaml) and
from there into the chart's PrometheusRule. runbook_url is a repository path; the chart prefixes
prometheusRule.runbookBaseUrl.
"""

from __future__ import annotations

APP = "application_id, application_name"
GUIDE = "docs/recipes/observability/spark-profiling-guide.md#step-4-live-metrics"


def _p95(stage_kind: str) -> str:
    return (f'histogram_quantile(0.95, sum by (le, {APP}) '
            f'(spark_task_duration_seconds_bucket{{stage_kind="{stage_kind}"}}))')


RULES = [
    {
        "alert": "SparkResourceWaitLong",
        # 300 s: issue 13 / the work package ("resource wait > 300 s"); Phase 1 of a slow job.
        "expr": "spark_resource_wait_seconds > 300",
        "for": "1m",
        "severity": "warning",
        "summary": "Spark application {{ $labels.application_name }} waited {{ $value | humanizeDuration }} for executors",
        "description": "Time without a task slot (no executor yet, or every slot busy with tasks pending) passed 300 s.",
        "runbook": "docs/recipes/troubleshoot/resource-wait-long.md",
    },
    {
        "alert": "SparkWriteStageSlow",
        # "S3 write bottleneck visible when write-stage task p95 >> compute-stage task p95":
        # >> taken as 3x, and only once write tasks take 30 s at p95 so short jobs stay quiet.
        "expr": f"({_p95('write')} > 3 * {_p95('compute')})\nand\n{_p95('write')} > 30",
        "for": "5m",
        "severity": "warning",
        "summary": "Write-stage task p95 of {{ $labels.application_name }} is over 3x the compute-stage p95",
        "description": "p95 duration of write-stage tasks is {{ $value | humanizeDuration }}; output commit or the object store is the bottleneck.",
        "runbook": "docs/recipes/troubleshoot/s3-write-slow.md",
    },
    {
        "alert": "SparkStageSkew",
        # 5: the skew example of docs/metrics.md; one task 5x the median holds its stage up.
        "expr": "spark_stage_skew_ratio > 5",
        "for": "2m",
        "severity": "warning",
        "summary": "Stage skew in {{ $labels.application_name }}: longest task {{ $value | printf \"%.1f\" }}x the median",
        "description": "A current stage's longest task ran over 5x as long as its median task.",
        "runbook": "docs/recipes/troubleshoot/data-skew-diagnosis.md",
    },
    {
        "alert": "SparkDiskSpill",
        # 1 GiB in 10 minutes: steady spilling, not one sort that overflowed once.
        "expr": f'sum by ({APP}) (increase(spark_spill_bytes_total{{medium="disk"}}[10m])) > 1073741824',
        "for": "5m",
        "severity": "info",
        "summary": "{{ $labels.application_name }} spilled {{ $value | humanize1024 }}B to disk in 10 minutes",
        "description": "Tasks spill to disk steadily: execution memory is too small for their partitions.",
        "runbook": "docs/recipes/troubleshoot/oom-and-spill.md",
    },
    {
        "alert": "SparkGcShareHigh",
        # 20% of sampled task time in stop-the-world GC: past that, GC is a first-order cost.
        "expr": (f'sum by ({APP}) (rate(spark_task_time_seconds_total{{category="gc"}}[5m]))\n'
                 f'  / sum by ({APP}) (rate(spark_task_time_seconds_total[5m])) > 0.2'),
        "for": "5m",
        "severity": "warning",
        "summary": "GC takes {{ $value | humanizePercentage }} of task time in {{ $labels.application_name }}",
        "description": "Stop-the-world GC pauses overlap over 20% of the sampled task time (last 5 minutes).",
        "runbook": "docs/recipes/troubleshoot/gc-pressure.md",
    },
    {
        "alert": "SparkprofAgentDroppingSamples",
        # 1% of samples lost: profiles stay usable, but the ring is too small for the thread count.
        "expr": (f"sum by ({APP}) (rate(spark_agent_samples_dropped_total[5m]))\n"
                 f"  / sum by ({APP}) (rate(spark_agent_samples_total[5m])) > 0.01"),
        "for": "10m",
        "severity": "info",
        "summary": "sparkprof agents drop {{ $value | humanizePercentage }} of samples in {{ $labels.application_name }}",
        "description": "Raise the agent's ring option (docs/quickstart-spark.md, Settings) or lengthen interval.",
        "runbook": GUIDE,
    },
    {
        "alert": "SparkprofDriverIngestSaturated",
        # Any batch refused for rate or size loses profile data: rate_limited (maxBatchesPerSecond)
        # or too_large (maxBatchBytes).
        "expr": (f'sum by ({APP}) (rate(sparkprof_driver_batches_total{{outcome=~"rate_limited|too_large"}}[5m])) > 0'),
        "for": "5m",
        "severity": "warning",
        "summary": "The sparkprof driver of {{ $labels.application_name }} refuses executor batches",
        "description": "Batches are dropped as rate_limited or too_large: raise spark.sparkprof.maxBatchesPerSecond / maxBatchBytes or spark.sparkprof.flushInterval.",
        "runbook": GUIDE,
    },
]

STREAMING_RECIPE = "docs/recipes/troubleshoot/structured-streaming.md"
STREAMING_RULES = [
    {
        "alert": "SparkStreamingFallingBehind",
        # The engine's falling-behind rule, judged live on the query's recent batches (processing
        # slower than input, lag growing). A query falling behind completes ever fewer batches,
        # so the flag changes slowly; 5 minutes of it is no passing burst.
        "expr": "max by (application_id, application_name, query) (spark_streaming_falling_behind) == 1",
        "for": "5m",
        "severity": "warning",
        "summary": "Streaming query {{ $labels.query }} of {{ $labels.application_name }} falls behind its input",
        "description": "Its recent batches took longer than their rows took to arrive: the backlog and the output's delay grow until capacity is added or the input slows.",
        "runbook": STREAMING_RECIPE + "#falling-behind",
    },
    {
        "alert": "SparkStreamingBatchOverTrigger",
        # The batches' mean over 10 minutes above the trigger interval: the query cannot run on
        # its schedule (one slow batch is not enough).
        "expr": ("avg_over_time(spark_streaming_batch_duration_seconds[10m])\n"
                 "  > spark_streaming_trigger_interval_seconds"),
        "for": "5m",
        "severity": "warning",
        "summary": "Batches of {{ $labels.query }} ({{ $labels.application_name }}) take longer than its trigger",
        "description": "Its batches took {{ $value | humanizeDuration }} on average over 10 minutes, longer than its processing-time trigger's interval: each batch starts late.",
        "runbook": STREAMING_RECIPE + "#batch-over-trigger",
    },
    {
        "alert": "SparkStreamingStateGrowth",
        # Growth that never turns back: the state's lowest point of the last 25 minutes is above
        # its highest of the half hour that ended 30 minutes ago, and that held for 30 minutes
        # more. A state with a working watermark levels off (old keys leave as new ones come) and
        # fails the test within the hour; states under 100,000 rows are too small to matter.
        "expr": ("spark_streaming_state_rows > 100000\n"
                 "and min_over_time(spark_streaming_state_rows[25m])\n"
                 "  > max_over_time(spark_streaming_state_rows[30m] offset 30m)"),
        "for": "30m",
        "severity": "warning",
        "summary": "State of {{ $labels.query }} ({{ $labels.application_name }}) keeps growing: {{ $value | humanize }} rows",
        "description": "Its state stores have grown without a pause for over an hour: a stateful operator without a watermark (or with one too late) keeps every key.",
        "runbook": STREAMING_RECIPE + "#state-growth",
    },
]
RULES += STREAMING_RULES


def rules_file() -> dict:
    rules = []
    for rule in RULES:
        rules.append({
            "alert": rule["alert"],
            "expr": rule["expr"],
            "for": rule["for"],
            "labels": {"severity": rule["severity"]},
            "annotations": {
                "summary": rule["summary"],
                "description": rule["description"],
                "runbook_url": rule["runbook"],
            },
        })
    return {"groups": [{"name": "sparkprof", "rules": rules}]}
