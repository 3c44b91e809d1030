"""Finds transcript files under every enabled source folder and groups them into sessions, asking each file's
agent (core/sources/plugin.py) where its transcripts are and which session a file belongs to."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from eywa.core.sources import CLAUDE_CODE, Source, agent
from eywa.core.sources.plugin import SessionFiles, SourceFile


def scan_sources(sources: tuple[Source, ...] | list[Source]) -> list[SourceFile]:
    """The transcript files of every enabled source; a folder that does not exist gives none."""
    found: list[SourceFile] = []
    for source in sources:
        if source.enabled:
            found += agent(source.kind).scan(source)
    return found


def scan_files(root: Path, kind: str = CLAUDE_CODE, machine: str = "") -> list[SourceFile]:
    """Every transcript file of agent `kind` under root with its size and mtime: one stat each, nothing read."""
    plugin = agent(kind)
    found: list[SourceFile] = []
    # Strings, not a Path a file: pathlib interns every name it parses, and the table of them stays as large as
    # the most names held at once (about 100 bytes a file found).
    stack: list[tuple[str, tuple[str, ...]]] = [(str(root), ())]
    while stack:
        folder, relative = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            continue  # vanished or unreadable mid-scan: what was found stays valid
        for entry in entries:
            if entry.name.startswith("."):
                continue  # rsync's partial files (`.rsync-partial/`, `.<name>.XXXXXX`): never half a transcript
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append((entry.path, (*relative, entry.name)))
                elif plugin.wanted(entry.name) and entry.is_file():
                    layout = plugin.layout((*relative, entry.name))
                    if layout is None:
                        continue
                    info = entry.stat()
                    found.append(SourceFile(entry.path, info.st_size, info.st_mtime_ns, layout, kind, machine))
            except FileNotFoundError:
                continue
    found.sort(key=lambda f: f.location)
    return found


def file_session(source: SourceFile) -> str | None:
    """The session a file belongs to, where its name does not tell (ingest caches the answer); None when it
    cannot be told."""
    return agent(source.agent).session_of(source)


def group_sessions(files: list[SourceFile], parent_of: Callable[[SourceFile], str | None]) -> dict[str, SessionFiles]:
    """Group files by session id. `parent_of` resolves the session of a file (`file_session`, cached by the
    caller): a subagent file's parent, a file whose name does not hold its session's id.

    Files whose session cannot be told are grouped under their own stem, so nothing is lost.
    """
    sessions: dict[str, SessionFiles] = {}
    spawned: list[tuple[str, SourceFile]] = []  # subagents' runs written as sessions of their own (Codex's)
    for source in files:
        if source.role == "main":
            sid = session_key(source, parent_of)
            if agent(source.agent).spawned(source, sid):
                spawned.append((sid, source))
                continue
            sessions.setdefault(sid, SessionFiles(sid, agent=source.agent, machine=source.machine)).main.append(source)
    for sid, source in spawned:
        sessions.setdefault(sid, SessionFiles(sid, agent=source.agent, machine=source.machine)).subagents.append(source)
    for source in files:
        if source.role == "main":
            continue
        sid = session_key(source, parent_of)
        sessions.setdefault(sid, SessionFiles(sid, agent=source.agent, machine=source.machine)).subagents.append(source)
    return sessions


def session_key(source: SourceFile, parent_of: Callable[[SourceFile], str | None]) -> str:
    """The id of the session `group_sessions` puts the file in."""
    if source.role == "main":
        return agent(source.agent).named_session(source) or parent_of(source) or source.path.stem
    return parent_of(source) or source.path.stem
