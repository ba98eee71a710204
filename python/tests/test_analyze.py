"""sparkprof.analyze against the native CLI: the same JSON, byte for byte, whatever way the bytes
arrive (path, fsspec URL, open file, byte chunks), and located problems for bad input."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import fsspec
import pytest

import sparkprof

CODECS = ["plain", "lz4", "snappy", "zstd", "lzf", "gz"]

# Real logs of every layout the engine reads (paths under ../shared/eventlogs).
SHARED_CASES = [
    "NVIDIA+spark-rapids-tools/core/src/test/resources/spark-events-qualification/"
    "eventlog_v2_local-1623876083964",  # rolling directory, zstd parts
    "NVIDIA+spark-rapids-tools/core/src/test/resources/spark-events-profiling/nds_q66_gpu.zstd",
    "NVIDIA+spark-rapids-tools/core/src/test/resources/spark-events-profiling/"
    "malformed_json_eventlog.zstd",  # bad lines with their locations
    "NVIDIA+spark-rapids-tools/core/src/test/resources/spark-events-qualification/db_sim_eventlog",
    "synccomputingcode+spark_log_parser/tests/logs/databricks.zip",
    "apache+spark/core/src/test/resources/spark-events/app-20161115172038-0000",
    "apache+spark/core/src/test/resources/spark-events",  # a folder of many applications
    ".",  # every shared log at once
]


@pytest.mark.parametrize("case", SHARED_CASES)
def test_json_is_the_clis_byte_for_byte(
    case: str, shared_eventlogs: Path, cli_report: Callable[..., str]
) -> None:
    path = shared_eventlogs / case
    assert sparkprof.analyze(str(path)).json == cli_report(path)


@pytest.mark.parametrize("output_format", ["text", "md", "html"])
def test_other_formats_are_the_clis(
    output_format: str, shared_eventlogs: Path, cli_report: Callable[..., str]
) -> None:
    path = shared_eventlogs / "apache+spark/core/src/test/resources/spark-events"
    report = sparkprof.analyze(path)
    assert report.render(output_format) == cli_report(path, output_format)


@pytest.mark.parametrize("codec", CODECS)
def test_every_codec_through_path_file_and_chunks(
    codec: str, demo_logs: dict[str, Path], cli_report: Callable[..., str]
) -> None:
    path = demo_logs[codec]
    expected = cli_report(path)
    assert sparkprof.analyze(path).json == expected
    with open(path, "rb") as file:
        assert sparkprof.analyze(file).json == expected  # named by file.name
    chunks = _chunks(path.read_bytes(), 1000)
    assert sparkprof.analyze(chunks, name=str(path)).json == expected
    assert sparkprof.analyze(path).application.findings, "the demo log has known problems"


def test_zip_from_a_stream_that_cannot_seek(
    shared_eventlogs: Path, cli_report: Callable[..., str]
) -> None:
    path = shared_eventlogs / "synccomputingcode+spark_log_parser/tests/logs/databricks.zip"
    chunks = _chunks(path.read_bytes(), 4096)
    assert sparkprof.analyze(chunks, name=str(path)).json == cli_report(path)


def test_fsspec_url_reads_the_same_log(
    shared_eventlogs: Path, cli_report: Callable[..., str]
) -> None:
    folder = (
        shared_eventlogs / "NVIDIA+spark-rapids-tools/core/src/test/resources/"
        "spark-events-qualification/eventlog_v2_local-1623876083964"
    )
    memory = fsspec.filesystem("memory")
    for part in folder.iterdir():
        memory.pipe(f"/logs/{folder.name}/{part.name}", part.read_bytes())
    url = f"memory://logs/{folder.name}"
    report = sparkprof.analyze(url)
    expected = json.loads(cli_report(folder))
    # Only the names differ: the URL's files instead of the local ones.
    assert [f.file for f in report.application.input.files] == [
        f"{url}/events_1_local-1623876083964.zstd",
        f"{url}/events_2_local-1623876083964.zstd",
    ]
    assert _without_file_names(report.application.raw) == _without_file_names(expected)


def test_typed_report_is_the_json(shared_eventlogs: Path) -> None:
    path = shared_eventlogs / (
        "NVIDIA+spark-rapids-tools/core/src/test/resources/spark-events-profiling/nds_q66_gpu.zstd"
    )
    report = sparkprof.analyze(path).application
    raw = report.raw
    assert report.application.id == raw["application"]["id"]
    assert report.counts.task_attempts == raw["counts"]["task_attempts"]
    assert len(report.stages) == len(raw["stages"])
    stage, raw_stage = report.stages[0], raw["stages"][0]
    assert stage.task_duration_ms.maximum == raw_stage["task_duration_ms"]["max"]
    assert stage.totals.shuffle_write_bytes == raw_stage["totals"]["shuffle_write_bytes"]
    assert [f.rule for f in report.findings] == [f["rule"] for f in raw["findings"]]
    first = report.findings[0]
    assert first.evidence[0].name == raw["findings"][0]["evidence"][0]["name"]
    assert (
        first.expected_impact.time_saved_ms.high
        == (raw["findings"][0]["expected_impact"]["time_saved_ms"]["high"])
    )
    assert report.executors.executors[0].id == raw["executors"]["list"][0]["id"]
    assert report.input.files[0].size_bytes == path.stat().st_size
    assert report.phases.compute.ms == raw["phases"]["compute"]["ms"]
    assert report.phases.task_wait.ms == raw["phases"]["task_wait"]["ms"]
    assert report.phases.cpu_measured == raw["phases"]["cpu_measured"]
    assert first.category == raw["findings"][0]["category"] != ""
    assert first.confidence.level == raw["findings"][0]["confidence"]["level"] != ""
    assert [j.job_id for j in report.jobs] == [j["job_id"] for j in raw["jobs"]]
    assert report.jobs and report.jobs[0].totals.executor_run_time_ms >= 0
    cost, raw_cost = report.cost, raw["cost"]
    assert cost.available and cost.total == raw_cost["total"] > 0
    assert cost.executor_instance == raw_cost["executor_instance"] != ""
    points = raw_cost["right_sizing"]["points"]
    assert [p.cost for p in cost.right_sizing.points] == [p["cost"] for p in points]
    if points:
        assert isinstance(cost.right_sizing.recommended, sparkprof.report.CostPoint)
        assert cost.right_sizing.recommended.cost <= cost.right_sizing.current.cost
    assert sparkprof.ApplicationReport.from_json(report.json) == report
    assert report.driver is None  # only the plugin's driver writes it


def test_the_plugins_driver_section_is_typed(demo_logs: dict[str, Path]) -> None:
    report = sparkprof.analyze(demo_logs["zstd"]).applications[0].report
    raw = dict(report.raw)
    outcomes = ["accepted", "too_large", "invalid", "unsupported_version", "rate_limited"]
    raw["driver"] = {"batches": {**{o: 0 for o in outcomes}, "accepted": 41, "queue_full": 3}}
    driver = sparkprof.ApplicationReport.from_json(json.dumps(raw)).driver
    assert driver is not None
    assert driver.batches == raw["driver"]["batches"]
    assert driver.batches["accepted"] == 41 and driver.batches["queue_full"] == 3


def test_spark_properties_come_with_the_report(demo_logs: dict[str, Path]) -> None:
    analysed = sparkprof.analyze(demo_logs["zstd"]).applications[0]
    assert analysed.spark_properties, "the demo log has an environment update"
    assert all(isinstance(key, str) for key in analysed.spark_properties)


def test_truncated_log_gives_located_problems(
    demo_logs: dict[str, Path], tmp_path: Path, cli_report: Callable[..., str]
) -> None:
    data = demo_logs["lz4"].read_bytes()
    cut = tmp_path / "app-cut.lz4"
    cut.write_bytes(data[: len(data) // 2])
    report = sparkprof.analyze(cut)
    assert report.json == cli_report(cut)
    problem = report.application.input.files[0].error
    assert "truncated" in problem and "byte" in problem
    assert any("byte" in p.message for p in report.problems)


def test_malformed_lines_are_located(shared_eventlogs: Path) -> None:
    path = shared_eventlogs / (
        "NVIDIA+spark-rapids-tools/core/src/test/resources/spark-events-profiling/"
        "malformed_json_eventlog.zstd"
    )
    report = sparkprof.analyze(path)
    bad = report.application.input.bad_lines
    assert bad and bad[0].line > 0 and bad[0].byte_offset >= 0
    assert any(p.per_line and f":{bad[0].line} (byte " in p.message for p in report.problems)


class _FailingFile(io.RawIOBase):
    """Serves `good` bytes, then fails like a dropped connection."""

    def __init__(self, data: bytes, good: int) -> None:
        super().__init__()
        self._data = memoryview(data)
        self._offset = 0
        self._good = good
        self.name = "flaky.zstd"

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._offset >= self._good:
            raise ConnectionResetError("connection reset by peer")
        count = min(len(buffer), self._good - self._offset)
        buffer[:count] = self._data[self._offset : self._offset + count]
        self._offset += count
        return count


def test_a_failing_read_is_raised_not_analysed(demo_logs: dict[str, Path]) -> None:
    data = demo_logs["zstd"].read_bytes()
    with pytest.raises(ConnectionResetError):
        sparkprof.analyze(_FailingFile(data, len(data) // 2))


def test_a_failing_read_can_be_reported_like_the_cli_does(demo_logs: dict[str, Path]) -> None:
    data = demo_logs["zstd"].read_bytes()
    report = sparkprof.analyze(_FailingFile(data, len(data) // 2), on_read_error="report")
    error = report.application.input.files[0].error
    assert "reading failed at byte" in error and "ConnectionResetError" in error


def test_workers_give_the_same_report(
    shared_eventlogs: Path, cli_report: Callable[..., str]
) -> None:
    path = shared_eventlogs / "apache+spark/core/src/test/resources/spark-events"
    assert sparkprof.analyze(path, workers=2).json == cli_report(path)
    names = [a.report.input.name for a in sparkprof.iter_applications(path, workers=2)]
    assert names == [r.input.name for r in sparkprof.analyze(path).reports]


@pytest.mark.parametrize("output_format", ["json", "text", "md", "html"])
def test_logs_without_events_are_listed_with_why_as_the_cli_does(
    tmp_path: Path,
    demo_logs: dict[str, Path],
    cli_report: Callable[..., str],
    output_format: str,
) -> None:
    for name in ("app-a", "app-b"):
        (tmp_path / name).write_bytes(demo_logs["plain"].read_bytes())
    (tmp_path / "empty").write_bytes(b"")
    (tmp_path / "notes.txt").write_text("not an event log\n")
    report = sparkprof.analyze(tmp_path)
    assert sorted(report.skipped) == ["empty", "notes.txt"]
    whys = {Path(entry.path).name: entry.message for entry in report.not_analysed}
    assert whys["empty"] == "no Spark events could be read: empty"
    assert whys["notes.txt"].startswith("no Spark events could be read: 1 line(s)")
    assert report.render(output_format) == cli_report(tmp_path, output_format)


def test_nothing_analysable(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not an event log\n")
    with pytest.raises(sparkprof.NothingAnalysableError) as raised:
        sparkprof.analyze(tmp_path)
    assert raised.value.skipped == ["notes.txt"]
    with pytest.raises(FileNotFoundError):
        sparkprof.analyze(tmp_path / "missing")


_STREAM_BIG_LOG = """
import resource, sys
import sparkprof
head = open(sys.argv[1], "rb").read()
line = b'{"Event":"SparkListenerLogStart","Spark Version":"3.5.1"}\\n'
block = line * (1 << 14)  # ~1 MiB
def chunks():
    yield head
    for _ in range(256):
        yield block
before_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
report = sparkprof.analyze(chunks(), name="big")
grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before_kib
print(report.application.input.lines, grown_kib // 1024)
"""


def test_memory_stays_bounded_while_streaming(demo_logs: dict[str, Path]) -> None:
    """256 MiB of events streamed from a generator (in a fresh process, so the peak is this
    test's): the process grows by far less than that."""
    done = subprocess.run(
        [sys.executable, "-c", _STREAM_BIG_LOG, str(demo_logs["plain"])],
        capture_output=True,
        text=True,
        check=True,
    )
    lines, grown_mib = (int(value) for value in done.stdout.split())
    assert lines > 256 * (1 << 14)
    assert grown_mib < 64, f"peak memory grew by {grown_mib} MiB while streaming 256 MiB"


def _chunks(data: bytes, size: int) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def _without_file_names(report: dict[str, Any]) -> dict[str, Any]:
    copy = json.loads(json.dumps(report))
    for file in copy["input"]["files"]:
        file.pop("file")
    for bad in copy["input"]["bad_lines"]:
        bad.pop("file")
    return copy
