"""A user-wide install from a clone, as the README says (`uv tool install .`): both commands on the PATH it
gives, working outside any virtual environment of the project. uv itself comes from PyPI into the tools cache
(tests/tools.py), its package cache beside it; everything it installs goes into this test's folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from .conftest import CORPUS, ROOT
from .tools import CACHE, python_tool

pytestmark = pytest.mark.slow  # installs the package and its dependencies

UV = "uv==0.13.9"


def clone_of_this_tree(target: Path) -> Path:
    """The files a clone has (tracked, and new ones not ignored), copied: the install reads nothing else."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def test_uv_tool_install_from_a_clone_puts_eywa_and_eywa_bot_on_the_path(tmp_path: Path) -> None:
    uv = python_tool("uv", UV)
    clone = clone_of_this_tree(tmp_path / "clone")
    home, bin_dir = tmp_path / "home", tmp_path / "home" / ".local" / "bin"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EYWA_", "VIRTUAL_ENV", "UV_", "PYTHON"))}
    env.update(HOME=str(home), UV_TOOL_DIR=str(home / ".local" / "share" / "uv" / "tools"),
               UV_TOOL_BIN_DIR=str(bin_dir), UV_CACHE_DIR=str(CACHE / "uv-cache"), UV_PYTHON_DOWNLOADS="never",
               PATH=f"{bin_dir}:/usr/local/bin:/usr/bin:/bin")
    done = subprocess.run([str(uv), "tool", "install", "--python", sys.executable, str(clone)], env=env,
                          capture_output=True, text=True, timeout=1500)
    assert done.returncode == 0, done.stderr[-2000:]
    for command in ("eywa", "eywa-bot"):
        said = subprocess.run([command, "--version"], env=env, capture_output=True, text=True, timeout=60)
        assert said.stdout == f"{command} {version('eywa')}\n", said.stderr
    env.update(EYWA_PROJECTS_DIR=str(CORPUS / "claude-code-log" / "projects"), EYWA_NOW="2026-12-02")
    ingest = subprocess.run(["eywa", "ingest"], env=env, capture_output=True, text=True, timeout=600)
    assert ingest.returncode == 0 and "30 sessions updated" in ingest.stdout, ingest.stderr
    assert (home / ".eywa" / "index.sqlite3").is_file()  # the installed eywa, its defaults, this HOME
