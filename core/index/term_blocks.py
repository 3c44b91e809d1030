"""Each inverted index term's postings in blocks, one per term and week of the handoff's date (`term_blocks`,
kept by triggers on the inverted indexes), as fixed-width hex records; the index-wide maxima that bound a
handoff not read yet. core/retrieval/keyword_topk.py scores the top k from them; this module holds their
schema, their fill and every query that reads them."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import NamedTuple

COLUMN = {"project_index": "project", "keyword_index": "keyword"}
KIND = {"project_index": "p", "keyword_index": "k"}  # a block's kind, by the inverted index it holds

# A posting in a block: ' ' then the handoff's rowid, its day (julian day number; 0 when the date is
# unreadable) and its minutes, 8 hex digits each. bytes.fromhex skips the spaces; a space starts every
# record and nothing else, so `replace` removes one record and never a misaligned match.
_DAY_SQL = "coalesce(CAST(julianday({date}) + 0.5 AS INTEGER), 0)"
_RECORD_SQL = "printf(' %08x%08x%08x', {rowid}, {day}, min(max({minutes}, 0), 4294967295))"
RECORD_CHARS = 25  # a space and three 8-digit hex numbers
JULIAN_ORDINAL = 1721425  # julian day number - date.toordinal()
WEEK = 7


def _blocks_sql(table: str) -> str:
    column, kind = COLUMN[table], KIND[table]

    def day(row: str) -> str:
        return _DAY_SQL.format(date=f"{row}.date")

    def record(row: str) -> str:  # of the handoff `h`
        return _RECORD_SQL.format(rowid="h.rowid", day=day(row), minutes=f"{row}.duration_min")

    handoff = "FROM handoffs AS h WHERE h.session_uuid = {row}.session_uuid"
    # A posting of substance 0 is never ranked: no record. The record names the handoff's rowid, looked
    # up by its id, so Store deletes the postings before the handoff ('-' matches no record).
    return f"""
CREATE TRIGGER IF NOT EXISTS {table}_blocks_insert AFTER INSERT ON {table} WHEN new.substance > 0 BEGIN
    INSERT INTO term_blocks(kind, term, week, docs)
        SELECT '{kind}', new.{column}, {day("new")} / {WEEK}, {record("new")} {handoff.format(row="new")}
        ON CONFLICT(kind, term, week) DO UPDATE SET docs = docs || excluded.docs;
END;
CREATE TRIGGER IF NOT EXISTS {table}_blocks_delete AFTER DELETE ON {table} WHEN old.substance > 0 BEGIN
    UPDATE term_blocks SET docs = replace(docs, coalesce((SELECT {record("old")} {handoff.format(row="old")}), '-'), '')
        WHERE kind = '{kind}' AND term = old.{column} AND week = {day("old")} / {WEEK};
    DELETE FROM term_blocks WHERE kind = '{kind}' AND term = old.{column} AND docs = '';
END;
"""


def _fill_sql(table: str) -> str:
    column, kind = COLUMN[table], KIND[table]
    day = _DAY_SQL.format(date="t.date")
    return f"""
INSERT INTO term_blocks(kind, term, week, docs)
    SELECT '{kind}', term, day / {WEEK}, group_concat(record, '') FROM (
        SELECT t.{column} AS term, {day} AS day,
            {_RECORD_SQL.format(rowid="h.rowid", day=day, minutes="t.duration_min")} AS record
        FROM {table} AS t JOIN handoffs AS h ON h.session_uuid = t.session_uuid WHERE t.substance > 0
    ) GROUP BY term, day / {WEEK}
