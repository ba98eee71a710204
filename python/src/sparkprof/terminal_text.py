"""Text that came from an input (event logs, the run history, price files) on its way to a
terminal or stderr. The engine's rule (common/terminal_text.h), in Python, so the fleet commands
show hostile strings as the engine's text report does.

A terminal acts on more than the ASCII controls: C1 controls (U+0080..U+009F; U+009B is CSI,
which starts an escape sequence like ESC [) and, in an editor or a review tool, the bidirectional
overrides and isolates ("Trojan Source") that make text display in another order than it reads.
"""

from __future__ import annotations

import json
import re
from typing import Any

# C0 controls (newline and tab included), DEL, C1 controls, the bidirectional controls (U+061C,
# U+200E, U+200F, U+202A..U+202E, U+2066..U+2069), the line and paragraph separators (U+2028,
# U+2029), and lone surrogates (bytes that were not UTF-8, decoded with surrogateescape): the
# code points common/terminal_text.cc's IsUnsafeForTerminal replaces, plus what invalid UTF-8
# becomes in a Python string.
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]"
)
# The same less C0, which json.dumps escapes itself (its indentation newlines must stay).
_UNSAFE_PAST_C0 = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")


def sanitize_for_terminal(text: object, replacement: str = "?") -> str:
    """``str(text)`` with every code point unsafe for a terminal replaced by ``replacement``."""
    return _UNSAFE.sub(replacement, str(text))


def terminal_safe_lines(text: str) -> str:
    """Each line of text built here (our own newlines kept) with its unsafe code points replaced:
    the last guard before a terminal, for strings whose fields were not sanitised one by one."""
    return "\n".join(sanitize_for_terminal(line) for line in text.split("\n"))


def terminal_safe_json(data: Any, **dump_options: Any) -> str:
    """``json.dumps(data)`` with every unsafe code point inside a string escaped (``\\u009b``),
    as the engine's JSON report keeps them: the same data, nothing a terminal acts on."""
    text = json.dumps(data, ensure_ascii=False, **dump_options)
    return _UNSAFE_PAST_C0.sub(lambda match: f"\\u{ord(match.group()):04x}", text)
