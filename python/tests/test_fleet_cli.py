"""The fleet commands end to end: collect a job's runs, its history, a regression with its cause,
compare two runs, feedback -- on SQLite and into a real PostgreSQL server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from synthetic_runs import make_run

ENTRY = [sys.executable, "-m", "sparkprof.cli"]


def sparkprof(*args: str, store: str, expect: int = 0) -> str:
    done = subprocess.run(
        [*ENTRY, *args, "--store", store], capture_output=True, text=True, check=False
    )
    assert done.returncode == expect, done.stdout + done.stderr
    return done.stdout


def sparkprof_json(*args: str, store: str, expect: int = 0) -> Any:
    return json.loads(sparkprof(*args, "--json", store=store, expect=expect))


@pytest.fixture()
def job_runs(tmp_path: Path, demo_logs: dict[str, Path]) -> Path:
    """Six nightly runs of one job: five alike (a few percent apart), then one whose first stage
    has a task six times slower."""
    runs = tmp_path / "runs"
    runs.mkdir()
    for day, factor in enumerate([1.0, 1.03, 0.97, 1.01, 0.99], start=1):
        make_run(demo_logs["plain"], runs, day, stage_factor={0: factor})
    make_run(demo_logs["plain"], runs, 6, slow_task=(0, 6.0))
    return runs


def test_history_regressions_compare_feedback(job_runs: Path, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/history.sqlite"
    assert "6 stored" in sparkprof("collect", "--event-log-dir", str(job_runs), store=store)
    assert "6 unchanged" in sparkprof("collect", "--event-log-dir", str(job_runs), store=store)

    jobs = sparkprof_json("history", store=store)
    assert [(j["job_key"], j["runs"]) for j in jobs] == [("nightly-etl", 6)]
    runs = sparkprof_json("history", "nightly-etl", store=store)
    assert [r["app_id"] for r in runs] == [
        f"application_1700000000000_{d:04d}" for d in range(1, 7)
    ]
    text = sparkprof("history", "nightly-etl", store=store)
    assert "job nightly-etl: 6 runs" in text and "application_1700000000000_0006" in text

    found = sparkprof_json("regressions", store=store, expect=3)
    assert [(r["stage_id"], r["run_id"]) for r in found] == [(0, runs[-1]["id"])]
    (regression,) = found
    assert regression["earlier_run_ids"] == [r["id"] for r in runs[:-1]]
    assert regression["slowdown"] > 2
    assert any(cause.startswith("new: straggler") for cause in regression["likely_causes"])
    assert "likely cause: new: straggler" in sparkprof("regressions", store=store, expect=3)
    assert sparkprof_json("regressions", "--min-slowdown", "5", store=store) == []

    before, after = runs[-2]["app_id"], runs[-1]["app_id"]
    comparison = sparkprof_json("compare", before, after, store=store)
    stage0 = comparison["stages"][0]
    assert stage0["stage_id"] == 0 and stage0["duration_ms"]["ratio"] > 2
    assert stage0["skew_max_over_median"]["before"] is None
    assert stage0["skew_max_over_median"]["after"] > 4
    assert [(f["rule"], f["stage_ids"]) for f in comparison["appeared"]] == [("straggler", [0])]
    assert comparison["resolved"] == []
    text = sparkprof("compare", before, after, store=store)
    assert "findings appeared: 1" in text and "straggler stages [0]" in text

    sparkprof("feedback", after, "straggler@0", "reject", "--note", "a late file", store=store)
    given = sparkprof_json("feedback", after, store=store)["feedback"]
    assert [(g["rule"], g["stage_ids"], g["verdict"], g["note"]) for g in given] == [
        ("straggler", [0], "reject", "a late file")
    ]
    assert "[reject: a late file]" in sparkprof("feedback", after, store=store)
    assert (
        sparkprof_json("compare", before, after, store=store)["feedback"][0]["verdict"] == "reject"
    )
    sparkprof("feedback", after, "#1", "accept", store=store)
    sparkprof("feedback", after, "no-such-rule", "accept", store=store, expect=1)
    sparkprof("compare", "1", "999", store=store, expect=1)


def test_collect_into_postgresql(postgresql_url: str, job_runs: Path) -> None:
    assert "6 stored" in sparkprof(
        "collect", "--event-log-dir", str(job_runs), store=postgresql_url
    )
    assert sparkprof_json("history", store=postgresql_url)[0]["runs"] == 6
    sparkprof("regressions", store=postgresql_url, expect=3)


def test_recommend_from_faster_runs_and_lasting_findings(
    tmp_path: Path, demo_logs: dict[str, Path]
) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    for day in (1, 2, 3):
        make_run(demo_logs["plain"], runs, day, settings={"spark.sql.shuffle.partitions": "400"})
    for day in (4, 5, 6):
        make_run(demo_logs["plain"], runs, day, duration_factor=1.3)
    store = f"sqlite:///{tmp_path}/history.sqlite"
    sparkprof("collect", "--event-log-dir", str(runs), store=store)
    ids = [run["id"] for run in sparkprof_json("history", "nightly-etl", store=store)]

    result = sparkprof_json("recommend", "--job", "nightly-etl", store=store)
    assert result["latest_run_id"] == ids[-1]
    by_setting = {item["setting"]: item for item in result["items"]}
    partitions = by_setting["spark.sql.shuffle.partitions"]
    assert (partitions["value"], partitions["current"], partitions["confidence"]) == (
        "400",
        "200",
        "high",
    )
    assert partitions["source"] == "faster runs" and partitions["evidence_run_ids"] == ids[:3]
    committer = by_setting["spark.hadoop.fs.s3a.committer.name"]
    assert committer["source"] == "finding io-write-bound"
    assert (committer["value"], committer["confidence"]) == ("magic", "high")
    assert committer["evidence_run_ids"] == ids

    sparkprof("feedback", str(ids[-1]), "io-write-bound", "reject", store=store)
    again = sparkprof_json("recommend", "--job", "nightly-etl", store=store)["items"]
    assert {i["setting"]: i["confidence"] for i in again}["spark.hadoop.fs.s3a.committer.name"] == (
        "low"
    )
    text = sparkprof("recommend", "--job", "nightly-etl", store=store)
    assert "[high] spark.sql.shuffle.partitions=400 (now 200)" in text
    sparkprof("recommend", "--job", "no-such-job", store=store, expect=1)


def test_the_advisors_record_of_applied_recommendations(
    tmp_path: Path, demo_logs: dict[str, Path]
) -> None:
    """A later run that applied an earlier run's recommended setting is recorded with what was
    predicted and what happened; recommend shows the hit rate per rule (advice_record.py)."""
    runs = tmp_path / "runs"
    runs.mkdir()
    magic = {"spark.hadoop.fs.s3a.committer.name": "magic"}
    make_run(demo_logs["plain"], runs, 1)
    make_run(demo_logs["plain"], runs, 2, settings=magic, duration_factor=0.6)  # helped
    make_run(demo_logs["plain"], runs, 3)  # the default again: nothing applied
    make_run(demo_logs["plain"], runs, 4, settings=magic, duration_factor=1.6)  # worse
    make_run(demo_logs["plain"], runs, 5)
    make_run(demo_logs["plain"], runs, 6, settings=magic, bytes_factor=3.0)  # other input
    store = f"sqlite:///{tmp_path}/history.sqlite"
    sparkprof("collect", "--event-log-dir", str(runs), store=store)
    ids = [run["id"] for run in sparkprof_json("history", "nightly-etl", store=store)]

    from sparkprof.store import HistoryStore

    history = HistoryStore(store)
    outcomes = {
        (o.advised_run_id, o.applied_run_id): o
        for o in history.advice_outcomes("nightly-etl")
        if o.rule == "io-write-bound"
    }
    assert sorted(outcomes) == [(ids[0], ids[1]), (ids[2], ids[3]), (ids[4], ids[5])]
    helped, worse, other = (outcomes[(ids[i], ids[i + 1])] for i in (0, 2, 4))
    assert (helped.verdict, helped.recommended, helped.previous) == ("helped", "magic", None)
    assert helped.after_ms < 0.7 * helped.before_ms and helped.input_ratio == 1.0
    assert helped.predicted_high_ms > 0 and helped.within_prediction is not None
    assert worse.verdict == "worse" and worse.after_ms > 1.1 * worse.before_ms
    assert other.verdict == "not comparable" and other.input_ratio == pytest.approx(3.0, 0.01)
    # Collecting again replaces the runs and their record, never doubles it.
    sparkprof("collect", "--event-log-dir", str(runs), store=store)
    assert (
        len([o for o in history.advice_outcomes("nightly-etl") if o.rule == "io-write-bound"]) == 3
    )
    history.close()

    result = sparkprof_json("recommend", "--job", "nightly-etl", store=store)
    (rate,) = [r for r in result["job_record"] if r["key"] == "io-write-bound"]
    assert (rate["helped"], rate["worse"], rate["not_comparable"], rate["judged"]) == (1, 1, 1, 2)
    assert rate["rate"] == 0.5
    text = sparkprof("recommend", "--job", "nightly-etl", store=store)
    assert "io-write-bound: helped 1 of 2 (50%; no effect 0, worse 1)" in text
    assert "1 more on runs with other input" in text
