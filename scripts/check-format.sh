#!/usr/bin/env bash
# The C++ sources (every tracked *.cc and *.h) as clang-format 14 writes them with .clang-format:
# lists the files that differ and exits 1; --fix rewrites them. Run by ctest (format_check) and
# so by scripts/test.sh; clang-format-14 comes from scripts/install-deps.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
tool=clang-format-14
if ! command -v "$tool" >/dev/null; then
  echo "check-format: $tool is not installed (scripts/install-deps.sh installs it)" >&2
  exit 2
fi
mapfile -t files < <(git ls-files '*.cc' '*.h')
if [[ ${1:-} == --fix ]]; then
  "$tool" -i "${files[@]}"
  exit 0
fi
bad=$("$tool" --dry-run -Werror "${files[@]}" 2>&1 | grep -oE '^[^: ]+:[0-9]+:[0-9]+: error' |
  cut -d: -f1 | sort -u || true)
if [[ -n $bad ]]; then
  echo "check-format: not as clang-format writes them (fix: scripts/check-format.sh --fix):" >&2
  echo "$bad" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
