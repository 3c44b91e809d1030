"""Ranking handoffs for a query: the original's `keywords` formula, full-text `bm25` (core/index/text_index.py),
and a `hybrid` of both.

Every mode applies the same recency and duration multipliers, never returns substance 0, and falls
back to the most recent substantial handoffs inside the window when the query has no usable term or
nothing matches. The keywords formula's exact top k comes from core/retrieval/keyword_topk.py, which reads only
the recent postings that can still reach it; the full text's from core/index/text_index.py.
"""

from __future__ import annotations

import bisect
import datetime
import math
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple

import orjson

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
# Multipliers. The original's: score *= 1 + 1/sqrt(age) inside the window, and 1 + 0.1 ln(minutes + 1);
# `bm25` and `hybrid` get no boost inside it (ties go to the newer session): a topical query wants the
# best match (bench/RESULTS.md).
KEYWORDS_RECENCY_BOOST = 1.0
KEYWORDS_DURATION_BOOST = 0.1
BM25_RECENCY_BOOST = 0.0
HYBRID_RECENCY_BOOST = 0.0
# Hybrid: each ranking's raw scores divided by the best of the sessions fused (`_hybrid` says which),
# then bm25 + HYBRID_KEYWORDS_WEIGHT * keywords. Scores, not ranks (RRF): a clear bm25 lead should
# survive a weak keyword list. The weight: the best of those measured on both sets (bench/RESULTS.md).
HYBRID_KEYWORDS_WEIGHT = 0.08
# How deep the full-text ranking is read before fusing (at least offset + max_results); the keyword
# scores are those of these sessions, or of the keyword ranking's own pool as deep when the full text
# matches fewer sessions or a page of them scores under the keyword weight (see `_hybrid`).
HYBRID_POOL = 100


@dataclass(frozen=True)
class Hit:
    session_uuid: str
    score: float


class _Row(NamedTuple):  # hundreds a hybrid query: a frozen dataclass costs several times as much to make
    session_uuid: str
    score: float
    date: str
    # The handoff's projects and keywords (JSON lists), when read along: hybrid scores them without
    # looking the sessions up again.
    lists: tuple[str, str] | None = None


class _Vocabulary:
    """The distinct terms of one inverted index with their document frequencies, searchable by substring."""

    __slots__ = ("terms", "df", "_blob", "_starts", "_idf", "_position")

    def __init__(self, counts: readonly.TermCounts) -> None:
        self.terms, self.df = counts
        self._starts: list[int] = []
        pos = 0
        for term in self.terms:
            self._starts.append(pos)
            pos += len(term) + 1
        # One newline-joined string: a regex scans it in C, far faster than a `token in term` loop.
        self._blob = "\n".join(self.terms)
        self._idf: list[float] | None = None
        self._position: dict[str, int] | None = None

    def containing(self, token: str) -> list[int]:
        """Indexes of the terms equal to or containing `token` (which has no newline, so no match spans
        two terms)."""
        found: list[int] = []
        for match in re.finditer(re.escape(token), self._blob):
            index = bisect.bisect_right(self._starts, match.start()) - 1
            if not found or found[-1] != index:  # a term holding the token twice counts once
                found.append(index)
        return found

    def position(self, term: str) -> int | None:
        """The index of `term` in `terms`, or None."""
        if self._position is None:
            self._position = {term: index for index, term in enumerate(self.terms)}
        return self._position.get(term)

    def idf(self, handoffs: int) -> list[float]:
        """ln(handoffs / df) of each term, at least 0; computed once per vocabulary."""
        if self._idf is None:
            self._idf = [max(0.0, math.log(handoffs / df)) if df > 0 else 0.0 for df in self.df]
        return self._idf


@dataclass
class _ConnState:
    conn: sqlite3.Connection
    version: tuple[int, int]
    handoffs: int
    projects: _Vocabulary
    keywords: _Vocabulary
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
        projects=_Vocabulary(readonly.project_df(conn)),
        keywords=_Vocabulary(readonly.keyword_df(conn)),
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


