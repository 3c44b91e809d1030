"""The type check: mypy (pyproject.toml [tool.mypy]) finds no error in the installed package, the engine and
every front end. It reads the package where the import system finds it, so the package-dir mapping hides no
module: each `eywa.<part>` is laid out under one `eywa/` folder as installed, and mypy is pointed there."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

PARTS = ("eywa.core", "eywa.cli", "eywa.bot", "eywa.claude_code")


def _installed_tree(into: Path) -> Path:
    """`into/eywa/<part>` linked to where each installed part lives (the checkout for an editable install,
    site-packages otherwise)."""
    package = into / "eywa"
    package.mkdir()
    for name in PARTS:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.submodule_search_locations, f"{name} is not installed"
        (package / name.split(".")[1]).symlink_to(Path(list(spec.submodule_search_locations)[0]),
                                                  target_is_directory=True)
    return into


@pytest.mark.slow
def test_mypy_finds_no_error_in_the_installed_package(tmp_path: Path) -> None:
    tree = _installed_tree(tmp_path)
    packages = [arg for name in PARTS for arg in ("-p", name)]
    done = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                           "--cache-dir", str(tmp_path / ".mypy_cache"), "--python-executable", sys.executable,
                           *packages], cwd=tree, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    checked = int(done.stdout.rsplit(" in ", 1)[1].split()[0])
    assert checked >= 100, done.stdout  # every module was found, none hidden by the package-dir mapping