"""


# For core/index/store.py's schema: the blocks and the triggers that keep them.
# A table with rowids and a separate key: a query seeks one key per term in a small index (bench/RESULTS.md).
BLOCKS_SCHEMA = ("CREATE TABLE IF NOT EXISTS term_blocks(kind TEXT NOT NULL, term TEXT NOT NULL,"
                 " week INTEGER NOT NULL, docs TEXT NOT NULL);\n"
                 "CREATE UNIQUE INDEX IF NOT EXISTS term_blocks_key ON term_blocks(kind, term, week);\n"
                 + "".join(_blocks_sql(table) for table in COLUMN))


def fill_blocks(conn: sqlite3.Connection) -> None:
    """Write every block afresh from the inverted indexes (an index from before the blocks were kept)."""
    conn.execute("DELETE FROM term_blocks")
    for table in COLUMN:
        conn.execute(_fill_sql(table))


class Block(NamedTuple):
    term: str
    week: int
    docs: str  # the postings, RECORD_CHARS each


def blocks(conn: sqlite3.Connection, kind: str, terms: str, first: int, newer: int | None) -> Iterator[Block]:
    """The blocks of kind `kind` of the terms in the JSON list `terms`, of the weeks [first, newer)."""
    sql = ("SELECT term, week, docs FROM term_blocks WHERE kind = ? AND term IN (SELECT value FROM json_each(?))"
           " AND week >= ?")
    params: list[object] = [kind, terms, first]
    if newer is not None:
        sql += " AND week < ?"
        params.append(newer)
    return (Block._make(row) for row in conn.execute(sql, params))


def oldest_week(conn: sqlite3.Connection, names: dict[str, str]) -> int | None:
    """The first week of any block of these terms (kind -> a JSON list of terms; one seek per term); None:
    no block."""
    weeks = [week for kind, terms in names.items() for (week,) in conn.execute(
        "SELECT min((SELECT week FROM term_blocks WHERE kind = ? AND term = j.value ORDER BY week LIMIT 1))"
        " FROM json_each(?) AS j", (kind, terms)) if week is not None]
    return min(weeks, default=None)


class IndexBounds(NamedTuple):
    """Index-wide maxima that bound a handoff nobody has read yet. Kept in `meta` and only ever raised
    (Store.put_handoff records each handoff), so reading them costs nothing; a deletion leaves them
    high, which a bound allows."""

    max_duration: int
    max_keywords: int  # keywords of one handoff
    max_projects: int

    @classmethod
    def read(cls, conn: sqlite3.Connection) -> IndexBounds:
        found = dict(conn.execute(f"SELECT key, value FROM meta WHERE key IN {_MAXIMA_KEYS}"))
        if len(found) < len(_MAXIMA_KEYS):
            return cls.scan(conn)
        return cls(**{key: int(found[key]) for key in _MAXIMA_KEYS})

    @classmethod
    def scan(cls, conn: sqlite3.Connection) -> IndexBounds:
        """From the inverted indexes themselves (a pass over every posting)."""
        most = [conn.execute(f"SELECT max(n) FROM (SELECT count(*) AS n FROM {table} GROUP BY session_uuid)")
                .fetchone()[0] or 0 for table in ("keyword_index", "project_index")]
        duration = max(conn.execute(f"SELECT max(duration_min) FROM {table}").fetchone()[0] or 0
                       for table in ("keyword_index", "project_index"))
        return cls(max_duration=duration, max_keywords=most[0], max_projects=most[1])

    def replace(self, conn: sqlite3.Connection) -> None:
        """Store these maxima as they are (from a rebuild that saw every handoff)."""
        conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)",
                         [(key, str(getattr(self, key))) for key in _MAXIMA_KEYS])

    def record(self, conn: sqlite3.Connection) -> None:
        """Raise the stored maxima to cover this handoff (inside the caller's transaction)."""
        if conn.execute(f"SELECT COUNT(*) FROM meta WHERE key IN {_MAXIMA_KEYS}").fetchone()[0] < len(_MAXIMA_KEYS):
            stored = IndexBounds.scan(conn)  # an index written before the maxima were kept
        else:
            stored = self
        for key in _MAXIMA_KEYS:
            conn.execute(
                "INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE"
                " SET value = max(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))",
                (key, max(getattr(self, key), getattr(stored, key))),
            )


_MAXIMA_KEYS = ("max_duration", "max_keywords", "max_projects")