def rank(
    conn: sqlite3.Connection,
    query: str | None,
    *,
    mode: Mode,
    now: datetime.date,
    days_back: int = 14,
    max_results: int = 3,
    project: str | None = None,
    offset: int = 0,
    agent: str | None = None,
    machine: str | None = None,
    hybrid_keywords_weight: float | None = None,
    hybrid_pool: int | None = None,
) -> list[Hit]:
    """The best `max_results` handoffs for `query` after skipping `offset` (paging), best first.

    `hybrid_keywords_weight` weighs the normalised keyword score against bm25's. None means the module
    default. `agent` keeps only that agent's sessions (core/sources). Without a usable query term, or when nothing
    matches, returns the most recent substantial handoffs within `days_back` days with score 0.0.
    """
    if mode not in ("keywords", "bm25", "hybrid"):
        raise ValueError(f"unknown mode {mode!r}: use keywords, bm25 or hybrid")
    if isinstance(now, datetime.datetime):
        now = now.date()
    if max_results <= 0:
        return []
    offset = max(0, offset)
    project_filter = project.strip().lower() if project and project.strip() else None
    agent_filter = agent.strip().lower() if agent and agent.strip() else None
    machine_filter = machine.strip().lower() if machine and machine.strip() else None
    tokens = tokenize_query(query or "")
    if tokens:
        params = _Params(
            conn=conn,
            tokens=tokens,
            phrases=fts_phrases(query or ""),
            now=now,
            days_back=days_back,
            project=project_filter,
            agent=agent_filter,
            machine=machine_filter,
            hybrid_keywords_weight=HYBRID_KEYWORDS_WEIGHT if hybrid_keywords_weight is None
            else hybrid_keywords_weight,
            hybrid_pool=HYBRID_POOL if hybrid_pool is None else hybrid_pool,
        )
        rows = _ranked(mode, params, max_results, offset)
        if rows:
            return [Hit(row.session_uuid, row.score) for row in rows]
        if offset > 0 and _ranked(mode, params, 1, 0):
            return []  # paged past the last real hit: don't switch to the recent list mid-paging
    return [Hit(row.session_uuid, row.score) for row in _recent(conn, now, days_back, project_filter,
                                                                max_results, offset, agent_filter, machine_filter)]


@dataclass(frozen=True)
class _Params:
    conn: sqlite3.Connection
    tokens: list[str]
    phrases: list[str]  # for the full text only: `keywords` keeps the original's tokens
    now: datetime.date
    days_back: int
    project: str | None
    hybrid_keywords_weight: float
    hybrid_pool: int
    agent: str | None = None
    machine: str | None = None


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
    for table, vocab, factor, idfs in _tables(p):
        for token in p.tokens:
            for index in vocab.containing(token):
                if idfs[index] > 0.0:  # a term in every handoff adds nothing, and must not make a hit on its own
                    key = (table, vocab.terms[index])
                    weights[key] = weights.get(key, 0.0) + factor * idfs[index]
                    df[key] = vocab.df[index]
    return weights, df


def _tables(p: _Params) -> list[tuple[str, _Vocabulary, float, list[float]]]:
    """Each inverted index's table, vocabulary, weight and idf of each term."""
    state = _state(p.conn)
    return [(table, vocab, factor, vocab.idf(state.handoffs)) for table, vocab, factor in (
        ("project_index", state.projects, PROJECT_WEIGHT), ("keyword_index", state.keywords, KEYWORD_WEIGHT))]


def _keywords(p: _Params, limit: int, offset: int) -> list[_Row]:
    state = _state(p.conn)
    weights, df = _term_weights(p)
    multipliers = keyword_topk.Multipliers(p.now, p.days_back, KEYWORDS_RECENCY_BOOST, KEYWORDS_DURATION_BOOST)
    terms = [keyword_topk.Term(table, term, w, df[(table, term)]) for (table, term), w in weights.items()]
    return [_Row(hit.session_uuid, hit.score, hit.date) for hit in keyword_topk.top(
        p.conn, terms, multipliers, state.bounds, limit=limit, offset=offset, only=_project_rows(p))]


_TERM_FIELD = {"project_index": "projects", "keyword_index": "keywords"}


def _keywords_raw_top(p: _Params, weights: dict[tuple[str, str], float], limit: int) -> list[_Row]:
    """The best `limit` by the keyword formula's raw score (no multipliers). No recency bound could cut a
    common term's postings short here, so the full-text index sums them, far faster than SQL
    (bench/RESULTS.md)."""
    state = _state(p.conn)
    hits = text_index.term_top(state.text_index, state.text_index_key, {
        (_TERM_FIELD[table], term): weight for (table, term), weight in weights.items()}, limit + 20,
        only=_project_rows(p))  # the margin covers substance-0 handoffs, which `_rows` drops
    return _rows(p, hits)[:limit]


def _project_rows(p: _Params) -> list[int] | None:
    """The rowids of the handoffs of the query's project, agent and machine filters (None: no filter)."""
    if not p.project and not p.agent and not p.machine:
        return None
    return readonly.filtered_rowids(p.conn, p.project, p.agent, p.machine)


