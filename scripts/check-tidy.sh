#!/usr/bin/env bash
# clang-tidy 14 with the repository's .clang-tidy over first-party C++ sources; prints every
# warning and exits 1 when there is one (2 when it cannot run).
# Usage: scripts/check-tidy.sh [-p BUILD_DIR] [-j JOBS] [--all | FILES...]
#   --all     every git-tracked .cc in BUILD_DIR/compile_commands.json (so no generated code,
#             build trees or third-party sources)
#   FILES     these files
#   neither   the .cc files changed (committed or not) since the merge base with main's
#             upstream, or, when main has none or HEAD is that merge base (main itself), since
#             the last commit's parent; a changed header brings in the .cc of the same name
#   -p        the build tree whose compile_commands.json is used (default: build, as
#             scripts/build.sh release makes it; SPARKPROF_TIDY_BUILD overrides)
#   -j        parallel runs (default: SPARKPROF_JOBS or nproc)
# Results are cached in ${XDG_CACHE_HOME:-~/.cache}/sparkprof-tidy under a hash of the
# clang-tidy version, .clang-tidy, the file's compile command and its preprocessed source
# (clang -E, comments kept so a NOLINT counts), so an unchanged file costs one preprocessing.
set -euo pipefail
cd "$(dirname "$0")/.."
tool=clang-tidy-14
cxx=clang++-14
build=${SPARKPROF_TIDY_BUILD:-build}
jobs=${SPARKPROF_JOBS:-$(nproc)}
all=0
files=()
while [ $# -gt 0 ]; do
  case "$1" in
    -p) build=$2; shift 2 ;;
    -j) jobs=$2; shift 2 ;;
    --all) all=1; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0"; exit 0 ;;
    -*) echo "check-tidy: unknown option $1" >&2; exit 2 ;;
    *) files+=("$1"); shift ;;
  esac
done
for t in "$tool" "$cxx" python3; do
  if ! command -v "$t" >/dev/null; then
    echo "check-tidy: $t is not installed (scripts/install-deps.sh installs it)" >&2
    exit 2
  fi
done
db=$build/compile_commands.json
if [ ! -f "$db" ]; then
  echo "check-tidy: no $db (build first: scripts/build.sh release)" >&2
  exit 2
fi

if [ "$all" -eq 1 ]; then
  mapfile -t files < <(git ls-files '*.cc')
