"""While tantivy writes the full-text index, the pages of its files that this process maps are handed back to the
kernel every moment: a merge reads its input segments through maps, and each page it read stayed counted in the
process's memory until the merge ended, most of a large reindex's peak (bench/RESULTS.md, issue 29). MADV_PAGEOUT
only reclaims what no other process maps, and a page needed again is read again, so nothing changes but the memory
held. Each pass also hands back the pages glibc's allocator holds free (`malloc_trim`): a merge frees its buffers
amid blocks still in use, which glibc otherwise keeps. Linux only; elsewhere nothing is done."""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable
from pathlib import Path

from eywa.core import libc

Madvise = Callable[[int, int, int], int]  # madvise(2): address, length, advice
Trim = Callable[[int], int]  # malloc_trim(3): the bytes to leave at the heap's top
_MADV_PAGEOUT = 21  # from the kernel's mman-common.h (Linux 5.4 and later)
EVERY_SECONDS = 0.25


def _madvise() -> Madvise | None:
    return libc.function("madvise", ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)


def _malloc_trim() -> Trim | None:
    return libc.function("malloc_trim", ctypes.c_size_t)


def page_out(folder: Path, madvise: Madvise) -> int:
    """Advise the kernel to reclaim the pages of this process's maps of files in `folder`; how many maps."""
    inside = f" {folder}/"
    found = 0
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                if inside in line:
                    start, end = (int(bound, 16) for bound in line.split(maxsplit=1)[0].split("-"))
                    # A map gone meanwhile fails or advises another range: harmless, as reclaiming loses nothing.
                    madvise(start, end - start, _MADV_PAGEOUT)
                    found += 1
    except OSError:
        pass
    return found


class Pager:
    """`page_out(folder)` and `malloc_trim` every EVERY_SECONDS on a thread of its own, from `start` to `stop`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._madvise = _madvise()
        self._trim = _malloc_trim()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._madvise is None or self._thread is not None:
            return
        self._done.clear()
        self._thread = threading.Thread(target=self._run, name="eywa-page-out", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self._done.set()
            self._thread.join()
            self._thread = None

    def _run(self) -> None:
        assert self._madvise is not None  # start() runs the thread only when there is one
        while not self._done.wait(EVERY_SECONDS):
            if self._trim is not None:
                self._trim(0)
            page_out(self.folder, self._madvise)
