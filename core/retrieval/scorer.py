"""Ranking handoffs for a query: the original's `keywords` formula, full-text `bm25` (core/index/text_index.py),
and a `hybrid` of both.

`bm25` and `hybrid` rank by relevance at any age: recency only breaks ties (and may add a bounded boost,
`*_RECENCY_BOOST`). `keywords` reproduces the original's formula, its recency window and weekly halving
beyond it included (docs/architecture.md, "The keywords formula"). Every mode keeps only the handoffs its
filters allow (projects, agent, machine, a window of days), never returns substance 0, and falls back to the
most recent substantial handoffs the filters allow when the query has no usable term or nothing matches. The
keywords formula's exact top k comes from core/retrieval/keyword_topk.py, which reads only the recent postings
that can still reach it; the full text's from core/index/text_index.py.
"""

from __future__ import annotations

import bisect
import datetime
import json
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple

from eywa.core.index import readonly, text_index
from eywa.core.index.term_blocks import IndexBounds
from eywa.core.retrieval import keyword_topk
from eywa.core.retrieval.query_tokens import fts_phrases, tokenize_query

if TYPE_CHECKING:
    import sqlite3

Mode = Literal["keywords", "bm25", "hybrid"]

# The original's weights (docs/architecture.md, "The keywords formula"); not meant to be tuned.
PROJECT_WEIGHT = 3.0
KEYWORD_WEIGHT = 2.0

# Tunable defaults, read at call time so a benchmark can set them here or pass them to `rank`; the
# full text's own are in core/index/text_index.py.
# Multipliers. The original's: score *= 1 + 1/sqrt(age) inside the window (14 days unless a query gives
# days_back), halved every 7 days beyond it, and 1 + 0.1 ln(minutes + 1). `bm25` and `hybrid` have no
# window and no boost: ties go to the newer session; a bounded boost cost recall on every set
# (bench/RESULTS.md, "A year of memory").
KEYWORDS_DAYS_BACK = 14
KEYWORDS_RECENCY_BOOST = 1.0
KEYWORDS_DURATION_BOOST = 0.1
BM25_RECENCY_BOOST = 0.0
HYBRID_RECENCY_BOOST = 0.0
# The sessions of the days a query's time words name ("last week", "in March"): score *= 1 + this, in every
# mode. A weight, not a filter: a conversation names the month of what it tells after that month
# (bench/RESULTS.md, "A year of memory").
PREFERRED_BOOST = 1.0
# Hybrid: each ranking's raw scores divided by the best of the sessions fused (`_hybrid` says which),
# then bm25 + HYBRID_KEYWORDS_WEIGHT * keywords. Scores, not ranks (RRF): a clear bm25 lead should
# survive a weak keyword list. The weight: the best of those measured on both sets (bench/RESULTS.md).
HYBRID_KEYWORDS_WEIGHT = 0.08
# How deep the full-text ranking is read before fusing (at least offset + max_results); the keyword
# scores are those of these sessions, or of the keyword ranking's own pool as deep when the full text
# matches fewer sessions or a page of them scores under the keyword weight (see `_hybrid`).
HYBRID_POOL = 100
# A query word held by more distinct keywords than this is common among them (a project's name, "test"): it counts
# only where it is a whole keyword. Each keyword holding it would be a term every query reads; no query of the
# retrieval benchmarks meets the bound (bench/RESULTS.md, "Scale: before and after (issue 29)", part four).
KEYWORD_MATCHES = 300
# What a connection's state keeps of the keywords looked up (the bot and the MCP server answer for days on one
# connection, and every new query word adds to it): the query words' keywords, least recently used dropped, and
# their counts, begun again past this many.
FOUND_KEPT = 1024
COUNTS_KEPT = 200_000


class Hit(NamedTuple):
    session_id: str
    score: float
    match: bool = True  # False: no match, one of the latest sessions listed instead


class _Row(NamedTuple):  # hundreds a hybrid query: a frozen dataclass costs several times as much to make
    session_id: str
    score: float
    date: str
    # The handoff's projects and keywords (JSON lists), when read along: hybrid scores them without
    # looking the sessions up again.
    lists: tuple[str, str] | None = None


def _idf(handoffs: int, df: int) -> float:
    """ln(handoffs / df), at least 0."""
    return max(0.0, math.log(handoffs / df)) if df > 0 else 0.0


