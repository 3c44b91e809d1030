"""Finds transcript files under the Claude projects folder and groups them into sessions.

Layouts: `<project>/<session>.jsonl` (main), `<project>/agent-<id>.jsonl` (2.0.x subagents, parent named
by the `sessionId` inside), `<project>/<session>/subagents/[workflows/<name>/]agent-<id>.jsonl` with
`agent-<id>.meta.json` (2.1.x). Inline sidechain records (1.0.x) live in the main file itself.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from core.transcript_reader import peek_fields

if TYPE_CHECKING:
    from core.spokes import Source


@dataclass(frozen=True)
class SourceFile:
    path: Path
    size: int
    mtime_ns: int
    kind: str  # main | agent-file | subagents-dir


@dataclass
class SessionFiles:
    session_id: str
    main: list[SourceFile] = field(default_factory=list)
    subagents: list[SourceFile] = field(default_factory=list)
    source: Source | None = None  # the folder it was found in: its machine, how its projects are named

    @property
    def files(self) -> list[SourceFile]:
        return self.main + self.subagents

    def merge(self, other: SessionFiles) -> None:
        """Take `other`'s files too (the same session found in another folder)."""
        if other is not self:
            self.main += other.main
            self.subagents += other.subagents


def scan_files(root: Path) -> list[SourceFile]:
    """Every `*.jsonl` under root with its size and mtime: one stat each, nothing read."""
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
                    stack.append(Path(entry.path))
                elif entry.name.endswith(".jsonl") and entry.is_file():
                    info = entry.stat()
                    path = Path(entry.path)
                    found.append(SourceFile(path, info.st_size, info.st_mtime_ns, _layout(path, root)))
            except FileNotFoundError:
                continue
    found.sort(key=lambda f: str(f.path))
    return found


def _layout(path: Path, root: Path) -> str:
    parts = path.relative_to(root).parts
    if "subagents" in parts[:-1]:
        return "subagents-dir"
    if path.name.startswith("agent-"):
        return "agent-file"
    return "main"


def subagent_parent(source: SourceFile) -> str | None:
    """The parent session id of a subagent file; None when it cannot be told."""
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
    """Group files by session id. `parent_of` resolves a subagent file's parent (cached by the caller).

    Subagent files with no resolvable parent are grouped under their own stem, so nothing is lost.
    """
    sessions: dict[str, SessionFiles] = {}
    for source in files:
        if source.kind == "main":
            sid = source.path.stem
            sessions.setdefault(sid, SessionFiles(sid)).main.append(source)
    for source in files:
        if source.kind == "main":
            continue
        sid = parent_of(source) or source.path.stem
        sessions.setdefault(sid, SessionFiles(sid)).subagents.append(source)
    return sessions
