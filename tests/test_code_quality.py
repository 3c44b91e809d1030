from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .conftest import ROOT


def test_ruff_is_clean() -> None:
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "core", "bot", "tests", "bench"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_core_never_imports_bot() -> None:
    offenders = [p.name for p in (ROOT / "core").glob("*.py")
                 if "from bot" in p.read_text() or "import bot" in p.read_text()]
    assert offenders == []


def test_readme_test_command_is_what_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = ci.strip().splitlines()[-1]
    assert command in readme
    assert Path(ROOT / ".ci" / "run").stat().st_mode & 0o111