class _Projects:
    """The projects with their document frequencies, read whole (they are few), searchable by substring."""

    __slots__ = ("terms", "_df", "_blob", "_starts")

    def __init__(self, counts: readonly.TermCounts) -> None:
        self.terms, df = counts
        self._df = dict(zip(self.terms, df, strict=True))
        self._starts: list[int] = []
        pos = 0
        for term in self.terms:
            self._starts.append(pos)
            pos += len(term) + 1
        # One newline-joined string: a regex scans it in C, far faster than a `token in term` loop.
        self._blob = "\n".join(self.terms)

    def containing(self, token: str) -> list[tuple[str, int]]:
        """(term, df) of the terms equal to or containing `token` (which has no newline, so no match spans
        two terms)."""
        found: list[int] = []
        for match in re.finditer(re.escape(token), self._blob):
            index = bisect.bisect_right(self._starts, match.start()) - 1
            if not found or found[-1] != index:  # a term holding the token twice counts once
                found.append(index)
        return [(self.terms[index], self._df[self.terms[index]]) for index in found]

    def df(self, terms: list[str]) -> dict[str, int]:
        return {term: self._df[term] for term in terms if term in self._df}

    def holds(self, token: str, term: str) -> bool:
        return token in term


class _Keywords:
    """The keywords with their document frequencies, left in the index: their number grows with every handoff,
    so each query asks for the terms holding its tokens and the counts of the terms it meets."""

    __slots__ = ("_conn", "_df", "_found")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._df: dict[str, int | None] = {}  # counts looked up so far; None: no handoff lists it
        self._found: dict[tuple[str, int], tuple[list[tuple[str, int]], bool]] = {}  # containing's, and common

    def containing(self, token: str) -> list[tuple[str, int]]:
        return self._lookup(token)[0]

    def holds(self, token: str, term: str) -> bool:
        """Whether the keyword `term` counts as holding the query word `token`: as a substring, or, for a word
        common among the keywords (KEYWORD_MATCHES), only as the keyword itself."""
        return token in term and (term == token or not self._lookup(token)[1])

    def _lookup(self, token: str) -> tuple[list[tuple[str, int]], bool]:
        key = (token, KEYWORD_MATCHES)
        if key in self._found:
            self._found[key] = self._found.pop(key)  # the most recently used last
            return self._found[key]
        found = readonly.keywords_containing(self._conn, token, KEYWORD_MATCHES + 1)
        common = len(found) > KEYWORD_MATCHES
        if common:
            found = list(self.df([token]).items())
        self._bound_counts()
        self._df.update(found)
        self._found[key] = (found, common)
        if len(self._found) > FOUND_KEPT:
            del self._found[next(iter(self._found))]
        return found, common

    def df(self, terms: list[str]) -> dict[str, int]:
        self._bound_counts()
        missing = [term for term in terms if term not in self._df]
        if missing:
            found = readonly.keyword_counts(self._conn, missing)
            self._df.update({term: found.get(term) for term in missing})
        return {term: count for term in terms if (count := self._df[term]) is not None}

    def _bound_counts(self) -> None:
        """The counts looked up, begun again past COUNTS_KEPT (each is one indexed lookup to read again)."""
        if len(self._df) > COUNTS_KEPT:
            self._df.clear()


class _ConnState(NamedTuple):
    conn: sqlite3.Connection
    version: tuple[int, int]
    handoffs: int
    projects: _Projects
    keywords: _Keywords
    bounds: IndexBounds
    text_index: Path  # the full-text index's folder
    text_index_key: str  # ... and the key it must hold (`text_index.key_of`)


# Per-connection vocabulary cache, rebuilt (every project and keyword read) only when `readonly.index_version`
# moves. Connections cannot be weakly referenced, so entries hold them; the LRU bound keeps that small.
_CACHE: OrderedDict[int, _ConnState] = OrderedDict()
_CACHE_SIZE = 4
_CACHE_LOCK = threading.Lock()


def _state(conn: sqlite3.Connection) -> _ConnState:
    version = readonly.index_version(conn)
    with _CACHE_LOCK:
        state = _CACHE.get(id(conn))
        if state is not None and state.conn is conn:
            _CACHE.move_to_end(id(conn))
            if state.version == version:
                return state
        else:
            state = None
    state = _ConnState(
        conn=conn,
        version=version,
        handoffs=readonly.handoff_count(conn),
        projects=_Projects(readonly.project_df(conn)),
        keywords=_Keywords(conn),
        bounds=IndexBounds.read(conn),
        text_index=text_index.folder_of(readonly.index_path(conn)),
        text_index_key=text_index.key_of(conn),
    )
    with _CACHE_LOCK:
        _CACHE[id(conn)] = state
        _CACHE.move_to_end(id(conn))
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return state


