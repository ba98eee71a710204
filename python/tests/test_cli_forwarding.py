"""The package's `sparkprof` command: native commands are the native CLI's, exit codes included."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ENTRY = [sys.executable, "-m", "sparkprof.cli"]


def test_analyze_is_the_native_command(
    demo_logs: dict[str, Path], cli_report: Callable[..., str]
) -> None:
    path = demo_logs["snappy"]
    done = subprocess.run(
        [*ENTRY, "analyze", str(path), "--format", "json", "-q"], capture_output=True, check=True
    )
    assert done.stdout.decode() == cli_report(path)


def test_exit_codes_pass_through(tmp_path: Path, demo_logs: dict[str, Path]) -> None:
    missing = subprocess.run([*ENTRY, "analyze", str(tmp_path / "missing")], capture_output=True)
    assert missing.returncode == 2
    gate = subprocess.run(
        [*ENTRY, "analyze", str(demo_logs["plain"]), "--fail-on", "warning", "-q"],
        capture_output=True,
    )
    assert gate.returncode == 3


def test_version_and_help_name_both_sides() -> None:
    version = subprocess.run([*ENTRY, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.startswith("sparkprof ")
    usage = subprocess.run([*ENTRY, "--help"], capture_output=True, text=True, check=True)
    assert "Fleet commands" in usage.stdout and "analyze" in usage.stdout
