"""ruff (lint and format) and mypy --strict over the package, and its modules importing one another
in one direction, as part of the test run."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE_ROOT = Path(__file__).resolve().parents[1]
PACKAGE_SOURCE = PACKAGE_ROOT / "src" / "sparkprof"


def _tool(name: str) -> str:
    # ruff and mypy are in ./python[test], pinned in requirements-lock.txt: missing is a failure,
    # not a skip, so a venv without them cannot pass the suite unchecked.
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        pytest.fail(f"{name} is not installed beside {sys.executable} (pip install ./python[test])")
    return found


@pytest.mark.parametrize(
    "command",
    [
        ["ruff", "check", "src", "tests", "tests_dist"],
        ["ruff", "format", "--check", "src", "tests", "tests_dist"],
        ["mypy"],
    ],
    ids=["ruff-check", "ruff-format", "mypy"],
)
def test_clean(command: list[str]) -> None:
    done = subprocess.run(
        [_tool(command[0]), *command[1:]],
        cwd=PACKAGE_ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_SOURCE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The package's modules ``path`` imports anywhere in it: at module level, inside functions
    and under ``TYPE_CHECKING`` alike (a deferred import is still a circle)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                # `from sparkprof import _native` imports a submodule, not the package's __init__.
                if submodule in modules or alias.name.startswith("_"):
                    found.add(submodule)
                else:
                    found.add(node.module)
    return found & modules


def test_modules_import_in_one_direction() -> None:
    """No import circle between the package's modules (its __init__ included)."""
    paths = {_module_name(path): path for path in PACKAGE_SOURCE.rglob("*.py")}
    graph = {name: _imports(path, set(paths)) - {name} for name, path in paths.items()}

    circles: list[list[str]] = []
    done: set[str] = set()

    def visit(name: str, trail: list[str]) -> None:
        if name in trail:
            circles.append([*trail[trail.index(name) :], name])
            return
        if name in done:
            return
        for imported in sorted(graph[name]):
            visit(imported, [*trail, name])
        done.add(name)

    for name in sorted(graph):
        visit(name, [])
    assert not circles, "import circles: " + "; ".join(" -> ".join(c) for c in circles)