def _lowered(value: str | None) -> str | None:
    return value.strip().lower() if value and value.strip() else None


def _iso(day: datetime.date | None) -> str | None:
    return day.isoformat() if day else None


def rank(
    conn: sqlite3.Connection,
    query: str | None,
    *,
    mode: Mode,
    now: datetime.date,
    since: datetime.date | None = None,
    until: datetime.date | None = None,
    prefer: tuple[datetime.date | None, datetime.date | None] | None = None,
    days_back: int | None = None,
    max_results: int = 3,
    project: str | None = None,
    offset: int = 0,
    agent: str | None = None,
    machine: str | None = None,
    hybrid_keywords_weight: float | None = None,
    hybrid_pool: int | None = None,
) -> list[Hit]:
    """The best `max_results` handoffs for `query` after skipping `offset` (paging), best first.

    Only handoffs dated `since` to `until` (both included; None: open), of projects whose name contains
    `project`, of that `agent` (core/sources) and `machine`; those dated in `prefer` (since, until) score
    PREFERRED_BOOST more. `days_back` is the recency window of the
    `keywords` formula alone (the original's; None: KEYWORDS_DAYS_BACK); the other modes have no window.
    `hybrid_keywords_weight` weighs the normalised keyword score against bm25's; None means the module
    default. Without a usable query term, or when nothing matches, returns the most recent substantial
    handoffs the filters allow, with score 0.0 and `match` False.
    """
    if mode not in ("keywords", "bm25", "hybrid"):
        raise ValueError(f"unknown mode {mode!r}: use keywords, bm25 or hybrid")
    if isinstance(now, datetime.datetime):
        now = now.date()
    if max_results <= 0:
        return []
    offset = max(0, offset)
    filters = readonly.Filters(_lowered(project), _lowered(agent), _lowered(machine),
                               since.isoformat() if since else None, until.isoformat() if until else None)
    tokens = tokenize_query(query or "")
    if tokens:
        params = _Params(
            conn=conn,
            tokens=tokens,
            phrases=fts_phrases(query or ""),
            now=now,
            days_back=KEYWORDS_DAYS_BACK if days_back is None else days_back,
            filters=filters,
            prefer=None if prefer is None else (_iso(prefer[0]), _iso(prefer[1])),
            hybrid_keywords_weight=HYBRID_KEYWORDS_WEIGHT if hybrid_keywords_weight is None
            else hybrid_keywords_weight,
            hybrid_pool=HYBRID_POOL if hybrid_pool is None else hybrid_pool,
        )
        rows = _ranked(mode, params, max_results, offset)
        if rows:
            return [Hit(row.session_id, row.score) for row in rows]
        if offset > 0 and _ranked(mode, params, 1, 0):
            return []  # paged past the last real hit: don't switch to the recent list mid-paging
    return [Hit(row.session_id, 0.0, match=False)
            for row in readonly.recent(conn, filters, limit=max_results, offset=offset)]


class _Params(NamedTuple):
    conn: sqlite3.Connection
    tokens: list[str]
    phrases: list[str]  # for the full text only: `keywords` keeps the original's tokens
    now: datetime.date
    days_back: int  # the `keywords` formula's window
    filters: readonly.Filters
    hybrid_keywords_weight: float
    hybrid_pool: int
    prefer: tuple[str | None, str | None] | None = None  # ISO days whose sessions score PREFERRED_BOOST more

    def preference(self, date: str) -> float:
        """The multiplier of a handoff of this day."""
        if self.prefer is None:
            return 1.0
        since, until = self.prefer
        return 1.0 + PREFERRED_BOOST if (since is None or date >= since) and (until is None or date <= until) else 1.0

    def in_preferred(self) -> _Params:
        """The same query over the preferred days alone."""
        assert self.prefer is not None
        since = max((d for d in (self.filters.since, self.prefer[0]) if d), default=None)
        until = min((d for d in (self.filters.until, self.prefer[1]) if d), default=None)
        return self._replace(filters=self.filters._replace(since=since, until=until))


