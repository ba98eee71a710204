"""The ``--option KEY=VALUE`` argument: fsspec storage options on the command line, for the fleet
commands, ``sparkprof analyze URL`` and the Spark job (each says in its help what they reach)."""

from __future__ import annotations

import argparse
import json
from typing import Any


def storage_option(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` as a pair, the value read as JSON when it parses (``anon=true``: True)."""
    key, sep, value = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"--option wants KEY=VALUE, got {text!r}")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def add_storage_option_argument(parser: argparse.ArgumentParser, help: str) -> None:
    """``--option KEY=VALUE``, repeatable; ``args.option`` is the list of pairs (empty if none)."""
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        type=storage_option,
        metavar="KEY=VALUE",
        help=help,
    )
