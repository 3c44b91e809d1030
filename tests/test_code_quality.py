from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .conftest import ROOT


def test_ruff_is_clean() -> None:
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_engine_imports_no_front_end_and_only_core_index_imports_sqlite3() -> None:
    # import-linter reads the real import graph (pyproject.toml [tool.importlinter]), lazy imports included
    result = subprocess.run([sys.executable, "-c", "from importlinter.cli import lint_imports_command; "
                             "lint_imports_command()"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 kept, 0 broken" in result.stdout


def test_readme_test_command_is_what_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = ci.strip().splitlines()[-1]
    assert command in readme
    assert Path(ROOT / ".ci" / "run").stat().st_mode & 0o111