def _with_preferred(p: _Params, ranking: Callable[[_Params], list[_Row]]) -> list[_Row]:
    """`ranking` of the query, joined by that of the preferred days alone when it has some (best first): a
    preferred session the first misses could still rise to the top. Raw scores, so those of both agree."""
    rows = ranking(p)
    if p.prefer is None:
        return rows
    seen = {row.session_id for row in rows}
    return keyword_topk.ordered(rows + [row for row in ranking(p.in_preferred()) if row.session_id not in seen])


def _ranked(mode: Mode, p: _Params, limit: int, offset: int) -> list[_Row]:
    if mode == "keywords":
        return _keywords(p, limit, offset)
    if mode == "bm25":
        return _bm25(p, limit, offset)
    return _hybrid(p, limit, offset)


def _term_weights(p: _Params) -> tuple[dict[tuple[str, str], float], dict[tuple[str, str], int]]:
    """The original's weight of each (index table, term) the query's tokens match, and its df."""
    weights: dict[tuple[str, str], float] = {}
    df: dict[tuple[str, str], int] = {}
    handoffs = _state(p.conn).handoffs
    for table, vocab, factor in _tables(p):
        for token in p.tokens:
            for term, count in vocab.containing(token):
                idf = _idf(handoffs, count)
                if idf > 0.0:  # a term in every handoff adds nothing, and must not make a hit on its own
                    key = (table, term)
                    weights[key] = weights.get(key, 0.0) + factor * idf
                    df[key] = count
    return weights, df


def _tables(p: _Params) -> list[tuple[str, _Projects | _Keywords, float]]:
    """Each inverted index's table, vocabulary and weight."""
    state = _state(p.conn)
    return [("project_index", state.projects, PROJECT_WEIGHT), ("keyword_index", state.keywords, KEYWORD_WEIGHT)]


def _keywords(p: _Params, limit: int, offset: int) -> list[_Row]:
    state = _state(p.conn)
    weights, df = _term_weights(p)
    multipliers = keyword_topk.Multipliers(p.now, p.days_back, KEYWORDS_RECENCY_BOOST, KEYWORDS_DURATION_BOOST)
    terms = [keyword_topk.Term(table, term, w, df[(table, term)]) for (table, term), w in weights.items()]

    def top(q: _Params) -> list[_Row]:
        return [_Row(hit.session_id, hit.score, hit.date) for hit in keyword_topk.top(
            q.conn, terms, multipliers, state.bounds, limit=limit + offset, only=_project_rows(q))]

    # Exact: a preferred session of the k best is among the k best preferred ones, any other among the k best.
    return _preferred_first(p, _with_preferred(p, top))[offset : offset + limit]


def _preferred_first(p: _Params, rows: list[_Row]) -> list[_Row]:
    """Rows with the preferred days' multiplier, best first."""
    if p.prefer is None:
        return rows
    return keyword_topk.ordered([row._replace(score=row.score * p.preference(row.date)) for row in rows])


_TERM_FIELD = {"project_index": "projects", "keyword_index": "keywords"}


def _keywords_raw_top(p: _Params, weights: dict[tuple[str, str], float], limit: int) -> list[_Row]:
    """The best `limit` by the keyword formula's raw score (no multipliers). No recency bound could cut a
    common term's postings short here, so the full-text index sums them, far faster than SQL
    (bench/RESULTS.md)."""
    state = _state(p.conn)
    fields = {(_TERM_FIELD[table], term): weight for (table, term), weight in weights.items()}
    return _with_preferred(p, lambda q: _rows(q, text_index.term_top(
        state.text_index, state.text_index_key, fields, limit + 20,
        only=_project_rows(q)))[:limit])  # the margin covers substance-0 handoffs, which `_rows` drops


def _project_rows(p: _Params) -> list[int] | None:
    """The rowids of the handoffs the query's filters keep (None: no filter)."""
    if not any(p.filters):
        return None
    return readonly.filtered_rowids(p.conn, p.filters)


def _rows(p: _Params, hits: list[tuple[int, float]]) -> list[_Row]:
    """Search hits (rowid, raw score) as rows of the handoffs of substance, ordered as every scorer ranks."""
    if not hits:
        return []
    score = dict(hits)
    return keyword_topk.ordered([_Row(row.session_id, float(score[row.rowid]), row.date, (row.projects, row.keywords))
                                 for row in readonly.substantial_listed(p.conn, list(score))])


