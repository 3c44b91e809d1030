"""The sessions an ingest will read, in order, kept in a temporary file: memory holds 8 bytes a session, so the
queue of a first ingest of a large disk costs no more memory than one of a few sessions. The worker processes
(core/ingest/prepare.py) inherit the open file and read their sessions from it too."""

from __future__ import annotations

import dataclasses
import os
import pickle
import tempfile
from array import array
from collections.abc import Iterable, Mapping, Sequence
from typing import overload

from eywa.core.sources.plugin import SessionFiles
from eywa.core.sources.projects import ProjectNames


class SessionSpool(Sequence[SessionFiles]):
    """`groups` in their order; each read back from the file when asked for (a new object each time)."""

    def __init__(self, projects: Mapping[str, ProjectNames]) -> None:
        self._projects = projects  # one object a machine, attached again when read: not pickled with each session
        self._file = tempfile.TemporaryFile()
        self.ends = array("q", [0])  # the byte offsets where each session's record ends

    def fill(self, groups: Iterable[SessionFiles]) -> array[int]:
        """Write `groups` (by any process that shares the file); the offsets, for `ends` of the process that reads."""
        for group in groups:
            self._file.write(pickle.dumps(dataclasses.replace(group, projects=None), pickle.HIGHEST_PROTOCOL))
            self.ends.append(self._file.tell())
        self._file.flush()
        return self.ends

    def __len__(self) -> int:
        return len(self.ends) - 1

    @overload
    def __getitem__(self, index: int) -> SessionFiles: ...

    @overload
    def __getitem__(self, index: slice) -> list[SessionFiles]: ...

    def __getitem__(self, index: int | slice) -> SessionFiles | list[SessionFiles]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if not -len(self) <= index < len(self):
            raise IndexError(index)
        index %= len(self)
        start = self.ends[index]
        group: SessionFiles = pickle.loads(os.pread(self._file.fileno(), self.ends[index + 1] - start, start))
        group.projects = self._projects.get(group.machine)
        return group

    def close(self) -> None:
        self._file.close()
