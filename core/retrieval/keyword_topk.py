"""The exact top k of the original's `keywords` formula, reading only the recent postings that can reach it.

score = raw * recency(age) * duration(minutes), raw = the sum of the weights of the terms a handoff
lists. A query word inside keywords of most handoffs matches nearly every handoff, and summing every
posting is too slow at scale (bench/RESULTS.md). So each term's
postings are kept in blocks, one per term and week of the handoff's date (`term_blocks`, kept by
triggers on the inverted indexes), as fixed-width hex records the reader turns into arrays at once.
Every term of a handoff lies in blocks of the same week, so reading all matched terms' blocks of some
weeks scores the handoffs of those weeks completely. The weeks are read newest first: the recency window
and two weeks more, then back as far as the k-th best score found asks (at most doubling what was read),
until the most a handoff older than what was read could score (the heaviest terms it could list, at the
recency of the newest unread day, at the longest duration) falls under it: recency never grows with age.
The result is what scoring every posting gives, ties included.
"""

from __future__ import annotations

import datetime
import heapq
import math
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, Protocol, TypeVar

import orjson

if TYPE_CHECKING:
    import numpy

_UNREADABLE_AGE = 1e6  # an unreadable date counts as very old (recency 0), as day 0 does in a block
_COLUMN = {"project_index": "project", "keyword_index": "keyword"}
_KIND = {"project_index": "p", "keyword_index": "k"}

# A posting in a block: ' ' then the handoff's rowid, its day (julian day number; 0 when the date is
# unreadable) and its minutes, 8 hex digits each. bytes.fromhex skips the spaces; a space starts every
# record and nothing else, so `replace` removes one record and never a misaligned match.
_DAY_SQL = "coalesce(CAST(julianday({date}) + 0.5 AS INTEGER), 0)"
_RECORD_SQL = "printf(' %08x%08x%08x', {rowid}, {day}, min(max({minutes}, 0), 4294967295))"
_JULIAN_ORDINAL = 1721425  # julian day number - date.toordinal()
_WEEK = 7


def _blocks_sql(table: str) -> str:
    column, kind = _COLUMN[table], _KIND[table]

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
        SELECT '{kind}', new.{column}, {day("new")} / {_WEEK}, {record("new")} {handoff.format(row="new")}
        ON CONFLICT(kind, term, week) DO UPDATE SET docs = docs || excluded.docs;
END;
CREATE TRIGGER IF NOT EXISTS {table}_blocks_delete AFTER DELETE ON {table} WHEN old.substance > 0 BEGIN
    UPDATE term_blocks SET docs = replace(docs, coalesce((SELECT {record("old")} {handoff.format(row="old")}), '-'), '')
        WHERE kind = '{kind}' AND term = old.{column} AND week = {day("old")} / {_WEEK};
    DELETE FROM term_blocks WHERE kind = '{kind}' AND term = old.{column} AND docs = '';
END;
"""


def _fill_sql(table: str) -> str:
    column, kind = _COLUMN[table], _KIND[table]
    day = _DAY_SQL.format(date="t.date")
    return f"""
INSERT INTO term_blocks(kind, term, week, docs)
    SELECT '{kind}', term, day / {_WEEK}, group_concat(record, '') FROM (
        SELECT t.{column} AS term, {day} AS day,
            {_RECORD_SQL.format(rowid="h.rowid", day=day, minutes="t.duration_min")} AS record
        FROM {table} AS t JOIN handoffs AS h ON h.session_uuid = t.session_uuid WHERE t.substance > 0
    ) GROUP BY term, day / {_WEEK}
