"""Full-text ranking skips the query words found in at least half the sessions (their bm25 idf is
clamped to almost nothing) and must return what the full query returns."""

from __future__ import annotations

import datetime as dt

import pytest

from core import scorer
from core.handoff import Handoff
from core.scorer import Hit, fts_match_expression, rank
from core.store import Store

NOW = dt.date(2025, 6, 15)
FILLER = " ".join(f"word{i}" for i in range(20))


def add(store: Store, texts: dict[str, str]) -> None:
    with store.transaction():
        for i, (uid, text) in enumerate(texts.items()):
            handoff = Handoff(session_id=uid, session_uuid=uid, date=NOW - dt.timedelta(days=i), duration="5m",
                              headline=f"Session {uid}", projects=[], keywords=[], substance=1,
                              what_happened=["routine"])
            store.put_handoff(handoff, path=f"{uid}.md", transcript=f"# Session {uid}\n\n### 10:00 User\n\n{text}\n")


def corpus() -> dict[str, str]:
    """'deploy' in every session; 'kraken' and 'parser' in a few, sometimes close together."""
    texts = {f"plain{i}": f"deploy {FILLER} deploy " * (1 + i % 3) for i in range(8)}
    texts |= {
        "close": f"deploy the kraken parser {FILLER}",
        "apart": f"kraken {FILLER} deploy {FILLER} parser",
        "kraken": f"kraken deploy {FILLER} kraken",
        "parser": f"parser {FILLER} deploy",
    }
    return texts


def ranked(store: Store, query: str, **kwargs: object) -> list[Hit]:
    return rank(store.conn, query, mode="hybrid", now=NOW, days_back=400, **kwargs)  # type: ignore[arg-type]


def full_query(monkeypatch: pytest.MonkeyPatch, store: Store, query: str, **kwargs: object) -> list[Hit]:
    with monkeypatch.context() as m:
        m.setattr(scorer, "_common_phrases", lambda *args: set())
        return ranked(store, query, **kwargs)


def assert_same(got: list[Hit], want: list[Hit]) -> None:
    assert [hit.session_uuid for hit in got] == [hit.session_uuid for hit in want]
    assert [hit.score for hit in got] == pytest.approx([hit.score for hit in want], rel=1e-4)


def test_a_word_in_every_session_is_skipped_with_the_same_ranking(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    add(store, corpus())
    statements: list[str] = []
    for query, page in (("deploy kraken parser", 3), ("kraken deploy", 2), ("parser deploy", 2)):
        store.conn.set_trace_callback(statements.append)
        got = ranked(store, query, max_results=page, hybrid_pool=page)
        store.conn.set_trace_callback(None)
        # The page came from one ranking, without "deploy" alone: no fallback to the full query.
        rankings = [sql for sql in statements if "ORDER BY rank" in sql]
        assert len(rankings) == 1 and '"deploy" OR' not in rankings[0] and "NEAR(" in rankings[0]
        statements.clear()
        assert_same(got, full_query(monkeypatch, store, query, max_results=page, hybrid_pool=page))


def test_sessions_with_only_the_common_word_follow_when_the_rarer_words_are_too_few(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    add(store, corpus())
    got = ranked(store, "deploy kraken", max_results=6, hybrid_pool=6)
    assert_same(got, full_query(monkeypatch, store, "deploy kraken", max_results=6, hybrid_pool=6))
    assert {"close", "apart", "kraken"} < {hit.session_uuid for hit in got}
    assert any(hit.session_uuid.startswith("plain") for hit in got)


def test_a_query_of_common_words_only_ranks_them_all(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    add(store, corpus())
    got = ranked(store, "deploy", max_results=3, hybrid_pool=3)
    assert len(got) == 3
    assert_same(got, full_query(monkeypatch, store, "deploy", max_results=3, hybrid_pool=3))


def test_a_word_stops_being_common_when_the_index_grows(store: Store) -> None:
    add(store, {f"s{i}": f"kraken {FILLER}" for i in range(3)} | {"t": "parser"})
    assert scorer._common_phrases(store.conn, scorer._state(store.conn), ["kraken", "parser"]) == {"kraken"}
    add(store, {f"u{i}": "parser" for i in range(4)})
    assert scorer._common_phrases(store.conn, scorer._state(store.conn), ["kraken", "parser"]) == {"parser"}


def test_match_expression_keeps_common_words_only_next_to_others() -> None:
    assert fts_match_expression(["kraken", "deploy", "parser"], common={"deploy"}) == (
        '"kraken" OR "parser" OR NEAR("kraken" "deploy", 10) OR NEAR("deploy" "parser", 10)')
    assert fts_match_expression(["kraken", "deploy", "merge"], common={"deploy", "merge"}) == (
        '"kraken" OR NEAR("kraken" "deploy", 10)')
