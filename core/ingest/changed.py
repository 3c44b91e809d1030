"""Which of the files an ingest found are new or changed since their recorded state, asked by path in its plan."""

from __future__ import annotations

from collections.abc import Container

from eywa.core.sources.plugin import SourceFile


class ChangedFiles(Container[str]):
    """The paths changed among the files scanned, held as the smaller set: the changed paths, or the others. A first
    ingest finds every file changed and holds an empty set, not one of every path beside the plan's groups. Asked only
    about paths of the files scanned."""

    def __init__(self, scanned: list[SourceFile], changed: set[str]) -> None:
        self._count = len(changed)
        self._complement = 2 * len(changed) > len(scanned)
        self._paths = {f.location for f in scanned if f.location not in changed} if self._complement else changed

    def __contains__(self, path: object) -> bool:
        return (path in self._paths) != self._complement

    def __len__(self) -> int:
        """How many of the files scanned changed."""
        return self._count
