"""analyze(..., profile=...): the agent's samples in the Python API, as `analyze --profile`."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

import sparkprof

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "workloads" / "fixtures" / "3.5.9"


@pytest.fixture
def profiled_run(tmp_path: Path) -> tuple[Path, Path]:
    """A real run's event log and its profile: the workloads' row-at-a-time Python UDF."""
    log = FIXTURES / "slow_python_udf.zstd"
    compressed = FIXTURES / "slow_python_udf.sparkprof.zstd"
    zstd = shutil.which("zstd")
    if not log.is_file() or not compressed.is_file() or not zstd:
        pytest.skip("the workloads' fixtures or zstd are missing")
    profile = tmp_path / "profile.sparkprof"
    subprocess.run([zstd, "-q", "-d", str(compressed), "-o", str(profile)], check=True)
    return log, profile


def test_profile_reaches_the_report_and_the_rules(profiled_run: tuple[Path, Path]) -> None:
    log, profile = profiled_run
    report = sparkprof.analyze(log, profile=profile)
    document = json.loads(report.json)
    section = document["profile"]
    assert section["available"] is True
    assert section["source"] == str(profile)
    assert section["sampled_task_ms"] > 0
    assert "python-bound" in {finding["rule"] for finding in document["findings"]}
    # Without it, the same log has no profile section and no profile rule.
    plain = json.loads(sparkprof.analyze(log).json)
    assert "profile" not in plain
    assert "python-bound" not in {finding["rule"] for finding in plain["findings"]}


def test_profile_equals_the_clis(profiled_run: tuple[Path, Path], native_cli: Path) -> None:
    log, profile = profiled_run
    ours = sparkprof.analyze(log, profile=profile).json
    theirs = subprocess.run(
        [str(native_cli), "analyze", str(log), "--profile", str(profile), "--format", "json", "-q"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert ours == theirs


def test_an_unusable_profile_is_said_not_fatal(tmp_path: Path) -> None:
    log = FIXTURES / "slow_python_udf.zstd"
    if not log.is_file():
        pytest.skip("the workloads' fixtures are missing")
    missing = tmp_path / "nothing-here"
    document = json.loads(sparkprof.analyze(log, profile=missing).json)
    assert document["profile"]["available"] is False
    assert document["profile"]["reason"]
