"""Strings from inputs meeting a terminal: the fleet commands (history, compare, regressions,
feedback, recommend) show hostile application ids, job keys, stage names and settings with the
engine's sanitiser rule -- ESC, CSI, OSC, C1 controls, bidirectional overrides and newlines
replaced by "?" -- and their JSON keeps every string, escaped."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from synthetic_runs import make_run

from sparkprof.terminal_text import sanitize_for_terminal, terminal_safe_json

ENTRY = [sys.executable, "-m", "sparkprof.cli"]

# What a terminal acts on: ESC (C0), CSI as ESC [ and as the C1 byte U+009B, OSC (ESC ] ... BEL,
# here setting the window title), OSC 8 hyperlinks, DEL, NEL (U+0085), a bidirectional override.
ESC_CSI = "\x1b[2J\x1b[31m"
OSC = "\x1b]0;pwned\x07\x1b]8;;http://evil/\x1b\\"
C1_CSI = "\x9b2J\x9d0;title\x9c\x85"
BIDI = "\u202eexe.txt\u2066"
HOSTILE = ESC_CSI + OSC + C1_CSI + "\x7f" + BIDI + "\nforged line\r"
UNSAFE = {chr(c) for c in [*range(0x20), *range(0x7F, 0xA0), 0x202E, 0x2066, 0x2028]}


def _unsafe_in(text: str) -> set[str]:
    return {c for c in text if c in UNSAFE} - {"\n"}


def test_the_engines_rule() -> None:
    assert sanitize_for_terminal("a\x1b[31mb") == "a?[31mb"
    assert sanitize_for_terminal("\x9b2J\x85\x9f\xa0") == "?2J??\xa0"
    assert sanitize_for_terminal("l\u202eo\u2066r\u2069\u200f\u061c\u2028\u2029") == "l?o?r?????"
    assert sanitize_for_terminal("tab\tnew\nline\x00\x7f") == "tab?new?line??"
    # Text is kept: accents, CJK, emoji, and the printable neighbours of the controls.
    kept = "café 日本 🚀 ~ \xa0 \u2030 \u206a"
    assert sanitize_for_terminal(kept) == kept
    # Bytes that were not UTF-8 (surrogateescape) are replaced, as the engine replaces each byte.
    assert sanitize_for_terminal(b"ok\xff\xfe".decode("utf-8", "surrogateescape")) == "ok??"
    assert (
        sanitize_for_terminal(HOSTILE, "")
        == "[2J[31m]0;pwned]8;;http://evil/\\2J0;titleexe.txtforged line"
    )
    escaped = terminal_safe_json({"k": HOSTILE}, indent=2)
    assert json.loads(escaped) == {"k": HOSTILE} and not _unsafe_in(escaped)
    assert "\\u009b" in escaped and "\\u202e" in escaped


def test_the_same_as_the_engines_text_report(
    native_cli: Path, demo_logs: dict[str, Path], tmp_path: Path
) -> None:
    """The application name as the engine's text report shows it is the Python sanitiser's."""
    name = "nightly" + HOSTILE
    log = make_run(demo_logs["plain"], tmp_path, 1, settings={"spark.app.name": name})
    events = [json.loads(line) for line in log.read_text().splitlines()]
    for event in events:
        if event["Event"] == "SparkListenerApplicationStart":
            event["App Name"] = name
    log.write_text("".join(json.dumps(e) + "\n" for e in events))
    text = subprocess.run(
        [str(native_cli), "analyze", str(log), "--format", "text", "-q"],
        capture_output=True,
        check=True,
    ).stdout.decode()
    assert sanitize_for_terminal(name) in text and not _unsafe_in(text)


def _hostile_runs(demo_logs: dict[str, Path], folder: Path) -> Path:
    """Three runs of a job whose key, application ids and stage names carry escapes; the first
    two with another (hostile) shuffle-partitions setting and faster, so recommend quotes it."""
    folder.mkdir()
    for day in (1, 2, 3):
        settings = {"spark.sparkprof.jobKey": "etl" + HOSTILE}
        if day < 3:
            settings["spark.sql.shuffle.partitions"] = "400" + OSC
        path = make_run(
            demo_logs["plain"],
            folder,
            day,
            settings=settings,
            duration_factor=1.0 if day < 3 else 1.3,
            slow_task=(0, 6.0) if day == 3 else None,
        )
        events = [json.loads(line) for line in path.read_text().splitlines()]
        for event in events:
            if event["Event"] == "SparkListenerApplicationStart":
                event["App ID"] += C1_CSI + BIDI
            for key in ("Stage Info",):
                if key in event:
                    event[key]["Stage Name"] = "map at" + ESC_CSI + OSC
            if "Stage Infos" in event:
                for stage in event["Stage Infos"]:
                    stage["Stage Name"] = "map at" + ESC_CSI + OSC
        path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return folder


def _run(*args: str, expect: int = 0) -> str:
    done = subprocess.run([*ENTRY, *args], capture_output=True, check=False)
    out, err = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == expect, out + err
    assert not _unsafe_in(out + err), f"{args}: {(out + err)!r}"
    return out


def test_fleet_commands_show_hostile_strings_safely(
    demo_logs: dict[str, Path], tmp_path: Path
) -> None:
    runs = _hostile_runs(demo_logs, tmp_path / "runs")
    store = ["--store", f"sqlite:///{tmp_path}/history.sqlite"]
    _run("collect", "--event-log-dir", str(runs), *store)
    job = "etl" + HOSTILE
    jobs = json.loads(_run("history", "--json", *store))
    assert [j["job_key"] for j in jobs] == [job]  # JSON keeps the string, escaped
    assert sanitize_for_terminal(job) in _run("history", *store)
    listed = json.loads(_run("history", job, "--json", *store))
    ids = [str(r["id"]) for r in listed]
    assert listed[0]["app_id"].endswith(C1_CSI + BIDI)
    history = _run("history", job, *store)
    assert sanitize_for_terminal(listed[0]["app_id"]) in history
    assert f"job {sanitize_for_terminal(job)}: 3 runs" in history
    compared = _run("compare", ids[0], ids[2], *store)
    assert sanitize_for_terminal(listed[0]["app_id"]) in compared
    assert sanitize_for_terminal("map at" + ESC_CSI + OSC)[:40] in compared
    regressions = _run("regressions", "--min-history", "2", *store, expect=3)
    assert sanitize_for_terminal(job) in regressions
    assert "map at?[2J" in regressions
    _run("feedback", ids[2], "#1", "reject", "--note", "late" + OSC, *store)
    feedback = _run("feedback", ids[2], *store)
    assert "late?]0;pwned?" in feedback
    recommended = _run("recommend", "--job", job, *store)
    assert f"job {sanitize_for_terminal(job)}" in recommended
    assert sanitize_for_terminal("400" + OSC) in recommended
    raw = json.loads(_run("recommend", "--job", job, "--json", *store))
    assert "400" + OSC in {item["value"] for item in raw["items"]}
