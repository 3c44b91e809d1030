"""While a full-text index is rebuilt, the pages of its files that the process maps are handed back
(core/index/page_out.py): a large rebuild's merges no longer hold every page they read."""

from __future__ import annotations

import mmap
import os
import sys
import time
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


class _Recorded(page_out.Pager):
    """A pager that records when it would run: `running` while started, each start in `started`."""

    running: list[Path] = []
    started: list[Path] = []

    def start(self) -> None:
        self.running.append(self.folder)
        self.started.append(self.folder)

    def stop(self) -> None:
        if self.folder in self.running:
            self.running.remove(self.folder)


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> type[_Recorded]:
    monkeypatch.setattr(_Recorded, "running", [])
    monkeypatch.setattr(_Recorded, "started", [])
    monkeypatch.setattr(page_out, "Pager", _Recorded)
    return _Recorded


def test_a_rebuild_and_a_large_staging_page_out_while_tantivy_writes(tmp_path: Path, recorded: type[_Recorded]) -> None:
    store = Store(tmp_path / "index.sqlite3")
    folder = store.text_index_folder
    with store.transaction():
        store.conn.execute("INSERT INTO fulltext(session_uuid, handoff) VALUES('s', 'text')")
    assert recorded.started == []  # a change is applied to the index as it is
    with store.staged_text_index(paging_out=True):
        with store.transaction():
            store.conn.execute("INSERT INTO fulltext(session_uuid, handoff) VALUES('t', 'text')")
        assert recorded.running == [folder]  # from the writer's opening ...
    assert recorded.running == [] and recorded.started == [folder]  # ... to its commit
    with store.staged_text_index():  # a small ingest's: the index's pages stay in the page cache for searches
        with store.transaction():
            store.conn.execute("INSERT INTO fulltext(session_uuid, handoff) VALUES('u', 'text')")
    assert recorded.started == [folder]
    text_index.reset(store.conn)
    text_index.ensure(store.conn, folder)  # rebuilt from the table
    assert recorded.started == [folder] * 2 and recorded.running == []


def test_a_rebuild_that_fails_while_staging_stops_paging_out(tmp_path: Path, recorded: type[_Recorded],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store(tmp_path / "index.sqlite3")
    with store.transaction():
        store.conn.execute("INSERT INTO fulltext(session_uuid, handoff) VALUES('s', 'text')")
    text_index.reset(store.conn)

    def failing(rid: int, *columns: object) -> object:
        raise ValueError("cannot index")

    monkeypatch.setattr(text_index, "_document", failing)
    with pytest.raises(ValueError, match="cannot index"):
        text_index.ensure(store.conn, store.text_index_folder)
    assert recorded.started == [store.text_index_folder] and recorded.running == []


def test_an_ingest_pages_out_only_when_it_reads_many_bytes(env: dict[str, Path], recorded: type[_Recorded],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from eywa.core.api import Eywa
    from eywa.core.config.settings import load_settings
    from eywa.core.ingest import run

    from .conftest import link_corpus

    link_corpus(env["projects"], 3)
    read = sum(path.stat().st_size for path in env["projects"].rglob("*.jsonl"))
    eywa = Eywa(load_settings())
    monkeypatch.setattr(run, "PAGE_OUT_BYTES", read + 1)
    first = eywa.ingest()
    assert first.sessions_updated == 3 and recorded.started == []
    monkeypatch.setattr(run, "PAGE_OUT_BYTES", read)
    assert eywa.ingest(force=frozenset(first.updated)).sessions_updated == 3
    assert recorded.started == [eywa.store.text_index_folder]


def _anonymous_kb() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("RssAnon:"))


@linux_only
def test_a_pager_hands_back_what_the_allocator_holds_free(tmp_path: Path) -> None:
    import ctypes

    c = ctypes.CDLL(None)
    c.malloc.restype, c.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    c.free.argtypes = [ctypes.c_void_p]
    blocks = [c.malloc(4096) for _ in range(16_384)]  # 64 MB in small blocks, as a merge's buffers
    for block in blocks:
        ctypes.memset(block, 1, 4096)
    kept = c.malloc(4096)  # a block still in use above them: glibc keeps the freed ones below
    for block in blocks:
        c.free(block)
    held = _anonymous_kb()
    pager = page_out.Pager(tmp_path)
    pager.start()
    try:
        deadline = time.monotonic() + 10
        while _anonymous_kb() > held - 32_000 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        pager.stop()
        c.free(kept)
    assert _anonymous_kb() <= held - 32_000


def test_a_rebuild_lets_go_of_sqlites_page_caches_before_tantivy_builds(tmp_path: Path) -> None:
    store = Store(tmp_path / "index.sqlite3")
    with store.transaction():
        store.conn.execute("INSERT INTO fulltext(session_uuid, handoff) VALUES('s', 'text')")
    text_index.reset(store.conn)
    run: list[str] = []
    store.conn.set_trace_callback(run.append)
    text_index.ensure(store.conn, store.text_index_folder)
    staged = next(i for i, sql in enumerate(run) if "FROM text_index_queue WHERE seq" in sql)
    assert "PRAGMA shrink_memory" in run[:staged]
