"""Shared fixtures: the native CLI to compare with, the shared real event logs (tests skip
without them), and small logs the CLI generates (every codec)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

# gcsfs >= 2026.10 asks GCS's gRPC storage-control API for each bucket's layout first (60 s of
# retries against an emulator that has no gRPC), unless its experimental extension is off. Set
# before gcsfs is first imported; subprocesses inherit it.
os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")

from servers import (
    history_server,
    postgresql_server,
    postgresql_url,
    prometheus_server,
    s3_endpoint,
)

import sparkprof

__all__ = [
    "history_server",
    "postgresql_server",
    "postgresql_url",
    "prometheus_server",
    "s3_endpoint",
]

REPO = Path(__file__).resolve().parents[2]
CODECS = ["plain", "lz4", "snappy", "zstd", "lzf", "gz"]


def _packaged_cli() -> Path:
    return Path(sparkprof.__file__).resolve().parent / "bin" / "sparkprof"


@pytest.fixture(scope="session")
def native_cli() -> Path:
    """The CLI the Python package must agree with: $SPARKPROF_TEST_CLI (the ctest passes the
    release build's), else build/cli/sparkprof, else the copy inside the package."""
    for candidate in (os.environ.get("SPARKPROF_TEST_CLI"), REPO / "build/cli/sparkprof"):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return _packaged_cli()


@pytest.fixture(scope="session")
def shared_eventlogs() -> Path:
    path = Path(os.environ.get("SPARKPROF_SHARED_EVENTLOGS", REPO.parent / "shared/eventlogs"))
    if not path.is_dir():
        pytest.skip(f"no shared event logs at {path}")
    return path


@pytest.fixture(scope="session")
def cli_report(native_cli: Path) -> Callable[..., str]:
    """`sparkprof analyze PATH --format FORMAT -q` as the native CLI writes it."""

    def run(path: str | Path, output_format: str = "json") -> str:
        done = subprocess.run(
            [str(native_cli), "analyze", str(path), "--format", output_format, "-q"],
            capture_output=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr.decode()
        return done.stdout.decode("utf-8")

    return run


@pytest.fixture(scope="session")
def demo_logs(native_cli: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The CLI's synthetic log (known problems) in every codec Spark writes."""
    folder = tmp_path_factory.mktemp("demo-logs")
    logs: dict[str, Path] = {}
    for codec in CODECS:
        suffix = "" if codec == "plain" else f".{codec}"
        path = folder / f"app-demo{suffix}"
        subprocess.run(
            [str(native_cli), "demo-log", "--codec", codec, "-o", str(path)],
            check=True,
            capture_output=True,
        )
        logs[codec] = path
    return logs