elif [ ${#files[@]} -eq 0 ]; then
  # On a branch ahead of main's upstream: what the branch changed. Without an upstream, or on
  # main itself (a clean clone in CI): the last commit.
  base=""
  if upstream=$(git rev-parse --abbrev-ref --symbolic-full-name 'main@{upstream}' 2>/dev/null); then
    base=$(git merge-base HEAD "$upstream")
    [ "$base" = "$(git rev-parse HEAD)" ] && base=""
  fi
  if [ -z "$base" ]; then
    base=$(git rev-parse -q --verify HEAD~1 || git hash-object -t tree /dev/null)
  fi
  mapfile -t changed < <({ git diff --name-only --diff-filter=d "$base"
    git ls-files --others --exclude-standard; } | grep -E '\.(cc|h)$' | sort -u)
  for f in "${changed[@]}"; do
    f=${f%.h}; f=${f%.cc}.cc
    [ -f "$f" ] && files+=("$f")
  done
  if [ ${#files[@]} -eq 0 ]; then
    echo "check-tidy: no changed .cc files (against $base)"
    exit 0
  fi
fi

cache=${XDG_CACHE_HOME:-$HOME/.cache}/sparkprof-tidy
mkdir -p "$cache"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# What every key shares: the tool, its configuration and this script's way of running it.
{ "$tool" --version; cat .clang-tidy; echo "--quiet v1"; } | sha256sum | cut -c1-64 >"$work/salt"

# One line per file to check: file, directory, and the compile command turned into a
# preprocessing one (the database's compiler is gcc; clang-tidy parses as clang 14 does).
python3 - "$db" "$work" "$cxx" "$all" "${files[@]}" >"$work/jobs" <<'EOF'
import json, os, shlex, sys
db, work, cxx, all_files, wanted = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1", sys.argv[5:]
entries = {}
for e in json.load(open(db)):
    path = os.path.realpath(os.path.join(e["directory"], e["file"]))
    entries.setdefault(path, e)  # a file built by several targets is checked once, as the first
checked = []
for name in wanted:
    path = os.path.realpath(name)
    e = entries.get(path)
    if e is None:
        if not all_files:
            print(f"check-tidy: {name}: not in {db}, skipped", file=sys.stderr)
        continue
    args = e["arguments"] if "arguments" in e else shlex.split(e["command"])
    pp, skip = [cxx], False
    for a in args[1:]:
        if skip:
            skip = False
        elif a == "-o":
            skip = True
        elif a != "-c":
            pp.append(a)
    pp += ["-E", "-CC", "-o", "-"]
    print("\t".join([path, e["directory"], shlex.join(args), shlex.join(pp)]))
    checked.append(dict(e, file=path))
# The database clang-tidy reads: one command per file (the fuzz targets' replay driver is built by
# each of them and would otherwise be checked once per target).
json.dump(checked, open(os.path.join(work, "compile_commands.json"), "w"))
EOF
total=$(wc -l <"$work/jobs")
if [ "$total" -eq 0 ]; then
  echo "check-tidy: nothing to check"
  exit 0
fi

# One file: its key, then the cached result or a clang-tidy run. Writes N.out (the warnings),
# N.hit when cached, N.fail when clang-tidy could not run.
check_one() {
  local n=$1 path dir command pp key=""
  IFS=$'\t' read -r path dir command pp < <(sed -n "${n}p" "$work/jobs")
  # No key (so no caching) when the file does not preprocess: clang-tidy then says why.
  key=$(set -o pipefail; { cat "$work/salt"; echo "$dir"; echo "$command"
    (cd "$dir" && eval "$pp" 2>/dev/null); } | sha256sum | cut -c1-64) || key=""
  if [ -n "$key" ] && [ -f "$cache/$key" ]; then
    cp "$cache/$key" "$work/$n.out"
    touch "$work/$n.hit"
    return 0
  fi
  if "$tool" -p "$work" --quiet "$path" >"$work/$n.out" 2>"$work/$n.err"; then
    [ -z "$key" ] || { cp "$work/$n.out" "$cache/$key.$$" && mv "$cache/$key.$$" "$cache/$key"; }
  else
    cat "$work/$n.err" >>"$work/$n.out"
    touch "$work/$n.fail"
  fi
}
export -f check_one
export work cache tool
start=$SECONDS
seq "$total" | xargs -P "$jobs" -I{} bash -c 'check_one {}'

# Print each diagnostic once (a header's warning comes from every file that includes it).
report=$(for n in $(seq "$total"); do cat "$work/$n.out"; done | awk '
  /^\/.*:[0-9]+:[0-9]+: (warning|error): / { flush(); block = $0; next }
  { if (block != "") block = block "\n" $0; else if (NF) print }
  END { flush() }
  function flush() { if (block != "" && !(block in seen)) { seen[block]; print block; count++ }
                     block = "" }
  END { print count + 0 > "/dev/stderr" }' 2>"$work/count")
hits=$(find "$work" -name '*.hit' | wc -l)
failed=$(find "$work" -name '*.fail' | wc -l)
warnings=$(cat "$work/count")
[ -n "$report" ] && echo "$report"
echo "check-tidy: $total files ($hits cached) in $((SECONDS - start)) s: $warnings warnings," \
  "$failed files clang-tidy could not check"
[ "$warnings" -eq 0 ] && [ "$failed" -eq 0 ]
