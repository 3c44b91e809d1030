"""A rebuild (`Store.rebuilding`, what `eywa reindex` writes through) leaves the index exactly as storing the same
handoffs one by one does, and the counts the store keeps stay in step with the rows either way."""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path

import pytest

from eywa.core.handoffs.model import Handoff
from eywa.core.index import readonly, text_index
from eywa.core.index.store import Store


def _handoff(i: int, *, day: int = 0, substance: int = 2) -> Handoff:
    return Handoff(short_id=f"s{i:07d}", session_id=f"s{i:07d}-full", date=dt.date(2026, 1, 1) + dt.timedelta(
        days=(i * 5 + day) % 90), duration=f"{i % 300}m", headline=f"Headline {i}",
        projects=[f"proj{i % 3}"], keywords=[f"kw{i % 7}", f"kw{i % 11}-x", "Shared"], substance=substance,
        what_happened=[f"did {i}"])


def _contents(conn: sqlite3.Connection) -> dict[str, object]:
    """Every row of the tables a rebuild writes, postings' blocks as sets of records, rowids left out."""
    def rows(sql: str) -> list[tuple]:
        return sorted(conn.execute(sql).fetchall())

    blocks = {}
    for kind, term, week, docs in conn.execute("SELECT kind, term, week, docs FROM term_blocks"):
        # A record names the handoff's rowid: named here by its session instead.
        records = {docs[at + 1:at + 25] for at in range(0, len(docs), 25)}
        blocks[(kind, term, week)] = sorted(
            (conn.execute("SELECT session_uuid FROM handoffs WHERE rowid = ?", (int(r[:8], 16),)).fetchone()[0],
             r[8:]) for r in records)
    return {
        "handoffs": rows("SELECT session_uuid, short_id, date, duration_min, headline, projects, keywords, substance,"
                         " path, body, origin, extractor FROM handoffs"),
        "fulltext": rows("SELECT f.session_uuid, f.handoff, h.session_uuid FROM fulltext AS f"
                         " JOIN handoffs AS h ON h.rowid = f.id"),
        "project_index": rows("SELECT * FROM project_index"), "keyword_index": rows("SELECT * FROM keyword_index"),
        "keyword_df": rows("SELECT * FROM keyword_df"), "project_df": rows("SELECT * FROM project_df"),
        "handoff_counts": rows("SELECT * FROM handoff_counts WHERE n > 0"), "blocks": blocks,
        "bounds": rows("SELECT key, value FROM meta WHERE key LIKE 'max_%'"),
        "schema": rows("SELECT type, name FROM sqlite_master WHERE type IN ('trigger', 'index')"),
    }


def _searched(store: Store) -> dict[str, list[tuple[str, float]]]:
    """What the full-text index finds for a few words and keywords, by session."""
    names = dict(store.conn.execute("SELECT rowid, session_uuid FROM handoffs"))
    folder, key = store.text_index_folder, text_index.key_of(store.conn)
    found = {word: text_index.search(folder, key, [word], 100) for word in ("did", "headline 3", "7")}
    found["kw3"] = text_index.term_top(folder, key, {("keywords", "kw3"): 1.0, ("projects", "proj1"): 0.5}, 100)
    return {what: sorted((names[rid], round(score, 4)) for rid, score in hits) for what, hits in found.items()}


def test_a_rebuild_writes_what_storing_the_same_handoffs_one_by_one_writes(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text_index, "_QUEUE_DOCUMENTS", 7)  # the full-text rebuild commits as it goes
    handoffs = [_handoff(i, substance=i % 3) for i in range(60)]
    one_by_one, rebuilt = Store(tmp_path / "a.sqlite3"), Store(tmp_path / "b.sqlite3")
    with one_by_one.transaction():
        for handoff in handoffs:
            one_by_one.put_handoff(handoff, path=f"{handoff.session_id}.md")
    with rebuilt.transaction():  # something to replace
        rebuilt.put_handoff(_handoff(999), path="old.md")
    with rebuilt.rebuilding() as rebuild:
        for handoff in [_handoff(5, day=-20), *handoffs]:  # an older file of a session, replaced by its later one
            rebuild.add(handoff, path=f"{handoff.session_id}.md")
    assert _contents(rebuilt.conn) == _contents(one_by_one.conn)
    # ... and the triggers are back: the next change keeps both alike.
    for store in (one_by_one, rebuilt):
        with store.transaction():
            store.put_handoff(_handoff(3, day=1), path="moved.md")
            store.delete_handoff("s0000004-full")
    assert _contents(rebuilt.conn) == _contents(one_by_one.conn)
    assert readonly.handoff_count(rebuilt.conn) == 59
    assert readonly.handoff_count(rebuilt.conn, substantial=True) == rebuilt.conn.execute(
        "SELECT COUNT(*) FROM handoffs WHERE substance > 0").fetchone()[0] == 40
    # The keywords holding a word, found through the trigrams (a short word by a scan), as reading them all finds.
    for store in (one_by_one, rebuilt):
        every = store.conn.execute("SELECT keyword, df FROM keyword_df ORDER BY keyword").fetchall()
        for word in ("kw1", "-x", "shared", "kw", "x", "nothing"):
            holding = [row for row in every if word in row[0]]
            assert readonly.keywords_containing(store.conn, word) == holding
            # At most a limit's worth, still in keyword order: enough to tell a word common among the keywords.
            first = readonly.keywords_containing(store.conn, word, 2)
            assert len(first) == min(2, len(holding)) and set(first) <= set(holding) and first == sorted(first)
    # The full-text index is made anew from the rebuilt rows, and finds and scores what the other's finds.
    assert rebuilt.conn.execute("SELECT COUNT(*) FROM text_index_queue").fetchone()[0] == 0
    assert _searched(rebuilt) == _searched(one_by_one)
    assert readonly.project_df(rebuilt.conn) == readonly.project_df(one_by_one.conn)


def test_the_counts_of_an_index_from_before_them_are_counted_when_a_store_opens_it(tmp_path: Path) -> None:
    store = Store(tmp_path / "i.sqlite3")
    with store.transaction():
        for i in range(10):
            store.put_handoff(_handoff(i, substance=i % 2), path=f"{i}.md")
        for statement in ("DROP TABLE project_df", "DROP TABLE handoff_counts", "DELETE FROM migrations"
                          " WHERE name = 'index-counts'"):
            store.conn.execute(statement)
    assert readonly.handoff_count(store.conn) == 10  # counted from the rows meanwhile
    store.close()
    store = Store(tmp_path / "i.sqlite3")
    assert readonly.handoff_count(store.conn) == 10 and readonly.handoff_count(store.conn, substantial=True) == 5
    assert dict(zip(*readonly.project_df(store.conn), strict=True)) == {"proj0": 4, "proj1": 3, "proj2": 3}


def test_a_reindex_bounds_the_allocator_as_an_ingest_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Else each of the full-text index's merging threads keeps an arena of its own (bench/RESULTS.md, issue 29).
    from eywa.core.ingest import reindex

    bounded: list[bool] = []
    monkeypatch.setattr(reindex, "bound_allocator", lambda: bounded.append(True))
    reindex.reindex(Store(tmp_path / "i.sqlite3"), tmp_path / "handoffs", tmp_path / "archive")
    assert bounded == [True]
