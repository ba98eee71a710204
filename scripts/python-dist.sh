#!/usr/bin/env bash
# The Python package's distributions, made by the package's own build (ctest `python_dist`, label
# python): an sdist holding the engine's sources, a wheel built from that sdist (PyPA `build`,
# scikit-build-core), made a manylinux wheel by auditwheel (the codec libraries the extension and
# the bundled CLI link from Debian are copied into the wheel and their RPATHs set by patchelf).
# Then, with --test, python/tests_dist/ installs that wheel into a fresh venv and runs it.
#
# The package's CMake source is the repository root, outside python/, so the sdist's tree is
# assembled first: the engine's folders the extension builds from (ENGINE_DIRS below, as tracked
# by git) plus python/, with python/pyproject.toml placed at the top and its paths moved there.
# Usage: scripts/python-dist.sh [--test] [pytest args...]
#   SPARKPROF_PYTHON_DIST_DIR   where everything goes (default build/python-dist):
#     dist/        sparkprof-<v>.tar.gz and the wheel as built (linux_x86_64)
#     wheelhouse/  the repaired manylinux wheel
#     tools-venv/  build, auditwheel, patchelf, pytest (pinned in python/requirements-lock.txt)
# The wheel's CMake tree is rebuilt each time from ccache (CCACHE_NOHASHDIR, CCACHE_BASEDIR): after
# scripts/python-tests.sh (the ctest runs after python_package) it costs a configure, cache hits
# and links.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
run_tests=0
if [ "${1:-}" = "--test" ]; then
  run_tests=1
  shift
fi
out="$(realpath -m "${SPARKPROF_PYTHON_DIST_DIR:-build/python-dist}")"
python="${SPARKPROF_PYTHON:-python3}"
export PIP_CONSTRAINT="$root/python/requirements-lock.txt" PIP_DISABLE_PIP_VERSION_CHECK=1
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"

tools="$out/tools-venv"
pins="$(sha256sum python/requirements-lock.txt | cut -d' ' -f1)"
if [ "$(cat "$tools/.pins" 2>/dev/null)" != "$pins" ]; then
  rm -rf "$tools"
  "$python" -m venv "$tools"
  # The build backend here too: the wheel is built without isolation, so nanobind's sources
  # keep one path and ccache serves them.
  "$tools/bin/pip" install -q build auditwheel patchelf pytest scikit-build-core nanobind
  echo "$pins" >"$tools/.pins"
fi

# The sdist's tree: what the extension's CMake build reads, nothing else (no tests' data, agent,
# plugin or chart). Tracked files and new ones not ignored, as they are in the work tree.
# (Fuzz targets are defined, never built, in the extension's build: their replay driver is named.)
ENGINE_DIRS=(CMakeLists.txt cmake common schema metrics analyzer flamegraph driver-aggregator cli
  tests/fuzz/replay_driver.cc)
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' python/pyproject.toml)"
stage="$out/stage/sparkprof-$version"
rm -rf "$out/stage" "$out/dist" "$out/wheelhouse"
mkdir -p "$stage" "$out/dist" "$out/wheelhouse"
git ls-files -z --cached --others --exclude-standard -- "${ENGINE_DIRS[@]}" python |
  while IFS= read -r -d '' file; do
    [ -f "$file" ] && printf '%s\0' "$file"
  done | tar -c --null -T - | tar -x -C "$stage"
# python/pyproject.toml at the top: its relative paths now start from the repository root.
sed -e 's|^readme = "README.md"|readme = "python/README.md"|' \
  -e 's|^cmake.source-dir = ".."|cmake.source-dir = "."|' \
  -e 's|^build-dir = "\.\./build/|build-dir = "build/|' \
  -e 's|^wheel.packages = \["src/sparkprof"\]|wheel.packages = ["python/src/sparkprof"]|' \
  -e 's|^sdist.include = \[\]|sdist.exclude = ["python/tests", "python/tests_dist"]|' \
  -e 's|"\.\./build/python-cache/|"build/python-cache/|' \
  python/pyproject.toml >"$stage/pyproject.toml"
for expected in 'readme = "python/README.md"' 'cmake.source-dir = "."' \
  'wheel.packages = ["python/src/sparkprof"]' 'sdist.exclude' 'build-dir = "build/'; do
  grep -qF "$expected" "$stage/pyproject.toml" || {
    echo "python-dist: python/pyproject.toml changed shape; update the sed above" >&2
    exit 1
  }
done

echo "python-dist: sdist"
"$tools/bin/python" -m build --sdist --outdir "$out/dist" "$stage" >"$out/build-sdist.log" 2>&1 ||
  { tail -40 "$out/build-sdist.log"; exit 1; }
sdist="$out/dist/sparkprof-$version.tar.gz"

# The wheel from the sdist. Its CMake tree is made anew each time (the sdist's files carry one
# fixed mtime, so an old tree would not see a change) inside the unpacked sdist at the same
# relative place as scripts/python-tests.sh's (build/python-build/<tag>): with CCACHE_BASEDIR and
# CCACHE_NOHASHDIR every compile then hits the objects that build left in ccache.
echo "python-dist: wheel from the sdist"
rm -rf "$out/sdist-src"
mkdir -p "$out/sdist-src"
tar -xzf "$sdist" -C "$out/sdist-src"
export CCACHE_BASEDIR="$out/sdist-src/sparkprof-$version" CCACHE_NOHASHDIR=1
"$tools/bin/python" -m build --wheel --no-isolation --outdir "$out/dist" \
  "$out/sdist-src/sparkprof-$version" >"$out/build-wheel.log" 2>&1 ||
  { tail -60 "$out/build-wheel.log"; exit 1; }
wheel="$(ls "$out"/dist/sparkprof-"$version"-*.whl)"

echo "python-dist: auditwheel repair $(basename "$wheel")"
"$tools/bin/auditwheel" show "$wheel" >"$out/auditwheel-show.txt"
PATH="$tools/bin:$PATH" "$tools/bin/auditwheel" repair -w "$out/wheelhouse" "$wheel" \
  >"$out/auditwheel-repair.log" 2>&1 || { cat "$out/auditwheel-repair.log"; exit 1; }
repaired="$(ls "$out"/wheelhouse/*.whl)"
echo "python-dist: $(basename "$repaired") ($(du -k "$repaired" | cut -f1) KiB)"

if [ "$run_tests" = 1 ]; then
  scripts/install-deps.sh
  export SPARKPROF_DIST_WHEEL="$repaired" SPARKPROF_DIST_SDIST="$sdist"
  export SPARKPROF_DIST_TOOLS="$tools"
  cd python
  exec "$tools/bin/python" -m pytest -q -p no:cacheprovider tests_dist "$@"
fi
