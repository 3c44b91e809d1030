"""The exact top k of the original's `keywords` formula, reading as few postings as the formula allows.

score = raw * recency(age) * duration(minutes), raw = the sum of the weights of the terms a handoff
lists. Scoring every posting costs as much as the most common matched term is common (a query word
inside keywords of most handoffs). Here the rarest terms' postings are read in full (they are few); the
others, in bands of similar weight, newest first and only as deep as a handoff could still beat the
k-th best score found (MaxScore bounds: recency never grows with age, a handoff lists at most so many
keywords and projects, a light band alone can only reach so far). A handoff met in one band but older
than another band's depth is looked up when it could still enter. The result is what scoring every
posting gives, ties included.
"""

from __future__ import annotations

import datetime
import heapq
import itertools
import math
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol, TypeVar

import orjson

# The rare terms whose postings are read in full, by total postings: beyond that a term is read newest first.
ESSENTIAL_POSTINGS = 300
_BAND_RATIO = 1.5  # a band holds terms within this factor of its heaviest weight
_FIRST_WINDOW_DAYS = 4
_MAX_AGE_DAYS = 1 << 17  # older than any handoff: the last window reads everything left
_UNREADABLE_AGE = 1e6  # as the SQL scorer counts an unreadable date
_COLUMN = {"project_index": "project", "keyword_index": "keyword"}
_NOTHING_READ = "\U0010ffff"  # sorts after every date
_LOOKUP_BATCH = 128  # handoffs whose terms are looked up in one statement


@dataclass(frozen=True)
class Term:
    table: str  # project_index or keyword_index
    term: str
    weight: float
    df: int


@dataclass(frozen=True)
class Multipliers:
    """The recency and duration multipliers (ARCHITECTURE.md), as core.scorer's SQL computes them."""

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


_MAXIMA_KEYS = ("max_duration", "max_keywords", "max_projects")


@dataclass
class _Doc:
    terms: set[int]  # indexes into the sorted terms
    date: str
    duration: int
    substance: int
    score: float | None = None  # set once every term of the handoff is known
    raw: float | None = None  # the sum over `terms`, kept until they change


@dataclass(frozen=True)
class Ranked:
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
        limit: int, offset: int = 0, project: str | None = None) -> list[Ranked]:
    """Handoffs of substance > 0 (inside `project` when given) by score desc, date desc, session_uuid."""
    return _TopK(conn, list(terms), multipliers, bounds, limit + offset, project).run()[offset:offset + limit]


