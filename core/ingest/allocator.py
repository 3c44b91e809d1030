"""glibc's allocator held to fixed bounds for an ingest or a reindex. By default it raises its threshold for
returning freed blocks to the system each time a large block (a long session's text) is freed, and gives each
thread (tantivy's indexing and merging ones) an arena of its own: the ingesting process grew with the sessions it
had read, and a reindex's with the merges of its full-text index."""

from __future__ import annotations

from eywa.core import libc

_M_MMAP_THRESHOLD = -3  # mallopt's parameters, from glibc's malloc.h
_M_ARENA_MAX = -8
MMAP_THRESHOLD = 1024 * 1024  # a larger block (a long session's text) is mapped, and unmapped when freed
ARENA_MAX = 2


def bound_allocator() -> None:
    """Fix the thresholds for this process (and the workers it forks); nothing where glibc is not the allocator."""
    mallopt = libc.function("mallopt")
    if mallopt is None:
        return
    mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    mallopt(_M_ARENA_MAX, ARENA_MAX)
