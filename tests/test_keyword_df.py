"""The store keeps each keyword's handoff count (keyword_df) in step with keyword_index, and the scorer
reads it instead of counting keyword_index at every start."""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path

from eywa.core.handoffs.model import Handoff
from eywa.core.index.store import Store
from eywa.core.retrieval.scorer import rank

NOW = dt.date(2025, 6, 15)


def put(store: Store, uid: str, *keywords: str) -> None:
    handoff = Handoff(short_id=uid, session_id=uid, date=NOW, duration="5m", headline=uid, projects=[],
                      keywords=list(keywords), substance=1, what_happened=["routine"])
    with store.transaction():
        store.put_handoff(handoff, path=f"{uid}.md")


def stored(conn: sqlite3.Connection) -> dict[str, int]:
    return dict(conn.execute("SELECT keyword, df FROM keyword_df"))


def counted(conn: sqlite3.Connection) -> dict[str, int]:
    return dict(conn.execute("SELECT keyword, COUNT(*) FROM keyword_index GROUP BY keyword"))


def test_counts_follow_puts_replacements_deletes_and_clears(store: Store) -> None:
    put(store, "a", "kraken", "Parser")
    put(store, "b", "kraken", "merge")
    put(store, "c", "kraken", "kraken")
    assert stored(store.conn) == counted(store.conn) == {"kraken": 3, "parser": 1, "merge": 1}
    put(store, "a", "merge")  # replaced: its old keywords leave
    assert stored(store.conn) == counted(store.conn) == {"kraken": 2, "merge": 2}
    with store.transaction():
        store.delete_handoff("b")
    assert stored(store.conn) == counted(store.conn) == {"kraken": 1, "merge": 1}
    with store.transaction():
        store.clear_index()
    assert stored(store.conn) == {}


def test_an_index_without_counts_gets_them_when_a_store_opens_it(tmp_path: Path) -> None:
    path = tmp_path / "i.db"
    store = Store(path)
    put(store, "a", "kraken", "parser")
    put(store, "b", "kraken")
    with store.transaction():  # as an index built before keyword_df looks
        for statement in ("DROP TRIGGER keyword_df_insert", "DROP TRIGGER keyword_df_delete",
                          "DROP TABLE keyword_df", "DROP TABLE migrations"):
            store.conn.execute(statement)
    store.close()
    store = Store(path)
    assert stored(store.conn) == {"kraken": 2, "parser": 1}
    put(store, "c", "parser")
    assert stored(store.conn) == counted(store.conn) == {"kraken": 2, "parser": 2}
    store.close()


def test_the_scorer_counts_keywords_itself_on_an_index_without_counts(store: Store) -> None:
    put(store, "a", "kraken", "parser")
    put(store, "b", "merge")
    put(store, "c", "merge")
    before = rank(store.conn, "kraken", mode="keywords", now=NOW, max_results=3)
    conn = sqlite3.connect(store.path)
    conn.execute("DROP TABLE keyword_df")
    conn.commit()
    assert rank(conn, "kraken", mode="keywords", now=NOW, max_results=3) == before
    assert [hit.session_id for hit in before] == ["a"]
    conn.close()