class _TopK:
    def __init__(self, conn: sqlite3.Connection, terms: list[Term], m: Multipliers, bounds: IndexBounds, k: int,
                 project: str | None) -> None:
        self.conn, self.m, self.k, self.project = conn, m, k, project
        self.most = {"keyword_index": bounds.max_keywords, "project_index": bounds.max_projects}
        self.terms = sorted(terms, key=lambda t: (-t.weight, t.df, t.table, t.term))
        self.index = {(t.table, t.term): i for i, t in enumerate(self.terms)}
        self.names = {table: orjson.dumps([t.term for t in self.terms if t.table == table]).decode()
                      for table in _COLUMN}  # the query's terms of each kind, for look-ups
        # Bands of terms, heaviest first; the first (the rarest terms, few postings) is read in full.
        self.bands: list[list[Term]] = [[]]
        read = 0
        for term in self.terms:
            if len(self.bands) == 1 and read + term.df <= ESSENTIAL_POSTINGS:
                read += term.df
                self.bands[0].append(term)
            elif len(self.bands) == 1 or term.weight * _BAND_RATIO < self.bands[-1][0].weight:
                self.bands.append([term])
            else:
                self.bands[-1].append(term)
        # Most a handoff can get from the terms of band b onwards (the bands are heaviest first).
        self.suffix_bound = [self._most_raw(itertools.chain.from_iterable(self.bands[b:]))
                             for b in range(len(self.bands))]
        # Each band's heaviest terms of each kind are enough for a bound: no handoff holds more of a kind.
        self.heaviest = [[t for table, most in self.most.items() for t in [t for t in band if t.table == table][:most]]
                         for band in self.bands]
        self.depth = [0] * len(self.bands)  # days read back, per band; _MAX_AGE_DAYS: all
        self.frontier = [_NOTHING_READ] * len(self.bands)  # a band covers the handoffs dated from here on
        self.max_duration = m.duration(bounds.max_duration)
        self.docs: dict[str, _Doc] = {}
        self.best: list[float] = []  # min-heap of the k best scores so far
        self.in_project: dict[str, bool] = {}
        self.recency_at: dict[str, float] = {}

    def run(self) -> list[Ranked]:
        b, target = 0, _MAX_AGE_DAYS
        while True:
            # One band at a time, heaviest first: what it finds raises the threshold for the lighter ones.
            self._read(self.bands[b], self._date_at(target), self._date_at(self.depth[b]))
            self.depth[b] = target
            self.frontier[b] = self._date_at(target) or ""
            self._score_complete()
            self._complete_promising()
            deeper = [(b, target) for b in range(len(self.bands)) if (target := self._target(b)) > self.depth[b]]
            if not deeper:
                return self._ranked()
            b, target = deeper[0]

    # -- reading ----------------------------------------------------------------------------------
    def _read(self, terms: list[Term], oldest: str | None, newest: str | None) -> None:
        """Postings of `terms` dated in [oldest, newest) (None: unbounded)."""
        for table, column in _COLUMN.items():
            names = [t.term for t in terms if t.table == table]
            if not names:
                continue
            sql = (f"SELECT {column}, session_uuid, date, duration_min, substance FROM {table}"
                   f" WHERE {column} IN (SELECT value FROM json_each(?))")
            params: list[object] = [orjson.dumps(names).decode()]
            if oldest is not None:
                sql += " AND date >= ?"
                params.append(oldest)
            if newest is not None:
                sql += " AND date < ?"
                params.append(newest)
            index, docs = self.index, self.docs
            for term, uid, date, duration, substance in self.conn.execute(sql, params):
                doc = docs.get(uid)
                if doc is None:
                    doc = docs[uid] = _Doc(set(), date, duration, substance)
                doc.terms.add(index[(table, term)])
                doc.raw = None

    def _complete(self, uids: list[str]) -> None:
        """Every term of these handoffs, from their own index rows, then their scores."""
        wanted = orjson.dumps(uids).decode()
        for table, column in _COLUMN.items():
            names = self.names[table]
            if names == "[]":
                continue
            # `+column`: a filter on each handoff's rows, not one index seek per (handoff, term) pair.
            rows = self.conn.execute(f"SELECT session_uuid, {column} FROM {table}"
                                     f" WHERE session_uuid IN (SELECT value FROM json_each(?))"
                                     f" AND +{column} IN (SELECT value FROM json_each(?))", (wanted, names))
            for uid, term in rows:
                doc = self.docs[uid]
                doc.terms.add(self.index[(table, term)])
                doc.raw = None
        for uid in uids:
            self._score(uid)

    def _missing(self, date: str) -> tuple[int, ...]:
        """The bands not read back to this date."""
        return tuple(b for b, frontier in enumerate(self.frontier) if date < frontier)

    # -- scoring ----------------------------------------------------------------------------------
    def _most_raw(self, terms: Iterable[Term]) -> float:
        """The most a handoff can get from `terms`: its allowed number of the heaviest of each kind."""
        by_table: dict[str, list[float]] = {"keyword_index": [], "project_index": []}
        for term in terms:
            by_table[term.table].append(term.weight)
        return sum(sum(heapq.nlargest(self.most[table], weights)) for table, weights in by_table.items())

    def _raw(self, doc: _Doc) -> float:
        if doc.raw is None:
            doc.raw = sum(self.terms[i].weight for i in sorted(doc.terms))  # one order: equal sets, equal sums
        return doc.raw

    def _recency(self, date: str) -> float:
        found = self.recency_at.get(date)
        if found is None:
            found = self.recency_at[date] = self.m.recency(self.m.age(date))
        return found

    def _score(self, uid: str) -> None:
        """Score a handoff every term of which is known; the k best allowed ones feed the threshold."""
        doc = self.docs[uid]
        doc.score = self._raw(doc) * self._recency(doc.date) * self.m.duration(doc.duration)
        if doc.substance > 0 and (len(self.best) < self.k or doc.score >= self.best[0]) and self._allowed(uid):
            if len(self.best) < self.k:
                heapq.heappush(self.best, doc.score)
            else:
                heapq.heappushpop(self.best, doc.score)

    def _score_complete(self) -> None:
        oldest = max(self.frontier)  # every band covers the handoffs dated from here on
        for uid, doc in self.docs.items():
            if doc.score is None and doc.date >= oldest:
                self._score(uid)

    def _complete_promising(self) -> None:
        """Handoffs older than some band's depth: look up their other terms when they could still enter."""
        waiting = []
        unread_at: dict[str, float] = {}  # by date: the most the bands not read back to it can add
        unread_from: dict[tuple[int, ...], float] = {}  # the same by the bands missing
        for uid, doc in self.docs.items():
            if doc.score is None and doc.substance > 0:
                unread = unread_at.get(doc.date)
                if unread is None:
                    missing = self._missing(doc.date)
                    unread = unread_from.get(missing)
                    if unread is None:
                        unread = unread_from[missing] = self._most_raw(
                            t for b in missing for t in self.heaviest[b])
                    unread_at[doc.date] = unread
                bound = (self._raw(doc) + unread) * self._recency(doc.date) * self.m.duration(doc.duration)
                waiting.append((bound, uid))
        waiting.sort(reverse=True)
        start = 0
        while start < len(waiting) and _may_reach(waiting[start][0], self._threshold()):
            # In batches (one statement each), re-checking the threshold that each batch raises.
            batch = [uid for bound, uid in waiting[start:start + _LOOKUP_BATCH]
                     if _may_reach(bound, self._threshold())]
            self._complete(batch)
            start += _LOOKUP_BATCH

    def _threshold(self) -> float:
        return self.best[0] if len(self.best) == self.k else -math.inf

    def _unread_bound(self, b: int, age: int) -> float:
        """The most a handoff older than `age` days, met through no band heavier than b, can score."""
        return self.suffix_bound[b] * self.m.recency(age + 1) * self.max_duration

    def _target(self, b: int) -> int:
        """How deep band b must be read: until its bound falls under the threshold, doubling the depth."""
        age, threshold = self.depth[b], self._threshold()
        if age >= _MAX_AGE_DAYS or not _may_reach(self._unread_bound(b, age), threshold):
            return age
        if self._unread_bound(b, _MAX_AGE_DAYS) >= self._unread_bound(b, age):
            return _MAX_AGE_DAYS  # no decay (hybrid's raw scores): waiting lowers nothing, read the rest
        # Doubling, never straight to the depth today's threshold asks for: the newer postings read first
        # raise the threshold, often by orders of magnitude when the rare terms only matched old handoffs.
        return max(age * 2, _FIRST_WINDOW_DAYS)

    def _date_at(self, age: int) -> str | None:
        """The oldest date of age `age` days or less; None when that reaches past any handoff (or for 0,
        the newest bound: none)."""
        if age <= 0 or age >= _MAX_AGE_DAYS:
            return None
        try:
            return (self.m.now - datetime.timedelta(days=age - 1)).isoformat()
        except OverflowError:
            return None

    def _allowed(self, uid: str) -> bool:
        if self.project is None:
            return True
        if uid not in self.in_project:
            rows = self.conn.execute("SELECT project FROM project_index WHERE session_uuid = ?", (uid,))
            self.in_project[uid] = any(self.project in name for (name,) in rows)
        return self.in_project[uid]

    def _ranked(self) -> list[Ranked]:
        threshold = self._threshold()
        found = [Ranked(uid, doc.score, doc.date) for uid, doc in self.docs.items()
                 if doc.score is not None and doc.score >= threshold and doc.substance > 0 and self._allowed(uid)]
        return ordered(found)[:self.k]


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
