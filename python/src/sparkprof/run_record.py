"""What the run history keeps of one analysed application: its identity, the job it is a run of,
its settings and cluster shape, and its report's stage figures and findings, all read from the
engine's report and the log's Spark properties (nothing is computed here)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sparkprof.analysis import AnalysedApplication
from sparkprof.redaction import redact_properties
from sparkprof.report import ApplicationReport

# Spark properties that name the job a run belongs to, first found wins. Users set the first at
# submit time (--conf spark.sparkprof.jobKey=nightly-sales); Airflow's OpenLineage integration
# sets the second to "<dag_id>.<task_id>".
JOB_KEY_PROPERTIES = ("spark.sparkprof.jobKey", "spark.openlineage.parentJobName")

# Settings that describe the cluster a run asked for (copied as written).
CLUSTER_SETTINGS = (
    "spark.master",
    "spark.submit.deployMode",
    "spark.executor.instances",
    "spark.executor.cores",
    "spark.executor.memory",
    "spark.executor.memoryOverhead",
    "spark.driver.cores",
    "spark.driver.memory",
    "spark.dynamicAllocation.enabled",
    "spark.dynamicAllocation.minExecutors",
    "spark.dynamicAllocation.maxExecutors",
    "spark.sql.shuffle.partitions",
)


@dataclass(frozen=True)
class JobKeyRule:
    """How a run's job key is chosen: ``explicit`` for every run, else the first of
    ``properties`` (then JOB_KEY_PROPERTIES) the run's settings have, else the application name."""

    explicit: str | None = None
    properties: tuple[str, ...] = ()

    def key_for(self, report: ApplicationReport, settings: dict[str, str]) -> str:
        if self.explicit:
            return self.explicit
        for name in (*self.properties, *JOB_KEY_PROPERTIES):
            if settings.get(name):
                return settings[name]
        return report.application.name or settings.get("spark.app.name") or report.application.id


def cluster_shape(analysed: AnalysedApplication) -> dict[str, Any]:
    report = analysed.report
    executor_cores = {e.cores for e in report.executors.executors if e.id != "driver"}
    properties = redact_properties(analysed.spark_properties)
    return {
        "max_concurrent_executors": report.executors.max_concurrent,
        "peak_slots": report.phases.peak_slots,
        "executor_cores_seen": sorted(executor_cores),
        "settings": {name: properties[name] for name in CLUSTER_SETTINGS if name in properties},
        "resource_profiles": analysed.resource_profiles,
    }


def settings_json(analysed: AnalysedApplication) -> str:
    """The Spark properties as the history keeps them: credentials withheld (redaction.py)."""
    return json.dumps(
        redact_properties(analysed.spark_properties), sort_keys=True, ensure_ascii=False
    )
