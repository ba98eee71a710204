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


def test_planted_symlinks_are_replaced_never_followed(many_logs: Path, tmp_path: Path) -> None:
    """A shared folder where another user planted symlinks named like the outputs (the files a
    root-run `reports -o` would write): each is replaced by the report, its target untouched."""
    out = tmp_path / "shared"
    out.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("root's secret\n")
    victim.chmod(0o600)
    app_id = next(o.app_id for o in write_reports(many_logs, tmp_path / "probe") if o.app_id)
    planted = [out / "index.jsonl", out / f"{app_id}.json", out / f"{app_id}.html"]
    for link in planted:
        link.symlink_to(victim)
    outcomes = list(write_reports(many_logs, out, ["json", "html"], workers=1))
    assert victim.read_text() == "root's secret\n" and victim.stat().st_mode & 0o777 == 0o600
    for link in planted:
        assert not link.is_symlink() and link.is_file()
        assert link.stat().st_mode & 0o777 == 0o644
    assert json.loads((out / f"{app_id}.json").read_text())["application"]["id"] == app_id
    assert len((out / "index.jsonl").read_text().splitlines()) == len(outcomes)
    assert not [p for p in out.iterdir() if ".tmp." in p.name]


def test_a_folder_every_user_may_replace_files_in_is_refused(
    many_logs: Path, tmp_path: Path
) -> None:
    out = tmp_path / "open"
    out.mkdir()
    out.chmod(0o777)  # no sticky bit: anyone may rename other users' files away
    done = subprocess.run(
        [*ENTRY, "reports", str(many_logs), "-o", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert f"sparkprof: {out} is writable by every user without the sticky bit" in done.stderr
    assert "Traceback" not in done.stderr and not list(out.iterdir())
    out.chmod(0o1777)  # /tmp's mode: accepted
    assert [o for o in write_reports(many_logs, out) if not o.error]
