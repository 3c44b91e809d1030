"""The exact top k of the original's `keywords` formula, reading only the recent postings that can reach it.

score = raw * recency(age) * duration(minutes), raw = the sum of the weights of the terms a handoff
lists. A query word inside keywords of most handoffs matches nearly every handoff, and summing every
posting is too slow at scale (bench/RESULTS.md). So each term's
postings are kept in blocks, one per term and week of the handoff's date (`term_blocks`, kept by
triggers on the inverted indexes: core/index/term_blocks.py), as fixed-width hex records the reader unpacks
at once (in C: no numpy to import at every start).
Every term of a handoff lies in blocks of the same week, so reading all matched terms' blocks of some
weeks scores the handoffs of those weeks completely. The weeks are read newest first: the recency window
and two weeks more, then back as far as the k-th best score found asks (at most doubling what was read),
until the most a handoff older than what was read could score (the heaviest terms it could list, at the
recency of the newest unread day, at the longest duration) falls under it: recency never grows with age.
The result is what scoring every posting gives, ties included.

A common term (a whole keyword or a project of many handoffs) weighs little but has the most postings: the
terms beyond READ_POSTINGS postings, lightest first, are left unread while the rest settle which weeks to
read; then the handoffs found are completed, most promising first, with the common terms their own lists
hold, until none left could reach the k-th score, nor a handoff holding common terms alone. When the latter
could, every posting is read as above.
"""

from __future__ import annotations

import datetime
import heapq
import json
import math
import struct
from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple, Protocol, TypeVar

from eywa.core.index.readonly import handoff_dates, substantial_listed
from eywa.core.index.term_blocks import (
    JULIAN_ORDINAL,
    KIND,
    WEEK,
    Block,
    IndexBounds,
    blocks,
    oldest_week,
)
from eywa.core.index.text_index import index_terms

if TYPE_CHECKING:
    import sqlite3

_UNREADABLE_AGE = 1e6  # an unreadable date counts as very old (recency 0), as day 0 does in a block
# The postings (document frequencies summed, heaviest terms first) read before the lighter terms are left to the
# handoffs' own lists; read at call time, so a test can lower it.
READ_POSTINGS = 20_000
_COMPLETED = 64  # handoffs completed at a time
class Term(NamedTuple):  # hundreds a query: a frozen dataclass costs several times as much to make
    table: str  # project_index or keyword_index
    term: str
    weight: float
    df: int


class Multipliers(NamedTuple):
    """The recency and duration multipliers, as every scorer computes them. With a window (`days_back`), the
    original's (docs/architecture.md, "The keywords formula"): 1 + boost / sqrt(age) inside it, halving every 7
    days beyond it. Without one (None), the bounded boost alone: the newest session gains at most a factor 1 + boost."""

    now: datetime.date
    days_back: int | None
    boost: float
    duration_boost: float

    def age(self, date: str) -> float:
        try:
            return max(1.0, float((self.now - datetime.date.fromisoformat(date)).days + 1))
        except ValueError:
            return _UNREADABLE_AGE

    def recency(self, age: float) -> float:
        """Never grows with age (boost >= 0): the bound on every posting older than a window rests on it."""
        if self.days_back is None or age <= self.days_back:
            return 1.0 + self.boost / math.sqrt(age)
        return 0.5 ** ((age - self.days_back) / 7.0)

    def duration(self, minutes: int) -> float:
        return 1.0 + self.duration_boost * math.log(minutes + 1.0)


def _most_raw(bounds: IndexBounds, terms: Iterable[Term]) -> float:
    """The most a handoff can get from `terms`: as many of the heaviest of each kind as one handoff lists."""
    most = {"keyword_index": bounds.max_keywords, "project_index": bounds.max_projects}
    weights: dict[str, list[float]] = {table: [] for table in most}
    for term in terms:
        weights[term.table].append(term.weight)
    return sum(sum(heapq.nlargest(most[table], found)) for table, found in weights.items())


class _Parts(NamedTuple):
    """A handoff read by `_score_weeks`: its raw sum, its multipliers, and how many of its projects were read."""

    raw: float
    by_day: float
    by_length: float
    projects: int


class Ranked(NamedTuple):
    session_id: str
    score: float
    date: str


