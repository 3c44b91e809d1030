"""While a full-text index is rebuilt, the pages of its files that the process maps are handed back
(core/index/page_out.py): a large rebuild's merges no longer hold every page they read."""

from __future__ import annotations

import mmap
import os
import sys
from pathlib import Path

import pytest

from eywa.core.index import page_out, text_index
from eywa.core.index.store import Store

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="MADV_PAGEOUT and /proc are Linux's")


def _resident_kb(path: Path) -> int:
    """This process's resident KB of its maps of `path` (/proc/self/smaps)."""
    total, inside = 0, False
    with open("/proc/self/smaps", encoding="utf-8") as smaps:
        for line in smaps:
            head = line.split()
            if head and "-" in head[0] and len(head) >= 5:  # a map's first line
                inside = line.rstrip("\n").endswith(str(path))
            elif inside and head[0] == "Rss:":
                total += int(head[1])
    return total


@linux_only
def test_the_pages_of_a_mapped_index_file_are_handed_back(tmp_path: Path) -> None:
    folder = tmp_path / "index.text_index"
    folder.mkdir()
    segment, outside = folder / "segment.idx", tmp_path / "other.bin"
    for path in (segment, outside):
        with open(path, "wb") as handle:
            handle.write(os.urandom(4 << 20))
            os.fsync(handle.fileno())  # written back: a dirty page is not reclaimed
    with open(segment, "rb") as a, open(outside, "rb") as b, \
            mmap.mmap(a.fileno(), 0, access=mmap.ACCESS_READ) as inside_map, \
            mmap.mmap(b.fileno(), 0, access=mmap.ACCESS_READ) as outside_map:
        assert sum(inside_map[i] + outside_map[i] for i in range(0, 4 << 20, 4096)) >= 0  # every page read
        assert _resident_kb(segment) >= 4000 and _resident_kb(outside) >= 4000
        madvise = page_out._madvise()
        assert madvise is not None
        assert page_out.page_out(folder, madvise) == 1
        assert _resident_kb(segment) < 1000  # handed back
        assert _resident_kb(outside) >= 4000  # a file outside the index's folder is left alone
        assert inside_map[:16] == segment.read_bytes()[:16]  # and read again as it was


def test_a_rebuild_and_an_ingests_staging_page_out_while_tantivy_writes(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    running: list[Path] = []
    started: list[Path] = []

    class Recorded(page_out.Pager):
        def start(self) -> None:
            running.append(self.folder)
            started.append(self.folder)

        def stop(self) -> None:
            if self.folder in running:
                running.remove(self.folder)

    monkeypatch.setattr(page_out, "Pager", Recorded)
    store = Store(tmp_path / "index.sqlite3")
    folder = store.text_index_folder
    with store.transaction():
        store.conn.execute("INSERT INTO fulltext(session_uuid, handoff) VALUES('s', 'text')")
    assert started == []  # a change is applied to the index as it is
    with store.staged_text_index():
        with store.transaction():
            store.conn.execute("INSERT INTO fulltext(session_uuid, handoff) VALUES('t', 'text')")
        assert running == [folder]  # from the writer's opening ...
    assert running == [] and started == [folder]  # ... to its commit
    text_index.reset(store.conn)
    text_index.ensure(store.conn, folder)  # rebuilt from the table
    assert started == [folder] * 2 and running == []
