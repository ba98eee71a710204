#!/usr/bin/env bash
# Makes a Python virtual environment holding exactly the pinned packages, unless DIR already holds
# them (DIR/.pin lists the pins it was made with). pip's cache makes a remake offline-fast.
# Usage: scripts/pinned-venv.sh DIR PACKAGE==VERSION...   (PYTHON may name the interpreter)
set -euo pipefail
venv="$1"
shift
pin="$*"
[ "$(cat "$venv/.pin" 2>/dev/null)" = "$pin" ] && exit 0
echo "pinned-venv: $pin into $venv"
rm -rf "$venv"
"${PYTHON:-python3}" -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check "$@"
echo "$pin" >"$venv/.pin"