class _Scored(Protocol):
    @property
    def session_id(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def date(self) -> str: ...


_R = TypeVar("_R", bound=_Scored)


def top(conn: sqlite3.Connection, terms: Iterable[Term], multipliers: Multipliers, bounds: IndexBounds, *,
        limit: int, offset: int = 0, only: Iterable[int] | None = None) -> list[Ranked]:
    """Handoffs of substance > 0 (among the rowids `only` when given) by score desc, date desc, session_uuid."""
    terms = list(terms)
    k = limit + offset
    if k <= 0 or not terms:
        return []
    allowed = None if only is None else set(only)
    if allowed is not None and not allowed:
        return []
    read, skimmed = _split(terms)
    kept = _Kept()
    if skimmed:
        parts: dict[int, _Parts] = {}
        _read(conn, read, terms, multipliers, bounds, k, allowed, kept, parts)
        found = _completed(conn, parts, skimmed, multipliers, bounds, k)
        if found is not None:
            return _ranked(conn, found)[offset:k]
        kept.recording = False  # every posting now: the blocks read above are not read again
    return _ranked(conn, _read(conn, terms, terms, multipliers, bounds, k, allowed, kept))[offset:k]


def _split(terms: list[Term]) -> tuple[list[Term], list[Term]]:
    """The terms to read, heaviest first until READ_POSTINGS postings (at least one), and the rest."""
    ordered = sorted(terms, key=lambda term: (-term.weight, term.df))
    postings = 0
    for number, term in enumerate(ordered):
        postings += term.df
        if number and postings > READ_POSTINGS:
            return ordered[:number], ordered[number:]
    return ordered, []


class _Kept:
    """The blocks a first pass reads (`recording`), and after it, the blocks a pass over more terms asks for: of
    the weeks the first pass read (`since` on), only the other terms' are read from the index."""

    __slots__ = ("blocks", "terms", "since", "recording")

    def __init__(self) -> None:
        self.blocks: dict[str, list[Block]] = {}  # by kind
        self.terms: dict[str, set[str]] = {}  # by kind, the terms whose blocks are kept
        self.since: int | None = None  # the first week read; every later one was
        self.recording = True

    def read(self, conn: sqlite3.Connection, kind: str, terms: list[str], first: int, newer: int | None
             ) -> list[Block]:
        """The blocks of `terms` of this kind of the weeks [first, newer), by term (each handoff's weights are
        summed in this order, whichever pass reads them)."""
        if self.recording:
            self.since = first if self.since is None else min(self.since, first)
        if not terms:
            return []
        if self.recording:
            found = list(blocks(conn, kind, json.dumps(terms), first, newer))
            self.blocks.setdefault(kind, []).extend(found)
            self.terms.setdefault(kind, set()).update(terms)
        elif self.since is None or (newer is not None and newer <= self.since):
            found = list(blocks(conn, kind, json.dumps(terms), first, newer))
        else:
            since = max(first, self.since)
            kept = self.terms.get(kind, set())
            found = [block for block in self.blocks.get(kind, [])
                     if block.week >= since and (newer is None or block.week < newer)]
            if others := [term for term in terms if term not in kept]:
                found += blocks(conn, kind, json.dumps(others), since, newer)
            if first < since:
                found += blocks(conn, kind, json.dumps(terms), first, since)
        found.sort(key=lambda block: block.term)
        return found


def _read(conn: sqlite3.Connection, terms: list[Term], every: list[Term], multipliers: Multipliers,
          bounds: IndexBounds, k: int, allowed: set[int] | None, kept: _Kept,
          parts: dict[int, _Parts] | None = None) -> dict[int, float]:
    """The scores from `terms` of the handoffs (among `allowed`) of the weeks that can reach the k best, the weeks
    bounded by what a handoff could get from `every` term; those under the k-th best score left out. `parts`: also
    filled with every handoff read."""
    m = multipliers
    names = {kind: [t.term for t in terms if t.table == table] for table, kind in KIND.items()}
    weights = {(KIND[t.table], t.term): t.weight for t in terms}
    today = m.now.toordinal() + JULIAN_ORDINAL
    most = _most_raw(bounds, every) * m.duration(bounds.max_duration)
    scores: dict[int, float] = {}
    threshold, newer, oldest = -math.inf, None, None

    def needed(week: int) -> bool:
        """Whether a handoff of this week, or older, could still reach the k best (its newest day's age)."""
        return _may_reach(most * m.recency(max(1, today - WEEK * week - 5)), threshold)

    # The window first: the weeks first .. newer (None: and every later one).
    first = (today - (m.days_back or 0)) // WEEK - 2
    while True:
        # The weeks read do not overlap: each handoff is found once.
        scores.update(_score_weeks(conn, names, weights, first, newer, m, today, kept, allowed, parts))
        if len(scores) >= k:
            threshold = heapq.nlargest(k, scores.values())[-1]
        if not needed(first - 1):
            break
        if oldest is None:  # looked up only when older weeks could matter
            oldest = oldest_week(conn, {kind: json.dumps(listed) for kind, listed in names.items()})
        if oldest is None or first <= oldest:
            break
        # Back as far as the k-th best score asks, at most twice as many weeks as read so far (while fewer
        # than k are found, twice as many): newer weeks read first raise the threshold.
        newer, deepest = first, max(oldest, first - (today // WEEK - first + 1))
        first -= 1
        while first > deepest and (threshold == -math.inf or needed(first - 1)):
            first -= 1
    return {rowid: s for rowid, s in scores.items() if s * (1.0 + 1e-9) >= threshold}


def _completed(conn: sqlite3.Connection, parts: dict[int, _Parts], skimmed: list[Term], m: Multipliers,
               bounds: IndexBounds, k: int) -> dict[int, float] | None:
    """The k best of the handoffs read (`parts`), each completed with the skimmed terms its lists hold, most
    promising first until no other could reach the k-th; None when a handoff holding skimmed terms alone
    could (every posting must then be read). Reading stopped only where `every` term's bound fell under a
    threshold that completing only raises, so no older handoff is missed."""
    if not parts:
        return None
    # The most the skimmed terms can add to a handoff, by how many of its projects were read already.
    weights = {table: sorted((t.weight for t in skimmed if t.table == table), reverse=True)
               for table in ("project_index", "keyword_index")}
    keywords = sum(weights["keyword_index"][:bounds.max_keywords])
    extra = [sum(weights["project_index"][:max(0, bounds.max_projects - read)]) + keywords
             for read in range(bounds.max_projects + 1)]

    def hope(part: _Parts) -> float:
        return (part.raw + extra[min(part.projects, bounds.max_projects)]) * part.by_day * part.by_length

    hopes = sorted(parts, key=lambda rowid: -hope(parts[rowid]))
    scores: dict[int, float] = {}
    best: list[float] = []  # the k best scores so far, a min-heap
    at = 0
    while at < len(hopes):
        if len(best) == k and not _may_reach(hope(parts[hopes[at]]), best[0]):
            break
        batch = hopes[at : at + _COMPLETED]
        at += len(batch)
        for row in substantial_listed(conn, batch):
            raw, by_day, by_length, _ = parts[row.rowid]
            listed = {"project_index": set(index_terms(json.loads(row.projects))),
                      "keyword_index": set(index_terms(json.loads(row.keywords)))}
            for term in skimmed:  # in one order for every handoff, so equal term sets give equal sums
                if term.term in listed[term.table]:
                    raw += term.weight
            scores[row.rowid] = score = raw * by_day * by_length
            if len(best) < k:
                heapq.heappush(best, score)
            elif score > best[0]:
                heapq.heapreplace(best, score)
    if len(best) < k or _may_reach(extra[0] * m.recency(1.0) * m.duration(bounds.max_duration), best[0]):
        return None
    return {rowid: s for rowid, s in scores.items() if s * (1.0 + 1e-9) >= best[0]}


def _score_weeks(conn: sqlite3.Connection, names: dict[str, list[str]], weights: dict[tuple[str, str], float],
                 first: int, newer: int | None, m: Multipliers, today: int, kept: _Kept, allowed: set[int] | None,
                 parts: dict[int, _Parts] | None = None) -> dict[int, float]:
    """The handoffs dated in weeks [first, newer) (among `allowed`) by rowid, and their scores: every term of such
    a handoff is in blocks of its week, so these are complete. `parts`: also given each one's `_Parts`."""
    raw: dict[int, float] = {}
    when: dict[int, tuple[int, int]] = {}  # a posting of each handoff: all of them hold its day and minutes
    projects: dict[int, int] = {}
    for kind, terms in names.items():
        counted = parts is not None and kind == KIND["project_index"]
        for block in kept.read(conn, kind, terms, first, newer):
            weight = weights[(kind, block.term)]
            for rowid, day, minutes in struct.iter_unpack(">III", bytes.fromhex(block.docs)):
                # Each handoff's weights summed in the order read, so equal term sets give equal sums.
                if rowid in raw:
                    raw[rowid] += weight
                else:
                    raw[rowid] = weight
                    when[rowid] = (day, minutes)
                if counted:
                    projects[rowid] = projects.get(rowid, 0) + 1
    # Thousands of handoffs share a few hundred days and durations: each multiplier computed once.
    recency: dict[int, float] = {}
    duration: dict[int, float] = {}
    scores: dict[int, float] = {}
    for rowid, total in raw.items():
        if allowed is not None and rowid not in allowed:
            continue
        day, minutes = when[rowid]
        if (by_day := recency.get(day)) is None:
            by_day = recency[day] = m.recency(max(1.0, float(today - day + 1)))
        if (by_length := duration.get(minutes)) is None:
            by_length = duration[minutes] = m.duration(minutes)
        scores[rowid] = total * by_day * by_length
        if parts is not None:
            parts[rowid] = _Parts(total, by_day, by_length, projects.get(rowid, 0))
    return scores


def _ranked(conn: sqlite3.Connection, score: dict[int, float]) -> list[Ranked]:
    return ordered([Ranked(row.session_id, score[row.rowid], row.date) for row in handoff_dates(conn, list(score))])


def ordered(rows: list[_R]) -> list[_R]:
    """Rows sorted as every scorer ranks them: score desc, then date desc, then session id."""
    # Stable sorts, least significant key first (a date string cannot be negated for one key).
    rows.sort(key=lambda row: row.session_id)
    rows.sort(key=lambda row: row.date, reverse=True)
    rows.sort(key=lambda row: row.score, reverse=True)
    return rows


def _may_reach(bound: float, threshold: float) -> bool:
    """A bound that could still tie the threshold; the margin absorbs float rounding between the two."""
    return bound * (1.0 + 1e-9) >= threshold
