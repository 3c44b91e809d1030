"""One error base: every exception class Eywa defines for a person to read is an `EywaError`, so a front end
catches that one name (as the CLI does)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from eywa.cli.main import main
from eywa.core.errors import EywaError, PushError
from tests.conftest import ROOT

PACKAGES = {"core": "eywa.core", "cli": "eywa.cli", "bot": "eywa.bot", "claude_code": "eywa.claude_code"}


def _exception_classes() -> list[tuple[str, str]]:
    """(module, class) of every public class whose name says it is an error, as the source defines them."""
    found = []
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            module = ".".join([package, *(p for p in parts if p != "__init__")])
            for node in tree.body:
                bases = [ast.unparse(b) for b in node.bases] if isinstance(node, ast.ClassDef) else []
                if bases and not node.name.startswith("_") and any(
                        b.endswith(("Error", "Exception", "Stop", "Found", "Id", "Failed", "Failure", "Answer",
                                    "Mark", "Rejected", "Session", "Refused", "Token")) for b in bases):
                    found.append((module, node.name))
    return found


def test_every_exception_eywa_defines_is_an_eywa_error() -> None:
    classes = _exception_classes()
    assert len(classes) >= 20, classes  # the scan found them
    outside = []
    for module, name in classes:
        cls = getattr(importlib.import_module(module), name)
        if isinstance(cls, type) and issubclass(cls, BaseException) and not issubclass(cls, EywaError):
            outside.append(f"{module}.{name}")
    assert not outside


def test_the_cli_reports_any_eywa_error_as_a_message_and_exit_1(monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str],
                                                                 tmp_path: Path) -> None:
    from eywa.cli import main as cli_main

    def push(*_: object) -> int:
        raise PushError("the hub at 127.0.0.1 refused: check hub.url")

    monkeypatch.setenv("EYWA_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setitem(cli_main._COMMANDS, "stats", push)
    assert main(["stats"]) == 1
    assert "the hub at 127.0.0.1 refused" in capsys.readouterr().err