def _rows(p: _Params, hits: list[tuple[int, float]]) -> list[_Row]:
    """Search hits (rowid, raw score) as rows of the handoffs of substance, ordered as every scorer ranks."""
    if not hits:
        return []
    score = dict(hits)
    return keyword_topk.ordered([_Row(row.session_uuid, float(score[row.rowid]), row.date, (row.projects, row.keywords))
                                 for row in readonly.substantial_listed(p.conn, list(score))])


def _bm25(p: _Params, limit: int, offset: int, *, raw: bool = False) -> list[_Row]:
    """The full-text ranking: raw scores of the best `limit` after `offset` (what hybrid fuses), or those
    of a pool as deep as hybrid's times the recency multipliers."""
    state = _state(p.conn)
    depth = limit + offset if raw else max(p.hybrid_pool, limit + offset)
    # The margin covers substance-0 handoffs, which `_rows` drops.
    found = _rows(p, text_index.search(state.text_index, state.text_index_key, p.tokens + p.phrases, depth + 20,
                                       only=_project_rows(p)))[:depth]
    if not raw:
        multipliers = keyword_topk.Multipliers(p.now, p.days_back, BM25_RECENCY_BOOST, 0.0)
        found = keyword_topk.ordered([_Row(row.session_uuid, row.score * multipliers.recency(
            multipliers.age(row.date)), row.date) for row in found])
    return found[offset : offset + limit]


def _hybrid(p: _Params, limit: int, offset: int) -> list[_Row]:
    pool = max(p.hybrid_pool, offset + limit)
    fulltext = _bm25(p, pool, 0, raw=True)
    if len(fulltext) == pool:
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
    """bm25 + HYBRID_KEYWORDS_WEIGHT * keywords, each raw score divided by its list's best, times recency;
    best first."""
    fused: dict[str, float] = {}
    dates: dict[str, str] = {}
    for rows, weight in ((fulltext, 1.0), (keywords, p.hybrid_keywords_weight)):
        best = rows[0].score if rows else 1.0
        for row in rows:
            fused[row.session_uuid] = fused.get(row.session_uuid, 0.0) + weight * row.score / best
            dates[row.session_uuid] = row.date
    multipliers = keyword_topk.Multipliers(p.now, p.days_back, HYBRID_RECENCY_BOOST, 0.0)
    return keyword_topk.ordered([_Row(uid, score * multipliers.recency(multipliers.age(dates[uid])), dates[uid])
                                 for uid, score in fused.items() if score > 0.0])


def _keyword_raw(p: _Params, sessions: list[_Row]) -> list[_Row]:
    """The keyword formula's raw score (no multipliers) of these sessions (rows of `_rows`, which hold the
    lists the inverted indexes are made of), best first; those matching no term left out. Their own
    terms' weights, summed as `_term_weights` sums them, without its pass over the whole vocabulary."""
    weights: dict[tuple[str, str], float] = {}
    tables = _tables(p)
    scored = []
    for row in sessions:
        assert row.lists is not None
        raw = 0.0
        for (table, vocab, factor, idfs), terms in zip(tables, row.lists, strict=True):
            lowered = terms.lower()
            if not any(token in lowered for token in p.tokens):
                continue  # no term of this list holds a query token (a token never spans two terms)
            for term in text_index.index_terms(orjson.loads(terms)):
                weight = weights.get((table, term))
                if weight is None:
                    weight = 0.0
                    held = [token for token in p.tokens if token in term]
                    index = vocab.position(term) if held else None
                    if index is not None and idfs[index] > 0.0:
                        for _ in held:
                            weight += factor * idfs[index]
                    weights[(table, term)] = weight
                raw += weight
        if raw > 0.0:
            scored.append(_Row(row.session_uuid, raw, row.date))
    return keyword_topk.ordered(scored)


def _recent(conn: sqlite3.Connection, now: datetime.date, days_back: int, project: str | None, limit: int,
            offset: int, agent: str | None = None, machine: str | None = None) -> list[_Row]:
    # Same window as the recency multiplier: age_days = days since + 1 <= days_back.
    try:
        cutoff = (now - datetime.timedelta(days=days_back - 1)).isoformat()
    except OverflowError:
        cutoff = "" if days_back > 0 else "9999-12-31~"
    return [_Row(row.session_uuid, 0.0, row.date) for row in readonly.recent(
        conn, cutoff, limit=limit, offset=offset, project=project, agent=agent, machine=machine)]
