"""``sparkprof reports SOURCE -o DIR``: one report file per application, written as each finishes,
at most ``workers`` applications in memory."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import CODECS

from sparkprof.report_files import write_reports

ENTRY = [sys.executable, "-m", "sparkprof.cli"]


@pytest.fixture()
def many_logs(demo_logs: dict[str, Path], tmp_path: Path) -> Path:
    folder = tmp_path / "logs"
    folder.mkdir()
    for codec in CODECS:
        shutil.copy(demo_logs[codec], folder / demo_logs[codec].name)
    (folder / "notes.txt").write_text("not an event log\n" * 100)
    return folder


@pytest.mark.parametrize("workers", [1, 3])
def test_one_file_per_application_as_the_cli_writes_it(
    many_logs: Path, tmp_path: Path, cli_report: Callable[..., str], workers: int
) -> None:
    out = tmp_path / f"reports-{workers}"
    outcomes = list(write_reports(many_logs, out, ["json", "html"], workers=workers))
    written = [o for o in outcomes if not o.error]
    assert len(written) == len(CODECS) and len(outcomes) == len(CODECS) + 1
    (junk,) = [o for o in outcomes if o.error]
    assert junk.log.endswith("notes.txt")
    # Every copy is the same application: the names stay apart.
    stems = sorted(Path(o.files[0]).stem for o in written)
    assert stems[0] == written[0].app_id and len(set(stems)) == len(CODECS)
    for outcome in written:
        log = many_logs / Path(outcome.log).name
        assert (out / outcome.files[0]).read_text() == cli_report(log)
        assert (out / outcome.files[1]).read_text() == cli_report(log, "html")
    index = [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines()]
    assert [entry["log"] for entry in index] == [o.log for o in outcomes]


def test_bad_formats(many_logs: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="pdf"):
        list(write_reports(many_logs, tmp_path / "out", ["pdf"]))


def test_the_command(many_logs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = subprocess.run(
        [*ENTRY, "reports", str(many_logs), "-o", str(out), "--workers", "2", "-q"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (f"{len(CODECS)} reports written to {out}, 1 logs not analysable")
    assert "notes.txt" in done.stderr
    assert len(list(out.glob("*.json"))) == len(CODECS)
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = subprocess.run(
        [*ENTRY, "reports", str(empty), "-o", str(tmp_path / "none")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert nothing.returncode == 2
