"""Finds transcript files under every enabled source folder (core/sources) and groups them into sessions.

Claude Code: `<project>/<session>.jsonl` (main), `<project>/agent-<id>.jsonl` (2.0.x subagents, parent named
by the `sessionId` inside), `<project>/<session>/subagents/[workflows/<name>/]agent-<id>.jsonl` with
`agent-<id>.meta.json` (2.1.x). Inline sidechain records (1.0.x) live in the main file itself.
Codex CLI: `sessions/YYYY/MM/DD/rollout-<timestamp>-<uuid>.jsonl[.zst]` and `archived_sessions/`, one file a
session. Gemini CLI: `tmp/<project>/chats/session-<date>-<id8>.jsonl` (or the older `.json`), the full id in
its first line; its subagents' files in `chats/<parent-id>/`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from eywa.core.sources import CLAUDE_CODE, CODEX, GEMINI, Source
from eywa.core.sources.claude_code.reader import peek_fields, read_records

_CODEX_FOLDERS = ("sessions", "archived_sessions")
_CODEX_SUFFIXES = (".jsonl", ".jsonl.zst")
_UUID_CHARS = 36

if TYPE_CHECKING:
    from eywa.core.sources.projects import ProjectNames


# Slots: an ingest holds one of each per file seen, hundreds of thousands on a large disk.
@dataclass(frozen=True, slots=True)
class SourceFile:
    path: Path
    size: int
    mtime_ns: int
    kind: str  # main | agent-file | subagents-dir
    agent: str = CLAUDE_CODE  # the source kind it was found in (core/sources)
    machine: str = ""  # the machine of that source


@dataclass(slots=True)
class SessionFiles:
    session_id: str
    main: list[SourceFile] = field(default_factory=list)
    subagents: list[SourceFile] = field(default_factory=list)
    agent: str = CLAUDE_CODE
    machine: str = ""  # the machine it ran on (core/machines/spokes.py)
    projects: ProjectNames | None = None  # how that machine's projects are named; None: by this machine's folders

    @property
    def files(self) -> list[SourceFile]:
        return self.main + self.subagents



def encode_cwd(cwd: str) -> str:
    """Claude Code's folder name for a working directory: every character but [A-Za-z0-9] becomes '-'."""
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def scan_sources(sources: tuple[Source, ...] | list[Source]) -> list[SourceFile]:
    """The transcript files of every enabled source; a folder that does not exist gives none."""
    found: list[SourceFile] = []
    for source in sources:
        if not source.enabled:
            continue
        if source.kind == CLAUDE_CODE:
            found += scan_files(source.path, machine=source.machine)
        elif source.kind == CODEX:
            for folder in _CODEX_FOLDERS:
                found += scan_files(source.path / folder, CODEX, source.machine)
        elif source.kind == GEMINI:
            found += scan_files(source.path / "tmp", GEMINI, source.machine)
    return found


def _wanted(name: str, agent: str) -> bool:
    if agent == CODEX:
        return name.startswith("rollout-") and name.endswith(_CODEX_SUFFIXES)
    if agent == GEMINI:
        return name.endswith((".jsonl", ".json"))
    return name.endswith(".jsonl")


def scan_files(root: Path, agent: str = CLAUDE_CODE, machine: str = "") -> list[SourceFile]:
    """Every transcript file of `agent` under root with its size and mtime: one stat each, nothing read."""
    found: list[SourceFile] = []
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            continue  # vanished or unreadable mid-scan: what was found stays valid
        for entry in entries:
            if entry.name.startswith("."):
                continue  # rsync's partial files (`.rsync-partial/`, `.<name>.XXXXXX`): never half a transcript
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(folder / entry.name)
                elif _wanted(entry.name, agent) and entry.is_file():
                    path = folder / entry.name  # shares its folder's parts: one path a file, many files
                    layout = _layout(path, root, agent)
                    if layout is None:
                        continue
                    info = entry.stat()
                    found.append(SourceFile(path, info.st_size, info.st_mtime_ns, layout, agent, machine))
            except FileNotFoundError:
                continue
    found.sort(key=lambda f: str(f.path))
    return found


