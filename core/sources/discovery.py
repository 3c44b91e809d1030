"""Finds transcript files under every enabled source folder and groups them into sessions, asking each file's
agent (core/sources/plugin.py) where its transcripts are and which session a file belongs to."""

from __future__ import annotations

import os
from array import array
from collections.abc import Callable, ItemsView, Iterator, MutableMapping, ValuesView
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
    return Groups(files, parent_of)


class Groups(MutableMapping[str, SessionFiles]):
    """The sessions of a list of files, {session id: its files}, held as ranges of the list (an ingest's plan groups
    every file of a large disk at once: a `SessionFiles` with its two lists a session cost over twice as much). Each
    `SessionFiles` is made when asked for; one taken by `[]` is kept, so that changing it holds. Sessions in the
    order they are found: of main files first, then of subagents' runs, then of other files."""

    def __init__(self, files: list[SourceFile], parent_of: Callable[[SourceFile], str | None]) -> None:
        self._files: list[SourceFile | None] = list(files)
        self._number: dict[str, int] = {}  # a session's number, in the order of the mapping
        group = array("q", bytes(8 * len(files)))  # each file's session number
        self._spawned = bytearray(len(files))  # main files that are subagents' runs (Codex's): with the subagents
        spawned: list[tuple[int, str]] = []
        for index, source in enumerate(files):
            if source.role == "main":
                sid = session_key(source, parent_of)
                if agent(source.agent).spawned(source, sid):
                    self._spawned[index] = 1
                    spawned.append((index, sid))  # numbered after every main file's session
                else:
                    group[index] = self._add(sid)
        for index, sid in spawned:
            group[index] = self._add(sid)
        for index, source in enumerate(files):
            if source.role != "main":
                group[index] = self._add(session_key(source, parent_of))
        self._ids = list(self._number)  # by number
        # The files of session n are self._order[self._starts[n]:self._starts[n + 1]], in the list's order.
        self._starts = array("q", bytes(8 * (len(self._number) + 1)))
        for number in group:
            self._starts[number + 1] += 1
        for number in range(len(self._number)):
            self._starts[number + 1] += self._starts[number]
        self._order = array("q", bytes(8 * len(files)))
        filled = array("q", self._starts)
        for index, number in enumerate(group):
            self._order[filled[number]] = index
            filled[number] += 1
        self._alive = bytearray(b"\1" * len(self._number))
        self._count = self._last = len(self._number)  # alive; `popitem`'s next number is below `_last`
        self._taken: dict[str, SessionFiles] = {}  # those taken by `[]`

    def _add(self, sid: str) -> int:
        return self._number.setdefault(sid, len(self._number))

    def _made(self, sid: str, number: int) -> SessionFiles:
        main: list[SourceFile] = []
        spawned: list[SourceFile] = []
        others: list[SourceFile] = []
        for index in self._order[self._starts[number]:self._starts[number + 1]]:
            source = self._files[index]
            assert source is not None
            (others if source.role != "main" else spawned if self._spawned[index] else main).append(source)
        first = (main or spawned or others)[0]
        return SessionFiles(sid, main, spawned + others, agent=first.agent, machine=first.machine)

    def __getitem__(self, sid: str) -> SessionFiles:
        if sid in self._taken:
            return self._taken[sid]
        number = self._number[sid]
        if not self._alive[number]:
            raise KeyError(sid)
        group = self._taken[sid] = self._made(sid, number)
        return group

    def __contains__(self, sid: object) -> bool:
        number = self._number.get(sid) if isinstance(sid, str) else None
        return number is not None and bool(self._alive[number])

    def __setitem__(self, sid: str, group: SessionFiles) -> None:
        raise TypeError("sessions are grouped from the files, not set")

    def __delitem__(self, sid: str) -> None:
        number = self._number[sid]
        if not self._alive[number]:
            raise KeyError(sid)
        self._alive[number] = 0
        self._count -= 1
        self._taken.pop(sid, None)
        for index in self._order[self._starts[number]:self._starts[number + 1]]:
            self._files[index] = None  # let go of, as the session is
        if not self._count:  # emptied (an ingest's plan, as it spools them): nothing more is held
            self._files, self._number, self._ids, self._taken = [], {}, [], {}
            self._spawned, self._alive, self._starts, self._order = bytearray(), bytearray(), array("q"), array("q")
            self._last = 0

    def __iter__(self) -> Iterator[str]:
        return (sid for number, sid in enumerate(self._ids) if self._alive[number])

    def __len__(self) -> int:
        return self._count

    def items(self) -> _Items:
        """Each session with its files, made one at a time as iterated (not kept unless taken by `[]` before)."""
        return _Items(self)

    def values(self) -> _Values:
        return _Values(self)

    def _each(self) -> Iterator[tuple[str, SessionFiles]]:
        for number, sid in enumerate(self._ids):
            if self._alive[number]:
                yield sid, self._taken.get(sid) or self._made(sid, number)

    def popitem(self) -> tuple[str, SessionFiles]:
        """The last session and its files, taken out: its files are let go of by the mapping."""
        while self._last > 0:
            self._last -= 1
            if self._alive[self._last]:
                sid = self._ids[self._last]
                group = self._taken.get(sid) or self._made(sid, self._last)
                del self[sid]
                return sid, group
        raise KeyError("popitem(): no sessions")


def session_key(source: SourceFile, parent_of: Callable[[SourceFile], str | None]) -> str:
    """The id of the session `group_sessions` puts the file in."""
    if source.role == "main":
        return agent(source.agent).named_session(source) or parent_of(source) or source.path.stem
    return parent_of(source) or source.path.stem


class _Items(ItemsView[str, SessionFiles]):
    _mapping: Groups

    def __iter__(self) -> Iterator[tuple[str, SessionFiles]]:
        return self._mapping._each()


class _Values(ValuesView[SessionFiles]):
    _mapping: Groups

    def __iter__(self) -> Iterator[SessionFiles]:
        return (group for _, group in self._mapping._each())
