"""The sessions an ingest will read, in order, kept in a temporary file: memory holds 16 bytes a session, so the
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
    """Sessions written in any order (`add`), read in the order `ordered` gives them; each read back from the file
    when asked for (a new object each time)."""

    def __init__(self, projects: Mapping[str, ProjectNames]) -> None:
        self._projects = projects  # one object a machine, attached again when read: not pickled with each session
        self._file = tempfile.TemporaryFile()
        self.spans = array("q")  # each session's record as its start and its length in the file, in reading order

    def add(self, group: SessionFiles) -> None:
        """Write `group` after those added before (by any process that shares the file)."""
        record = pickle.dumps(dataclasses.replace(group, projects=None), pickle.HIGHEST_PROTOCOL)
        self.spans.extend((self._file.tell(), len(record)))
        self._file.write(record)

    def ordered(self, order: Iterable[int]) -> array[int]:
        """The sessions added, read in `order` (their numbers in the order added); the spans, for `spans` of the
        process that reads."""
        self._file.flush()
        added = self.spans
        self.spans = array("q")
        for number in order:
            self.spans.extend(added[2 * number:2 * number + 2])
        return self.spans

    def __len__(self) -> int:
        return len(self.spans) // 2

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
        start, length = self.spans[2 * index], self.spans[2 * index + 1]
        group: SessionFiles = pickle.loads(os.pread(self._file.fileno(), length, start))
        group.projects = self._projects.get(group.machine)
        return group

    def close(self) -> None:
        self._file.close()
