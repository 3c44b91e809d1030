"""Installed names: every module is `eywa.*`, from the editable install the suite runs on and from a regular one."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import eywa.core

from .conftest import ROOT

pytestmark = pytest.mark.slow  # a regular install of the package

PACKAGES = ("core", "bot", "cli", "claude_code")


def modules() -> list[str]:
    return sorted("eywa." + ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
                  for top in PACKAGES for p in (ROOT / top).rglob("*.py"))


def test_the_editable_install_maps_eywa_to_the_repository_folders() -> None:
    assert Path(eywa.core.__file__).resolve() == ROOT / "core" / "__init__.py"


def test_a_regular_install_holds_every_module_under_eywa(tmp_path: Path) -> None:
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(ROOT)],
                   check=True, capture_output=True, timeout=600)
    # -S: no .pth files, so the editable install's finder cannot answer; the dependencies come from this venv
    code = ("import importlib, sys; sys.path[:0] = sys.argv[1:3]; "
            "print('\\n'.join(importlib.import_module(m).__file__ for m in sys.argv[3:]))")
    done = subprocess.run([sys.executable, "-S", "-c", code, str(site), sysconfig.get_paths()["purelib"], *modules()],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    files = done.stdout.split()
    assert len(files) == len(modules()) and all(Path(f).is_relative_to(site / "eywa") for f in files)
    assert not (site / "core").exists() and not (site / "bot").exists()
