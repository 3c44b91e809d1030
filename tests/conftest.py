"""Shared fixtures: the real corpus beside the project (read in place, never copied)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"


def identity(text: str) -> str:
    return text


def write_jsonl(path: Path, records: list[object], *, trailing_newline: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join(r if isinstance(r, str) else json.dumps(r) for r in records)
    path.write_text(text + ("\n" if trailing_newline else ""), encoding="utf-8")
    return path


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Path]]:
    """An isolated HOME, data directory and projects folder for one test."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    # A developer's real Anthropic key or endpoint must never turn a test into a paid API call.
    for name in ("EYWA_CONFIG", "EYWA_RETRIEVAL__MODE", "EYWA_NOW", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL",
                 "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    data, projects = tmp_path / "data", tmp_path / "projects"
    projects.mkdir()
    monkeypatch.setenv("EYWA_DATA_DIR", str(data))
    monkeypatch.setenv("EYWA_PROJECTS_DIR", str(projects))
    yield {"home": home, "data": data, "projects": projects}
