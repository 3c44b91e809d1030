"""Finds transcript files under every enabled source folder and groups them into sessions, asking each file's
agent (core/sources/plugin.py) where its transcripts are and which session a file belongs to."""

from __future__ import annotations

import os
from array import array
from collections.abc import Callable, Iterator, MutableMapping
from itertools import accumulate
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


def group_sessions(files: list[SourceFile], parent_of: Callable[[SourceFile], str | None]) -> Groups:
    """Group files by session id. `parent_of` resolves the session of a file (`file_session`, cached by the
    caller): a subagent file's parent, a file whose name does not hold its session's id.

    Files whose session cannot be told are grouped under their own stem, so nothing is lost.
    """
    return Groups(files, [session_key(source, parent_of) for source in files])


_GONE = SourceFile("", 0, 0, "")  # the place of a file let go of


class Groups(MutableMapping[str, SessionFiles]):
    """{session id: its files} of the files found, `sessions[i]` the session of `files[i]`: one list of the files,
    each session's together, with its bounds in it; a `SessionFiles` is made when asked for (a plan groups every file
    of a large disk at once, and a `SessionFiles` with its two lists a session cost over twice as much). Sessions in
    the order they are found: of main files first, then of subagents' runs, then of other files. A session taken out
    lets go of its files; one set anew (a run linked to it) is kept as given."""

    def __init__(self, files: list[SourceFile], sessions: list[str]) -> None:
        # Each file's part of its session: 0 its main files, 1 main files that are subagents' runs (Codex's), 2 others
        kind = bytes(2 if f.role != "main" else agent(f.agent).spawned(f, sid)
                     for f, sid in zip(files, sessions, strict=True))
        visited = array("q", (i for k in range(3) for i in range(len(files)) if kind[i] == k))
        self._number: dict[str, int] = {}  # each session's number, in the order visited
        for i in visited:
            self._number.setdefault(sessions[i], len(self._number))

        def part(i: int) -> int:  # session n's main files are part 2n, its subagents' 2n + 1
            return 2 * self._number[sessions[i]] + (kind[i] > 0)

        # A counting sort, each part's files in the order visited: part p is _files[_bounds[p]:_bounds[p + 1]].
        self._bounds = array("q", bytes(8 * (2 * len(self._number) + 1)))
        for i in visited:
            self._bounds[part(i) + 1] += 1
        self._bounds = array("q", accumulate(self._bounds))
        free = array("q", self._bounds)  # each part's next place
        self._files = [_GONE] * len(files)
        for i in visited:
            self._files[free[part(i)]] = files[i]
            free[part(i)] += 1
        self._kept: dict[str, SessionFiles] = {}  # sessions set anew

    def __getitem__(self, sid: str) -> SessionFiles:
        return self._kept[sid] if sid in self._kept else self._made(sid, self._number[sid])

    def __contains__(self, sid: object) -> bool:
        return sid in self._number  # `Mapping`'s would make the session's record to answer

    def __setitem__(self, sid: str, group: SessionFiles) -> None:
        if sid not in self._number:
            raise KeyError(f"{sid}: sessions are grouped from the files, not added")
        self._kept[sid] = group

    def __delitem__(self, sid: str) -> None:
        self._let_go(self._number.pop(sid))
        self._kept.pop(sid, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._number)

    def __len__(self) -> int:
        return len(self._number)

    def popitem(self) -> tuple[str, SessionFiles]:
        """The last session and its files, taken out (`MutableMapping`'s takes the first: a scan of the dict's emptied
        front each time)."""
        sid, n = self._number.popitem()
        group = self._kept.pop(sid, None) or self._made(sid, n)
        self._let_go(n)
        return sid, group

    def _made(self, sid: str, n: int) -> SessionFiles:
        start, split, end = self._bounds[2 * n:2 * n + 3]
        main, subagents = self._files[start:split], self._files[split:end]
        first = (main or subagents)[0]
        return SessionFiles(sid, main, subagents, agent=first.agent, machine=first.machine)

    def _let_go(self, n: int) -> None:
        start, _, end = self._bounds[2 * n:2 * n + 3]
        self._files[start:end] = [_GONE] * (end - start)
        if not self._number:  # emptied (an ingest's plan, as it spools them): nothing more is held
            self._files, self._bounds = [], array("q")


def session_key(source: SourceFile, parent_of: Callable[[SourceFile], str | None]) -> str:
    """The id of the session `group_sessions` puts the file in."""
    if source.role == "main":
        return agent(source.agent).named_session(source) or parent_of(source) or source.path.stem
    return parent_of(source) or source.path.stem
