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


def test_analyze_of_a_url_is_streamed_by_python(
    demo_logs: dict[str, Path], cli_report: Callable[..., str], tmp_path: Path
) -> None:
    """`sparkprof analyze http://...`: the native CLI cannot open a URL; the entry point streams
    it through the engine and writes what the native command writes for the file."""
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", "0", "--bind", "127.0.0.1"],
        cwd=demo_logs["zstd"].parent,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        port = server.stdout.readline().split("port ")[1].split(" ")[0]
        url = f"http://127.0.0.1:{port}/{demo_logs['zstd'].name}"
        done = subprocess.run(
            [*ENTRY, "analyze", url, "--format", "json", "--fail-on", "critical", "-q"],
            capture_output=True,
        )
        missing = subprocess.run([*ENTRY, "analyze", url + ".missing"], capture_output=True)
    finally:
        server.terminate()
        server.wait()
    assert done.returncode == 3, done.stderr.decode()
    expected = cli_report(demo_logs["zstd"]).replace(str(demo_logs["zstd"]), url)
    assert done.stdout.decode() == expected
    assert missing.returncode == 2
