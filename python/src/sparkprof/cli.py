"""The ``sparkprof`` command of the Python package.

One command for users: the fleet commands (``collect``, ``history``, ``compare``,
``regressions``, ``feedback``) run here; every other command (``analyze``, ``flamegraph``,
``demo-log``, ``--help``, ``--version``) is the native CLI shipped inside the package, which this
process replaces (``execv``), so its output and exit codes are exactly the native ones. The one
exception: ``analyze`` of a URL (``s3://...``), which the native CLI cannot open, is streamed
through the engine here and written exactly as the native command writes a local path's report.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

FleetCommand = Callable[[Sequence[str]], int]


def native_cli_path() -> Path:
    """The native ``sparkprof`` executable built with this package."""
    override = os.environ.get("SPARKPROF_NATIVE_CLI")
    if override:
        return Path(override)
    return Path(__file__).resolve().parent / "bin" / "sparkprof"


def fleet_commands() -> dict[str, FleetCommand]:
    from sparkprof import fleet_cli

    return fleet_cli.COMMANDS


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    commands = fleet_commands()
    if args and args[0] in commands:
        return commands[args[0]](args[1:])
    if args[:1] == ["analyze"] and any(_is_url(arg) for arg in args[1:]):
        from sparkprof.analyze_url import analyze_url_command

        return analyze_url_command(args[1:])
    native = native_cli_path()
    if not native.exists():
        print(f"sparkprof: the native CLI is missing ({native})", file=sys.stderr)
        return 1
    if args in ([], ["--help"], ["-h"]):
        names = ", ".join(sorted(commands))
        print(f"Fleet commands (Python): {names}; 'sparkprof COMMAND --help'")
        sys.stdout.flush()
    os.execv(native, [str(native), *args])
    return 1  # not reached


def _is_url(argument: str) -> bool:
    return "://" in argument and not argument.startswith(("file://", "-"))


if __name__ == "__main__":
    sys.exit(main())
