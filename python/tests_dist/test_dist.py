"""The distributions scripts/python-dist.sh made: the sdist holds what the build needs (the wheel
was built from it), and the repaired manylinux wheel works on its own in a fresh venv: no build
tools, no source tree, the codec libraries inside the wheel. Run by that script (ctest
`python_dist`), which sets SPARKPROF_DIST_WHEEL, SPARKPROF_DIST_SDIST and SPARKPROF_DIST_TOOLS."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
WHEEL = Path(os.environ["SPARKPROF_DIST_WHEEL"])
SDIST = Path(os.environ["SPARKPROF_DIST_SDIST"])
TOOLS = Path(os.environ["SPARKPROF_DIST_TOOLS"])
# A real log of the workload corpus (Spark 3.5.9, zstd as Spark wrote it) and one of its facts.
REAL_LOG = REPO / "tests/workloads/fixtures/3.5.9/skewed_join.zstd"
# What a manylinux wheel may take from the system (auditwheel's policy for every manylinux tag).
SYSTEM_LIBRARIES = re.compile(
    r"^(libc|libm|libdl|librt|libpthread|libz|libstdc\+\+|libgcc_s|ld-linux-x86-64|linux-vdso)"
    r"\.so"
)


def test_sdist_holds_the_engine_and_the_package_not_the_tests() -> None:
    with tarfile.open(SDIST) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    for needed in (
        "pyproject.toml",
        "CMakeLists.txt",
        "cmake/SparkprofHelpers.cmake",
        "analyzer/whatif/simulator.cc",
        "cli/main.cc",
        "python/CMakeLists.txt",
        "python/native/module.cc",
        "python/src/sparkprof/__init__.py",
        "PKG-INFO",
    ):
        assert needed in names, needed
    left_out = ("python/tests/", "native-agent/", "spark-plugin/", "tests/")
    assert "tests/fuzz/replay_driver.cc" in names  # the fuzz targets' driver CMake names
    assert not any(
        name.startswith(left_out) for name in names if name != "tests/fuzz/replay_driver.cc"
    )


def test_wheel_is_manylinux_with_its_libraries_inside() -> None:
    tag = WHEEL.name.removesuffix(".whl").split("-")[-1]
    assert tag.startswith("manylinux_"), WHEEL.name
    with zipfile.ZipFile(WHEEL) as wheel:
        names = wheel.namelist()
    vendored = [n for n in names if n.startswith("sparkprof.libs/")]
    # The codecs and parser the engine links (Debian's shared libraries), copied in by auditwheel.
    for library in ("libzstd", "liblz4", "libsnappy", "libsimdjson"):
        assert any(Path(n).name.startswith(library) for n in vendored), (library, vendored)
    assert "sparkprof/bin/sparkprof" in names
    assert any(re.match(r"sparkprof/_native\..*\.so$", n) for n in names)
    shown = subprocess.run(
        [str(TOOLS / "bin/auditwheel"), "show", str(WHEEL)], capture_output=True, text=True
    )
    assert shown.returncode == 0, shown.stderr
    assert f'"{tag}"' in shown.stdout or tag in shown.stdout.replace("\n", " "), shown.stdout


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new venv with only the wheel and its runtime dependencies (pinned, from pip's cache)."""
    venv = tmp_path_factory.mktemp("fresh") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(venv / "bin/pip"), "install", "-q", "--disable-pip-version-check", str(WHEEL)],
        check=True,
        env={**os.environ, "PIP_CONSTRAINT": str(REPO / "python/requirements-lock.txt")},
    )
    return venv


def _run(venv: Path, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    # No PYTHONPATH or the source tree: the venv's site-packages only.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "SPARKPROF_"))}
    env["PATH"] = f"{venv / 'bin'}:/usr/bin:/bin"
    env["LD_LIBRARY_PATH"] = ""
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)


def test_fresh_venv_has_no_build_tools(fresh_venv: Path, tmp_path: Path) -> None:
    done = _run(
        fresh_venv,
        [
            str(fresh_venv / "bin/python"),
            "-I",
            "-c",
            "import importlib.util as u, json; print(json.dumps([m for m in "
            "('scikit_build_core', 'nanobind', 'build', 'auditwheel', 'cmake') "
            "if u.find_spec(m)]))",
        ],
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_installed_wheel_analyzes_a_real_log(fresh_venv: Path, tmp_path: Path) -> None:
    script = (
        "import json, sys, sparkprof\n"
        "r = sparkprof.analyze(sys.argv[1])\n"
        "print(json.dumps({'file': sparkprof.__file__, 'native': sparkprof._native.__file__,\n"
        "  'app': r.application.application.id, 'stages': len(r.application.stages),\n"
        "  'rules': [f.rule for f in r.application.findings], 'json': r.json}))\n"
    )
    done = _run(
        fresh_venv, [str(fresh_venv / "bin/python"), "-I", "-c", script, str(REAL_LOG)], tmp_path
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    site = str(fresh_venv / "lib")
    assert answer["file"].startswith(site) and answer["native"].startswith(site), answer["file"]
    assert answer["app"].startswith("app-") and answer["stages"] > 0
    assert "data-skew" in answer["rules"]  # the corpus planted a skewed join in this run

    # Every library the extension loads is the system's base set or inside the wheel.
    ldd = _run(fresh_venv, ["ldd", answer["native"]], tmp_path)
    assert ldd.returncode == 0, ldd.stderr
    for line in ldd.stdout.splitlines():
        name = Path(line.strip().split()[0]).name  # "libx.so.1 => path" or "/lib64/ld-..."
        if SYSTEM_LIBRARIES.match(name):
            continue
        assert "sparkprof.libs" in line, line

    # The console entry point: the native CLI inside the wheel, and a fleet command.
    cli = _run(
        fresh_venv, ["sparkprof", "analyze", str(REAL_LOG), "--format", "json", "-q"], tmp_path
    )
    assert cli.returncode == 0, cli.stderr
    assert cli.stdout == answer["json"]
    store = f"sqlite:///{tmp_path / 'history.sqlite'}"
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / REAL_LOG.name).write_bytes(REAL_LOG.read_bytes())
    collected = _run(
        fresh_venv,
        ["sparkprof", "collect", "--event-log-dir", str(logs), "--store", store, "--json"],
        tmp_path,
    )
    assert collected.returncode == 0, collected.stderr
    jobs = _run(fresh_venv, ["sparkprof", "history", "--store", store, "--json"], tmp_path)
    assert jobs.returncode == 0, jobs.stderr
    [job] = json.loads(jobs.stdout)
    assert job["runs"] == 1
    runs = _run(
        fresh_venv, ["sparkprof", "history", job["job_key"], "--store", store, "--json"], tmp_path
    )
    assert runs.returncode == 0, runs.stderr
    assert [run["app_id"] for run in json.loads(runs.stdout)] == [answer["app"]]
