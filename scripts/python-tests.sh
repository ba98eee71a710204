#!/usr/bin/env bash
# The Python package's tests (ctest `python_package`, label python): builds and installs
# ./python[test] into build/python-venv with the exactly pinned dependencies of
# python/requirements-lock.txt (pip's cache makes a second run offline), then runs pytest.
# The extension builds incrementally in build/python-build; with CCACHE_NOHASHDIR ccache serves
# a wiped build/python-build from its own earlier objects (the cwd is not hashed).
# Usage: scripts/python-tests.sh [--cli PATH_TO_NATIVE_SPARKPROF] [pytest args...]
# SPARKPROF_PYTHON_VENV and SPARKPROF_PYTHON_BUILD_DIR move the venv and the extension's build tree
# (defaults build/python-venv, build/python-build), so two checkouts' runs do not share them.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --python
# fake-gcs-server and Azurite for the gs:// and abfs:// tests (python/tests/test_cloud_storage.py).
scripts/install-storage-emulators.sh
if [ "${1:-}" = "--cli" ]; then
  export SPARKPROF_TEST_CLI="$2"
  shift 2
fi
venv="${SPARKPROF_PYTHON_VENV:-build/python-venv}"
venv="$(realpath -m "$venv")"
build_args=()
if [ -n "${SPARKPROF_PYTHON_BUILD_DIR:-}" ]; then
  build_args=(--config-settings="build-dir=$(realpath -m "$SPARKPROF_PYTHON_BUILD_DIR")/{wheel_tag}")
fi
python="${SPARKPROF_PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR=1
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"
# Pinned: the lock file is the constraint for every package pip resolves, the build's included.
export PIP_CONSTRAINT="$PWD/python/requirements-lock.txt"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${build_args[@]}" \
  "./python[test]"
cd python
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider "$@"