"""


# For core/index/store.py's schema: the blocks and the triggers that keep them.
# A table with rowids and a separate key: a query seeks one key per term in a small index (bench/RESULTS.md).
BLOCKS_SCHEMA = ("CREATE TABLE IF NOT EXISTS term_blocks(kind TEXT NOT NULL, term TEXT NOT NULL,"
                 " week INTEGER NOT NULL, docs TEXT NOT NULL);\n"
                 "CREATE UNIQUE INDEX IF NOT EXISTS term_blocks_key ON term_blocks(kind, term, week);\n"
                 + "".join(_blocks_sql(table) for table in _COLUMN))


def fill_blocks(conn: sqlite3.Connection) -> None:
    """Write every block afresh from the inverted indexes (an index from before the blocks were kept)."""
    conn.execute("DELETE FROM term_blocks")
    for table in _COLUMN:
        conn.execute(_fill_sql(table))


class Term(NamedTuple):  # hundreds a query: a frozen dataclass costs several times as much to make
    table: str  # project_index or keyword_index
    term: str
    weight: float
    df: int


@dataclass(frozen=True)
class Multipliers:
    """The recency and duration multipliers (ARCHITECTURE.md), as every scorer computes them."""

    now: datetime.date
    days_back: int
    boost: float
    duration_boost: float

    def age(self, date: str) -> float:
        try:
            return max(1.0, float((self.now - datetime.date.fromisoformat(date)).days + 1))
        except ValueError:
            return _UNREADABLE_AGE

    def recency(self, age: float) -> float:
        """Never grows with age (boost >= 0): the bound on every posting older than a window rests on it."""
        if age <= self.days_back:
            return 1.0 + self.boost / math.sqrt(age)
        return 0.5 ** ((age - self.days_back) / 7.0)

    def duration(self, minutes: int) -> float:
        return 1.0 + self.duration_boost * math.log(minutes + 1.0)


@dataclass(frozen=True)
class IndexBounds:
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

    def most_raw(self, terms: Iterable[Term]) -> float:
        """The most a handoff can get from `terms`: as many of the heaviest of each kind as one handoff lists."""
        most = {"keyword_index": self.max_keywords, "project_index": self.max_projects}
        weights: dict[str, list[float]] = {table: [] for table in most}
        for term in terms:
            weights[term.table].append(term.weight)
        return sum(sum(heapq.nlargest(most[table], found)) for table, found in weights.items())


_MAXIMA_KEYS = ("max_duration", "max_keywords", "max_projects")


class Ranked(NamedTuple):
    session_uuid: str
    score: float
    date: str


class _Scored(Protocol):
    @property
    def session_uuid(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def date(self) -> str: ...


_R = TypeVar("_R", bound=_Scored)


def top(conn: sqlite3.Connection, terms: Iterable[Term], multipliers: Multipliers, bounds: IndexBounds, *,
        limit: int, offset: int = 0, only: Iterable[int] | None = None) -> list[Ranked]:
    """Handoffs of substance > 0 (among the rowids `only` when given) by score desc, date desc, session_uuid."""
    import numpy as np

    terms = list(terms)
    k = limit + offset
    if k <= 0 or not terms:
        return []
    m = multipliers
    names = {kind: orjson.dumps([t.term for t in terms if t.table == table]).decode() for table, kind in _KIND.items()}
    weights = {(_KIND[t.table], t.term): t.weight for t in terms}
    allowed = None if only is None else np.fromiter(only, dtype=np.int64)
    if allowed is not None and not len(allowed):
        return []
    today = m.now.toordinal() + _JULIAN_ORDINAL
    most = bounds.most_raw(terms) * m.duration(bounds.max_duration)
    rowids, scores = np.empty(0, dtype=np.int64), np.empty(0)
    threshold, newer, oldest = -math.inf, None, None

    def needed(week: int) -> bool:
        """Whether a handoff of this week, or older, could still reach the k best (its newest day's age)."""
        return _may_reach(most * m.recency(max(1, today - _WEEK * week - 5)), threshold)

    first = (today - m.days_back) // _WEEK - 2  # the window: the weeks first .. newer (None: and every later one)
    while True:
        found, scored = _score_weeks(conn, names, weights, first, newer, m, today)
        if allowed is not None:
            kept = np.isin(found, allowed)
            found, scored = found[kept], scored[kept]
        rowids, scores = np.concatenate((rowids, found)), np.concatenate((scores, scored))
        if len(scores) >= k:
            threshold = float(np.partition(scores, len(scores) - k)[len(scores) - k])
        if not needed(first - 1):
            break
        if oldest is None:  # looked up only when older weeks could matter
            oldest = _oldest_week(conn, names)
        if oldest is None or first <= oldest:
            break
        # Back as far as the k-th best score asks, at most twice as many weeks as read so far (while fewer
        # than k are found, twice as many): newer weeks read first raise the threshold.
        newer, deepest = first, max(oldest, first - (today // _WEEK - first + 1))
        first -= 1
        while first > deepest and (threshold == -math.inf or needed(first - 1)):
            first -= 1
    kept = scores * (1.0 + 1e-9) >= threshold
    return _ranked(conn, rowids[kept], scores[kept])[offset:k]


def _oldest_week(conn: sqlite3.Connection, names: dict[str, str]) -> int | None:
    """The first week of any block of these terms (one seek per term); None: no block."""
    weeks = [week for kind, terms in names.items() for (week,) in conn.execute(
        "SELECT min((SELECT week FROM term_blocks WHERE kind = ? AND term = j.value ORDER BY week LIMIT 1))"
        " FROM json_each(?) AS j", (kind, terms)) if week is not None]
    return min(weeks, default=None)


def _score_weeks(conn: sqlite3.Connection, names: dict[str, str], weights: dict[tuple[str, str], float], first: int,
                 newer: int | None, m: Multipliers, today: int) -> tuple[numpy.ndarray, numpy.ndarray]:
    """The rowids of the handoffs dated in weeks [first, newer) and their scores: every term of such a
    handoff is in blocks of its week, so these are complete."""
    import numpy as np

    texts: list[str] = []
    row_weights: list[float] = []
    counts: list[int] = []
    for kind, terms in names.items():
        sql = ("SELECT term, docs FROM term_blocks WHERE kind = ? AND term IN (SELECT value FROM json_each(?))"
               " AND week >= ?")
        params: list[object] = [kind, terms, first]
        if newer is not None:
            sql += " AND week < ?"
            params.append(newer)
        for term, docs in conn.execute(sql, params):
            texts.append(docs)
            row_weights.append(weights[(kind, term)])
            counts.append(len(docs) // _RECORD_CHARS)
    if not texts:
        return np.empty(0, dtype=np.int64), np.empty(0)
    records = np.frombuffer(bytes.fromhex("".join(texts)), dtype=">u4").reshape(-1, 3)
    # Rowids made dense through a sort, the cheapest way measured; bincount sums each handoff's weights in
    # the order read, so equal term sets give equal sums.
    rowid = records[:, 0].astype(np.int64)
    order = np.argsort(rowid)
    new_rowid = np.concatenate(([True], rowid[order][1:] != rowid[order][:-1]))
    dense = np.empty(len(rowid), dtype=np.intp)
    dense[order] = np.cumsum(new_rowid) - 1
    raw = np.bincount(dense, weights=np.repeat(row_weights, counts))
    first = order[new_rowid]  # a posting of each handoff: all of them hold its day and minutes
    found = rowid[first]
    day, minutes = records[first, 1].astype(np.int64), records[first, 2].astype(np.float64)
    age = np.maximum(1.0, (today - day + 1).astype(np.float64))
    with np.errstate(over="ignore"):  # an unreadable date (day 0) is very old: recency 0, as in Multipliers
        recency = np.where(age <= m.days_back, 1.0 + m.boost / np.sqrt(age), 0.5 ** ((age - m.days_back) / 7.0))
    duration = 1.0 + m.duration_boost * np.log(minutes + 1.0)
    return found, raw * recency * duration


_RECORD_CHARS = 25  # a space and three 8-digit hex numbers


def _ranked(conn: sqlite3.Connection, rowids: numpy.ndarray, scores: numpy.ndarray) -> list[Ranked]:
    score = dict(zip(rowids.tolist(), scores.tolist(), strict=True))
    rows = conn.execute("SELECT rowid, session_uuid, date FROM handoffs"
                        " WHERE rowid IN (SELECT value FROM json_each(?))", (orjson.dumps(list(score)).decode(),))
    return ordered([Ranked(uid, score[rowid], date) for rowid, uid, date in rows])


def ordered(rows: list[_R]) -> list[_R]:
    """Rows sorted as every scorer ranks them: score desc, then date desc, then session id."""
    # Stable sorts, least significant key first (a date string cannot be negated for one key).
    rows.sort(key=lambda row: row.session_uuid)
    rows.sort(key=lambda row: row.date, reverse=True)
    rows.sort(key=lambda row: row.score, reverse=True)
    return rows


def _may_reach(bound: float, threshold: float) -> bool:
    """A bound that could still tie the threshold; the margin absorbs float rounding between the two."""
    return bound * (1.0 + 1e-9) >= threshold