def _bm25(p: _Params, limit: int, offset: int, *, raw: bool = False) -> list[_Row]:
    """The full-text ranking: raw scores of the best `limit` after `offset` (what hybrid fuses), or those
    of a pool as deep as hybrid's times the recency multipliers."""
    state = _state(p.conn)
    depth = limit + offset if raw else max(p.hybrid_pool, limit + offset)
    # The margin covers substance-0 handoffs, which `_rows` drops.
    found = _with_preferred(p, lambda q: _rows(q, text_index.search(
        state.text_index, state.text_index_key, q.tokens + q.phrases, depth + 20, only=_project_rows(q)))[:depth])
    if not raw:
        multipliers = keyword_topk.Multipliers(p.now, None, BM25_RECENCY_BOOST, 0.0)
        found = _preferred_first(p, [_Row(row.session_id, row.score * multipliers.recency(
            multipliers.age(row.date)), row.date) for row in found])
    return found[offset : offset + limit]


def _hybrid(p: _Params, limit: int, offset: int) -> list[_Row]:
    pool = max(p.hybrid_pool, offset + limit)
    fulltext = _bm25(p, pool, 0, raw=True)
    if len(fulltext) == pool and p.prefer is None:
        # A full pool: the keyword scores of its own sessions (a few rows), normalised by their best. A
        # session outside it could reach at most the keyword weight, so once a page of the pool scores
        # above that, ranking every session the keywords match (as costly as bm25 itself) could change
        # nothing on the page.
        fused = _fused(p, fulltext, _keyword_raw(p, fulltext))
        if len(fused) >= offset + limit and fused[offset + limit - 1].score > p.hybrid_keywords_weight:
            return fused[offset : offset + limit]
    # Otherwise the keyword ranking's own pool joins, normalised by the query's best keyword score.
    weights, _ = _term_weights(p)
    return _fused(p, fulltext, _keywords_raw_top(p, weights, pool) if weights else [])[offset : offset + limit]


def _fused(p: _Params, fulltext: list[_Row], keywords: list[_Row]) -> list[_Row]:
    """bm25 + HYBRID_KEYWORDS_WEIGHT * keywords, each raw score divided by its list's best, times recency and
    the preferred days' multiplier; best first."""
    fused: dict[str, float] = {}
    dates: dict[str, str] = {}
    for rows, weight in ((fulltext, 1.0), (keywords, p.hybrid_keywords_weight)):
        best = rows[0].score if rows else 1.0
        for row in rows:
            fused[row.session_id] = fused.get(row.session_id, 0.0) + weight * row.score / best
            dates[row.session_id] = row.date
    multipliers = keyword_topk.Multipliers(p.now, None, HYBRID_RECENCY_BOOST, 0.0)
    return keyword_topk.ordered([_Row(uid, score * multipliers.recency(multipliers.age(dates[uid]))
                                      * p.preference(dates[uid]), dates[uid])
                                 for uid, score in fused.items() if score > 0.0])


def _keyword_raw(p: _Params, sessions: list[_Row]) -> list[_Row]:
    """The keyword formula's raw score (no multipliers) of these sessions (rows of `_rows`, which hold the
    lists the inverted indexes are made of), best first; those matching no term left out. Their own
    terms' weights, summed as `_term_weights` sums them, without its pass over the whole vocabulary."""
    tables = _tables(p)
    handoffs = _state(p.conn).handoffs
    # The terms of each session's lists that hold a query token (a token never spans two terms), and then the
    # counts of all of them at once.
    listed: list[tuple[_Row, list[list[str]]]] = []
    wanted: list[set[str]] = [set() for _ in tables]
    for row in sessions:
        assert row.lists is not None
        holding = []
        for number, terms in enumerate(row.lists):
            lowered = terms.lower()
            vocab = tables[number][1]
            found = [term for term in text_index.index_terms(json.loads(terms))
                     if any(vocab.holds(token, term) for token in p.tokens)
                     ] if any(token in lowered for token in p.tokens) else []
            wanted[number].update(found)
            holding.append(found)
        listed.append((row, holding))
    weights: list[dict[str, float]] = []
    for (_, vocab, factor), held in zip(tables, wanted, strict=True):
        counts = vocab.df(sorted(held))
        # Summed as `_term_weights` sums them: once for each query token the term holds.
        weights.append({term: sum(factor * _idf(handoffs, count) for token in p.tokens if vocab.holds(token, term))
                        for term, count in counts.items()})
    scored = []
    for row, holding in listed:
        raw = sum(weight.get(term, 0.0) for weight, terms in zip(weights, holding, strict=True) for term in terms)
        if raw > 0.0:
            scored.append(_Row(row.session_id, raw, row.date))
    return keyword_topk.ordered(scored)

