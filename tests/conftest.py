"""Shared fixtures: the real corpus beside the project (read in place, never copied)."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from eywa.core.index.store import Store
from eywa.core.sources import AGENTS

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
pytest_plugins = ["tests.claude_harness"]  # the real-CLI fixtures: claude_code, scripted_model


_LOOPBACK = ("127.", "::1", "localhost")
# The variables that move an agent's folder (CODEX_HOME, ...): a developer's own never reach a test.
AGENT_HOMES = tuple(name for entry in AGENTS for name in entry.home.env)


@pytest.fixture(autouse=True, scope="session")
def _only_loopback() -> Iterator[None]:
    """Every test talks to 127.0.0.1 only: a connection anywhere else fails the test that makes it
    (in this process; child processes are pointed at the fakes by their environment)."""
    connect, connect_ex = socket.socket.connect, socket.socket.connect_ex

    def refuse_remote(sock: socket.socket, address: object) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple) \
                and not str(address[0]).startswith(_LOOPBACK):
            raise ConnectionRefusedError(f"tests reach 127.0.0.1 only, not {address[0]}")

    def guarded_connect(sock: socket.socket, address: object) -> None:
        refuse_remote(sock, address)
        connect(sock, address)

    def guarded_connect_ex(sock: socket.socket, address: object) -> int:
        refuse_remote(sock, address)
        return connect_ex(sock, address)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", guarded_connect)
        patch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
        yield


def identity(text: str) -> str:
    return text


def json_strings(value: object) -> Iterator[str]:
    """Every string inside a JSON value (for scans of request bodies and corpus records)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from json_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from json_strings(item)


def link_corpus(projects: Path, limit: int | None = None) -> list[Path]:
    """Symlink real transcripts of the entire tree into a writable projects folder (read in place)."""
    sources = sorted((CORPUS / "entire" / "projects").glob("*/*.jsonl"))[:limit]
    for source in sources:
        target = projects / source.parent.name / source.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(source)
    return sources


AGENT_FIXTURES = ROOT / "tests" / "fixtures" / "agents"
AGENT_SESSIONS = 6  # what the fixtures ingest to: a Claude Code session with its two runs, 3 Codex, 2 Gemini CLI


def copy_agent_fixtures(root: Path, projects: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """The committed Codex CLI and Gemini CLI transcripts (tests/agent_transcripts.py) copied under `root` as
    those agents' folders, configured as sources (EYWA_SOURCES), and their Claude Code session into `projects`."""
    import shutil

    codex, gemini = root / "codex-home", root / "gemini-home"
    # Copied, not copy2'd: the checkout's mtimes follow git's write order, and a Claude Code session must be
    # written after the runs it started (as it is for real) for ingest to link runs that came first.
    shutil.copytree(AGENT_FIXTURES / "codex", codex, copy_function=shutil.copy)
    shutil.copytree(AGENT_FIXTURES / "gemini", gemini, copy_function=shutil.copy)
    shutil.copytree(AGENT_FIXTURES / "claude", projects, dirs_exist_ok=True, copy_function=shutil.copy)
    monkeypatch.setenv("EYWA_SOURCES", json.dumps([{"kind": "codex", "path": str(codex)},
                                                   {"kind": "gemini", "path": str(gemini)}]))
    return {"codex": codex, "gemini": gemini}


def write_jsonl(path: Path, records: list[object], *, trailing_newline: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join(r if isinstance(r, str) else json.dumps(r) for r in records)
    path.write_text(text + ("\n" if trailing_newline else ""), encoding="utf-8")
    return path


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """An empty index in a temporary folder."""
    s = Store(tmp_path / "i.db")
    yield s
    s.close()


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Path]]:
    """An isolated HOME, data directory and projects folder for one test."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    # A developer's real Anthropic key or endpoint must never turn a test into a paid API call.
    # The machine's own Codex and Gemini CLI folders stay out of it (their defaults follow HOME, or these).
    for name in ("EYWA_CONFIG", "EYWA_RETRIEVAL__MODE", "EYWA_NOW", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL",
                 "ANTHROPIC_AUTH_TOKEN", "EYWA_SOURCES", *AGENT_HOMES):
        monkeypatch.delenv(name, raising=False)
    data, projects = tmp_path / "data", tmp_path / "projects"
    projects.mkdir()
    monkeypatch.setenv("EYWA_DATA_DIR", str(data))
    monkeypatch.setenv("EYWA_PROJECTS_DIR", str(projects))
    yield {"home": home, "data": data, "projects": projects}


def clean_bot_env(mp: pytest.MonkeyPatch, home: Path, now: str) -> None:
    """A process environment with no Eywa, Anthropic, OpenAI or Telegram settings of the machine's own,
    HOME in a temporary folder and "now" pinned: a bot under test sees only what the test gives it."""
    for name in list(os.environ):
        if name.startswith(("EYWA_", "ANTHROPIC_", "OPENAI_")) or name in ("TELEGRAM_BOT_TOKEN", *AGENT_HOMES):
            mp.delenv(name)
    mp.setenv("HOME", str(home))
    mp.setenv("EYWA_NOW", now)