def _layout(path: Path, root: Path, agent: str = CLAUDE_CODE) -> str | None:
    """main | agent-file | subagents-dir; None for a file of the folder that is no transcript."""
    parts = path.relative_to(root).parts
    if agent == CODEX:
        return "main"
    if agent == GEMINI:  # <project>/chats/session-*.jsonl, <project>/chats/<parent-id>/<agent-id>.jsonl
        if len(parts) == 3 and parts[1] == "chats" and parts[2].startswith("session-"):
            return "main"
        if len(parts) == 4 and parts[1] == "chats" and parts[3].endswith(".jsonl"):
            return "subagents-dir"
        return None
    if "subagents" in parts[:-1]:
        return "subagents-dir"
    if path.name.startswith("agent-"):
        return "agent-file"
    return "main"


def codex_session_id(path: Path) -> str:
    """`rollout-2026-12-01T09-46-38-<uuid>.jsonl[.zst]` -> the uuid (the file's name when it holds none)."""
    stem = path.name.removesuffix(".zst").removesuffix(".jsonl")
    return stem[-_UUID_CHARS:] if len(stem) > _UUID_CHARS + len("rollout-") else stem


def file_session(source: SourceFile) -> str | None:
    """The session a file belongs to, where its name does not tell (ingest caches the answer); None when it
    cannot be told."""
    if source.agent == CODEX:  # a subagent's rollout names the session that spawned it
        meta = next(read_records(source.path), None) if source.kind == "main" else None
        payload = meta.get("payload") if isinstance(meta, dict) else None
        parent = payload.get("parent_thread_id") if isinstance(payload, dict) else None
        return parent if isinstance(parent, str) and parent else codex_session_id(source.path)
    if source.agent == GEMINI:
        if source.kind == "subagents-dir":
            return source.path.parent.name
        return peek_fields(source.path, ("sessionId",), max_lines=1).get("sessionId")
    if source.kind == "main":
        return source.path.stem
    return subagent_parent(source)


def subagent_parent(source: SourceFile) -> str | None:
    """The parent session id of a Claude Code subagent file; None when it cannot be told."""
    if source.kind == "subagents-dir":
        parts = source.path.parts
        index = len(parts) - 1 - parts[::-1].index("subagents")
        return parts[index - 1] if index >= 1 else None
    return peek_fields(source.path, ("sessionId",)).get("sessionId")


def read_meta(source: SourceFile) -> dict:
    """The `.meta.json` beside a 2.1.x subagent file (agentType, description), or {}."""
    meta_path = source.path.with_suffix(".meta.json")
    try:
        import orjson

        value = orjson.loads(meta_path.read_bytes())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def group_sessions(files: list[SourceFile], parent_of: Callable[[SourceFile], str | None]) -> dict[str, SessionFiles]:
    """Group files by session id. `parent_of` resolves the session of a file whose name does not tell
    (`file_session`, cached by the caller): a subagent file's parent, a Gemini CLI file's id.

    Files whose session cannot be told are grouped under their own stem, so nothing is lost.
    """
    sessions: dict[str, SessionFiles] = {}
    spawned: list[tuple[str, SourceFile]] = []  # Codex subagents' rollouts: one file each, like their parent's
    for source in files:
        if source.kind == "main":
            sid = source.path.stem if source.agent == CLAUDE_CODE else parent_of(source) or source.path.stem
            if source.agent == CODEX and sid != codex_session_id(source.path):
                spawned.append((sid, source))
                continue
            sessions.setdefault(sid, SessionFiles(sid, agent=source.agent, machine=source.machine)).main.append(source)
    for sid, source in spawned:
        sessions.setdefault(sid, SessionFiles(sid, agent=source.agent, machine=source.machine)).subagents.append(source)
    for source in files:
        if source.kind == "main":
            continue
        sid = parent_of(source) or source.path.stem
        sessions.setdefault(sid, SessionFiles(sid, agent=source.agent, machine=source.machine)).subagents.append(source)
    return sessions
