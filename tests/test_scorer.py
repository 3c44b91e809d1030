from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path

import pytest

from eywa.core.handoffs.model import Handoff
from eywa.core.index import text_index
from eywa.core.index.store import Store
from eywa.core.retrieval.query_tokens import tokenize_query
from eywa.core.retrieval.scorer import HYBRID_KEYWORDS_WEIGHT, HYBRID_RECENCY_BOOST, Hit, Mode, rank

NOW = dt.date(2025, 6, 15)
MODES: tuple[Mode, ...] = ("keywords", "bm25", "hybrid")


def make(uid: str, *, days_ago: int = 0, minutes: int = 0, projects: tuple[str, ...] = (),
         keywords: tuple[str, ...] = (), substance: int = 1, text: str = "routine maintenance") -> Handoff:
    return Handoff(
        short_id=uid[:8], session_id=uid, date=NOW - dt.timedelta(days=days_ago), duration=f"{minutes}m",
        headline=f"Headline {uid}", projects=list(projects), keywords=list(keywords), substance=substance,
        what_happened=[text],
    )


def add(store: Store, *handoffs: Handoff, transcripts: dict[str, str] | None = None) -> None:
    """`transcripts`: what the user said in each session, rendered as the archive markdown does."""
    with store.transaction():
        for handoff in handoffs:
            uid = handoff.session_id
            said = (transcripts or {}).get(uid, "")
            markdown = f"# Session {uid}\n\n### 10:00 User\n\n{said}\n" if said else ""
            store.put_handoff(handoff, path=f"{uid}.md", transcript=markdown)


def uids(hits: list[Hit]) -> list[str]:
    return [hit.session_id for hit in hits]


def recency(age: int, days_back: int = 14) -> float:
    return 1 + 1 / math.sqrt(age) if age <= days_back else 0.5 ** ((age - days_back) / 7)


def duration(minutes: int) -> float:
    return 1 + 0.1 * math.log(minutes + 1)


# -- tokenizer --------------------------------------------------------------------------------------


def test_tokenizer_drops_stopwords_and_filler() -> None:
    assert tokenize_query("What did we do on the API and the UI in that session?") == ["api", "ui"]
    assert tokenize_query("the a of and what did we work session") == []


def test_tokenizer_short_list_and_length() -> None:
    assert tokenize_query("3D js ml/ai go x hr's os tg kb qa llm gpu mcp cli ux") == [
        "3d", "ml", "ai", "hr", "os", "tg", "kb", "qa", "llm", "gpu", "mcp", "cli", "ux"
    ]
    assert tokenize_query("v2 js ab") == []


def test_tokenizer_hyphens_case_dedup_order() -> None:
    assert tokenize_query("--eywa-bot-- -- -x- Follow-Up") == ["eywa-bot", "follow-up"]
    assert tokenize_query("SQLite sqlite, FTS5; sqlite") == ["sqlite", "fts5"]
    assert tokenize_query('"quoted" (paren) col:val a*b') == ["quoted", "paren", "col", "val"]


# -- keywords: the original's formula ---------------------------------------------------------------


def test_keywords_exact_formula(store: Store) -> None:
    add(
        store,
        make("A", days_ago=0, minutes=0, projects=("eywa",), keywords=("sqlite", "fts5")),
        make("B", days_ago=5, minutes=60, projects=("other",), keywords=("sqlite", "sqlite-wal")),
        make("C", days_ago=45, minutes=0, projects=("eywa-bot",), keywords=("telegram",)),
        make("D", days_ago=2, minutes=30, projects=("misc",), keywords=("unrelated",)),
    )
    ln2, ln4 = math.log(4 / 2), math.log(4 / 1)

    hits = rank(store.conn, "sqlite", mode="keywords", now=NOW)
    # B: "sqlite" (df 2) and "sqlite-wal" (df 1, contains the token): 8.26 against A's 2.77.
    assert uids(hits) == ["B", "A"]
    assert hits[0].score == pytest.approx((2 * ln2 + 2 * ln4) * recency(6) * duration(60), abs=1e-9)
    assert hits[1].score == pytest.approx(2 * ln2 * recency(1) * duration(0), abs=1e-9)

    hits = rank(store.conn, "eywa", mode="keywords", now=NOW)
    # "eywa" and "eywa-bot" both contain the token, df 1 each; C is 46 days old, beyond the window.
    assert uids(hits) == ["A", "C"]
    assert hits[0].score == pytest.approx(3 * ln4 * 2.0, abs=1e-9)
    assert hits[1].score == pytest.approx(3 * ln4 * 0.5 ** ((46 - 14) / 7), abs=1e-9)

    hits = rank(store.conn, "What did we do about eywa, sqlite and telegram?", mode="keywords", now=NOW,
                max_results=5)
    expected = {
        "A": (3 * ln4 + 2 * ln2) * recency(1) * duration(0),
        "B": (2 * ln2 + 2 * ln4) * recency(6) * duration(60),
        "C": (3 * ln4 + 2 * ln4) * recency(46) * duration(0),
    }
    assert uids(hits) == sorted(expected, key=lambda uid: -expected[uid])
    for hit in hits:
        assert hit.score == pytest.approx(expected[hit.session_id], abs=1e-9)


def test_project_weight_three_keyword_weight_two(store: Store) -> None:
    add(
        store,
        make("X", projects=("alpha",)),
        make("Y", keywords=("alpha",)),
        make("F1", keywords=("filler",)),
        make("F2", keywords=("other",)),
    )
    hits = rank(store.conn, "alpha", mode="keywords", now=NOW)
    assert uids(hits) == ["X", "Y"]
    assert hits[0].score == pytest.approx(3 * math.log(4) * 2, abs=1e-9)
    assert hits[1].score == pytest.approx(2 * math.log(4) * 2, abs=1e-9)
    assert hits[0].score / hits[1].score == pytest.approx(1.5)


def test_idf_zero_for_term_in_every_handoff(store: Store) -> None:
    add(
        store,
        make("P", days_ago=1, keywords=("common", "rare")),
        make("Q", days_ago=2, keywords=("common",)),
        make("R", days_ago=3, keywords=("common",)),
    )
    # ln(3/3) = 0: the term alone is no hit, so the recent list comes back (score 0).
    hits = rank(store.conn, "common", mode="keywords", now=NOW)
    assert uids(hits) == ["P", "Q", "R"]
    assert all(hit.score == 0.0 for hit in hits)
    # Together with a discriminating term it adds exactly nothing.
    both = rank(store.conn, "common rare", mode="keywords", now=NOW)
    alone = rank(store.conn, "rare", mode="keywords", now=NOW)
    assert uids(both) == uids(alone) == ["P"]
    assert both[0].score == pytest.approx(2 * math.log(3) * recency(2), abs=1e-9)
    assert both[0].score == alone[0].score


def test_recency_inside_and_beyond_window(store: Store) -> None:
    add(
        store,
        make("today", days_ago=0, keywords=("topic",)),
        make("edge", days_ago=13, keywords=("topic",)),  # age 14: last day inside
        make("past", days_ago=14, keywords=("topic",)),  # age 15: first day beyond
        make("old", days_ago=41, keywords=("topic",)),  # age 42: four weeks beyond
        make("f1", keywords=("x1",)),
        make("f2", keywords=("x2",)),
        make("f3", keywords=("x3",)),
        make("f4", keywords=("x4",)),
    )
    base = 2 * math.log(8 / 4)
    hits = rank(store.conn, "topic", mode="keywords", now=NOW, max_results=5)
    assert uids(hits) == ["today", "edge", "past", "old"]
    scores = {hit.session_id: hit.score for hit in hits}
    assert scores["today"] == pytest.approx(base * 2.0, abs=1e-9)
    assert scores["edge"] == pytest.approx(base * (1 + 1 / math.sqrt(14)), abs=1e-9)
    assert scores["past"] == pytest.approx(base * 0.5 ** (1 / 7), abs=1e-9)
    assert scores["old"] == pytest.approx(base * 0.5 ** 4, abs=1e-9)
    # A wider window takes "past" inside.
    wide_hits = rank(store.conn, "topic", mode="keywords", now=NOW, days_back=30)
    wide = {hit.session_id: hit.score for hit in wide_hits}
    assert wide["past"] == pytest.approx(base * (1 + 1 / math.sqrt(15)), abs=1e-9)


def test_duration_boost(store: Store) -> None:
    add(
        store,
        make("short", minutes=0, keywords=("topic",)),
        make("long", minutes=120, keywords=("topic",)),
        make("f1", keywords=("x1",)),
    )
    hits = rank(store.conn, "topic", mode="keywords", now=NOW)
    assert uids(hits) == ["long", "short"]
    assert hits[0].score / hits[1].score == pytest.approx(1 + 0.1 * math.log(121), abs=1e-12)


def test_substring_matches_count_each_term_once(store: Store) -> None:
    add(
        store,
        make("R", keywords=("api-to-api",)),  # contains the token twice: still one +2 idf
        make("S", keywords=("rapid",)),  # the original's substring noise, kept on purpose
        make("f1", keywords=("x1",)),
        make("f2", keywords=("x2",)),
    )
    hits = rank(store.conn, "api", mode="keywords", now=NOW)
    assert uids(hits) == ["R", "S"]
    assert hits[0].score == pytest.approx(2 * math.log(4) * 2, abs=1e-9)
    assert hits[1].score == pytest.approx(hits[0].score, abs=1e-9)


@pytest.mark.parametrize("mode", ["keywords", "hybrid"])
def test_a_word_common_among_the_keywords_counts_only_as_a_whole_keyword(store: Store, mode: Mode,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A query word held by more keywords than KEYWORD_MATCHES matches the keyword that is the word alone; held by
    fewer, every keyword holding it, as the original's formula does."""
    from eywa.core.retrieval import scorer

    add(store, make("A", keywords=("api",)), make("B", keywords=("api-gateway", "rapid")),
        make("C", keywords=("graphql-api", "api-keys")), make("D", keywords=("other",)))
    assert set(uids(rank(store.conn, "api", mode=mode, now=NOW))) == {"A", "B", "C"}
    monkeypatch.setattr(scorer, "KEYWORD_MATCHES", 4)  # 5 keywords hold "api"
    hits = rank(store.conn, "api", mode=mode, now=NOW)
    assert [(hit.session_id, hit.match) for hit in hits][:1] == [("A", True)]
    assert all(not hit.match for hit in hits[1:])
    if mode == "keywords":
        assert hits[0].score == pytest.approx(2 * math.log(4) * 2, abs=1e-9)
    monkeypatch.setattr(scorer, "KEYWORD_MATCHES", 5)
    assert set(uids(rank(store.conn, "api", mode=mode, now=NOW))) == {"A", "B", "C"}


def test_ties_by_date_then_uuid(store: Store) -> None:
    add(
        store,
        make("b", days_ago=3, keywords=("tie",)),
        make("a", days_ago=3, keywords=("tie",)),
        make("f1", keywords=("x1",)),
    )
    assert uids(rank(store.conn, "tie", mode="keywords", now=NOW)) == ["a", "b"]


# -- common behaviour -------------------------------------------------------------------------------


def test_substance_zero_never_returned(store: Store) -> None:
    zero = make("Z", keywords=("zeta",), projects=("zeta",), substance=0)
    zero = zero.model_copy(update={"raw_body": "# zeta\n\nNo meaningful work. zeta\n"})
    add(store, zero, make("S", days_ago=1, keywords=("other",)), transcripts={"Z": "zeta zeta zeta"})
    for mode in MODES:
        for query in ("zeta", None, ""):
            assert "Z" not in uids(rank(store.conn, query, mode=mode, now=NOW, max_results=5))


def test_empty_query_or_no_hit_returns_recent_substantial_of_any_age_no_match(store: Store) -> None:
    add(
        store,
        make("d0", days_ago=0),
        make("d3b", days_ago=3),
        make("d3a", days_ago=3),
        make("d13", days_ago=13),
        make("d14", days_ago=14),
        make("d300", days_ago=300),
        make("zero", days_ago=1, substance=0),
        make("kw", days_ago=400, keywords=("something",)),
    )
    for mode in MODES:
        for query in (None, "", "   ", "what did we work on in the session?", "xyzzy-nothing", "!!"):
            hits = rank(store.conn, query, mode=mode, now=NOW, max_results=7)
            assert uids(hits) == ["d0", "d3a", "d3b", "d13", "d14", "d300", "kw"], (mode, query)
            assert all(hit.score == 0.0 and not hit.match for hit in hits)
            # ... of the days a window keeps, when a query gives one
            window = rank(store.conn, query, mode=mode, now=NOW, max_results=7, since=NOW - dt.timedelta(days=13),
                          until=NOW - dt.timedelta(days=1))
            assert uids(window) == ["d3a", "d3b", "d13"], (mode, query)


def test_project_filter(store: Store) -> None:
    add(
        store,
        make("e1", days_ago=1, projects=("eywa",), keywords=("shared",), text="shared words"),
        make("e2", days_ago=2, projects=("eywa-bot",), keywords=("shared",), text="shared words"),
        make("o1", days_ago=0, projects=("Other",), keywords=("shared",), text="shared words"),
        make("n1", days_ago=0, keywords=("unrelated",)),
    )
    for mode in MODES:
        assert set(uids(rank(store.conn, "shared", mode=mode, now=NOW, project="EYWA", max_results=5))) == {
            "e1", "e2"}
        assert uids(rank(store.conn, "shared", mode=mode, now=NOW, project="eywa-bot")) == ["e2"]
        assert uids(rank(store.conn, "shared", mode=mode, now=NOW, project="other")) == ["o1"]
        # The recent fallback is filtered too.
        assert uids(rank(store.conn, None, mode=mode, now=NOW, project="eywa")) == ["e1", "e2"]


def test_offset_paging(store: Store) -> None:
    pages = [make(f"p{i}", days_ago=i, keywords=("page",), text="page") for i in range(7)]
    add(store, *pages, make("f", keywords=("x",)))
    for mode in MODES:
        for query, count in (("page", 7), (None, 8)):
            full = uids(rank(store.conn, query, mode=mode, now=NOW, max_results=20))
            paged: list[str] = []
            for offset in range(0, 12, 3):
                paged += uids(rank(store.conn, query, mode=mode, now=NOW, max_results=3, offset=offset))
            assert paged == full
            assert len(full) == count
        # Past the last real hit: empty, not the recent list.
        assert rank(store.conn, "page", mode=mode, now=NOW, max_results=3, offset=7) == []


# -- bm25 and hybrid --------------------------------------------------------------------------------


def test_bm25_finds_word_only_in_transcript(store: Store) -> None:
    add(
        store,
        make("T", days_ago=20, keywords=("misc",)),
        make("U", days_ago=0, keywords=("misc",)),
        transcripts={"T": "we chased the zanzibar race condition and a follow-up email", "U": "nothing here"},
    )
    hits = rank(store.conn, "zanzibar", mode="bm25", now=NOW)
    assert uids(hits) == ["T"]
    assert hits[0].score > 0
    assert rank(store.conn, "zanzibar", mode="keywords", now=NOW)[0].score == 0.0  # keywords can't see it
    assert uids(rank(store.conn, "follow-up", mode="bm25", now=NOW)) == ["T"]
    assert uids(rank(store.conn, "chasing conditions", mode="bm25", now=NOW)) == ["T"]  # porter stemming


def test_bm25_leaves_age_to_ties_and_weighs_what_the_user_wrote_apart(store: Store,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    add(
        store,
        make("new", days_ago=0, text="kraken"),
        make("old", days_ago=400, text="kraken"),
        make("tr", days_ago=0),
        *(make(f"other{i}") for i in range(3)),  # "kraken" in most sessions would weigh next to nothing
        transcripts={"tr": "kraken"},
    )
    monkeypatch.setattr(text_index, "PROMPTS_WEIGHT", 0.0)
    hits = rank(store.conn, "kraken", mode="bm25", now=NOW)
    assert uids(hits)[:2] == ["new", "old"]  # the same match: the newer first, a year on at the same score
    assert hits[0].score == hits[1].score
    monkeypatch.setattr(text_index, "PROMPTS_WEIGHT", 10.0)
    assert uids(rank(store.conn, "kraken", mode="bm25", now=NOW))[0] == "tr"


@pytest.mark.parametrize("mode", ["bm25", "hybrid"])
def test_relevance_decides_at_any_age(store: Store, mode: Mode) -> None:
    """The session that matches best comes first, a week or a year later alike: recency only breaks ties."""
    add(
        store,
        make("right", days_ago=300, keywords=("linear", "document"), text="attached the linear document to the issue"),
        make("newer", days_ago=0, keywords=("changelog",), text="a document for the changelog"),
        make("week", days_ago=2, keywords=("issue",), text="an issue with the linter"),
        *(make(f"other{i}", days_ago=i) for i in range(4)),
    )
    query = "linear document attached to the issue"
    for now in (NOW, NOW + dt.timedelta(days=300), NOW + dt.timedelta(days=3650)):
        hits = rank(store.conn, query, mode=mode, now=now)
        assert uids(hits)[0] == "right", now
        assert [hit.score for hit in hits] == [hit.score for hit in rank(store.conn, query, mode=mode, now=NOW)]


def test_preferred_days_rank_first_without_hiding_the_rest(store: Store) -> None:
    """Time words' days: their sessions score 1 + PREFERRED_BOOST times more; a far better match elsewhere
    still shows, and a filter would not hold it."""
    add(
        store,
        make("march", days_ago=100, keywords=("rewind",), text="the rewind fix"),
        make("april", days_ago=70, keywords=("rewind", "restore"), text="the rewind fix and the rewind test"),
        make("else", days_ago=5, keywords=("other",), text="something else"),
        *(make(f"other{i}", days_ago=i) for i in range(4)),
    )
    march = (NOW - dt.timedelta(days=105), NOW - dt.timedelta(days=95))
    for mode in ("bm25", "hybrid"):  # keywords: the original's weekly halving outweighs it (test_keyword_topk.py)
        plain = rank(store.conn, "rewind", mode=mode, now=NOW)
        assert uids(plain)[:2] == ["april", "march"], mode
        preferred = rank(store.conn, "rewind", mode=mode, now=NOW, prefer=march)
        assert uids(preferred)[:2] == ["march", "april"], mode
        assert all(hit.match for hit in preferred)
        # Paging a preferred ranking: the pages join up.
        pages = [uid for offset in (0, 1) for uid in
                 uids(rank(store.conn, "rewind", mode=mode, now=NOW, prefer=march, max_results=1, offset=offset))]
        assert pages == ["march", "april"], mode


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "query",
    ['"', '"unbalanced', "foo AND", "AND", "OR OR", "NOT", "*", "foo*", "col:val", "handoff:x", "(", "(a OR",
     ")", "-", "-foo", "--", "NEAR(a b)", "^start", "+", "{a b}", "a\"b'c", "'; DROP TABLE handoffs; --",
     "\x00", "ünïcödé 日本語", "api:3d-print*"],
)
def test_fts_special_characters_never_raise(store: Store, query: str, mode: Mode) -> None:
    add(store, make("A", keywords=("api", "foo")), transcripts={"A": "foo start val"})
    hits = rank(store.conn, query, mode=mode, now=NOW)
    assert isinstance(hits, list)
    assert store.conn.execute("SELECT COUNT(*) FROM handoffs").fetchone()[0] == 1


def test_hybrid_returns_hits_of_either_method(store: Store) -> None:
    add(
        store,
        make("K", days_ago=0, keywords=("quasar",)),  # keyword only: "quasar" is not in its text
        make("T", days_ago=0, keywords=("misc",)),  # transcript only
        make("B", days_ago=10, keywords=("quasar",)),  # both, but older
        make("F", days_ago=0, keywords=("other",)),
        transcripts={"T": "the zanzibar outage", "B": "zanzibar again"},
    )
    query = "quasar zanzibar"
    assert uids(rank(store.conn, query, mode="keywords", now=NOW)) == ["K", "B"]
    bm25 = uids(rank(store.conn, query, mode="bm25", now=NOW))
    assert set(bm25) == {"T", "B"}
    hybrid = rank(store.conn, query, mode="hybrid", now=NOW)
    assert uids(hybrid)[0] == "B" and set(uids(hybrid)) == {"B", "K", "T"}  # B is found by both
    # Each list's raw scores are divided by its best; K has only its keyword share.
    scores = {hit.session_id: hit.score for hit in hybrid}
    assert scores["K"] == pytest.approx(HYBRID_KEYWORDS_WEIGHT * (1 + HYBRID_RECENCY_BOOST))
    assert set(uids(rank(store.conn, query, mode="hybrid", now=NOW, hybrid_keywords_weight=0.0))) == {"T", "B"}
    only_bm25 = rank(store.conn, "zanzibar", mode="hybrid", now=NOW)
    assert set(uids(only_bm25)) == {"T", "B"}


def test_hybrid_with_a_full_pool_weighs_the_keywords_of_its_full_text_matches_only(store: Store) -> None:
    add(
        store,
        make("T1", keywords=("misc",)),
        make("T2", keywords=("quasar",)),  # the same text as T1 and T3, and the keyword
        make("T3", keywords=("other",)),
        make("K", keywords=("quasar", "quasarnet")),  # keywords only, scoring higher than T2's
        transcripts={uid: "the zanzibar outage" for uid in ("T1", "T2", "T3")},
    )
    # Three full-text matches fill a pool of three and all score above the keyword weight: K, outside the
    # pool, could gain no more than that, so only the pool's keywords count, normalised by their best.
    hits = rank(store.conn, "zanzibar quasar", mode="hybrid", now=NOW, max_results=3, hybrid_pool=3)
    assert uids(hits) == ["T2", "T1", "T3"]
    assert hits[0].score == pytest.approx(hits[1].score + HYBRID_KEYWORDS_WEIGHT)
    # A pool the full text cannot fill takes the keyword ranking's sessions too.
    assert "K" in uids(rank(store.conn, "zanzibar quasar", mode="hybrid", now=NOW, max_results=4, hybrid_pool=4))


def test_hybrid_lets_a_keyword_match_outrank_pool_sessions_that_score_under_the_keyword_weight(
        store: Store) -> None:
    # "outage" is in most sessions: bm25 gives it next to nothing, so the pool's sessions but A score ~0.
    common = {f"C{i}": "the outage again" for i in range(6)}
    add(store, make("A"), make("K", keywords=("myquasarlib",)), *(make(uid) for uid in common),
        transcripts={"A": "the quasar outage in zanzibar", **common})
    hits = rank(store.conn, "zanzibar quasar outage", mode="hybrid", now=NOW, max_results=3, hybrid_pool=3)
    assert uids(hits)[:2] == ["A", "K"]
    assert hits[1].score == pytest.approx(HYBRID_KEYWORDS_WEIGHT)


def test_index_changes_are_seen(store: Store, tmp_path: Path) -> None:
    add(store, make("A", keywords=("alpha",)), make("B", keywords=("beta",)))
    assert uids(rank(store.conn, "alpha", mode="keywords", now=NOW)) == ["A"]
    add(store, make("C", keywords=("gamma",)))  # same connection
    assert uids(rank(store.conn, "gamma", mode="keywords", now=NOW)) == ["C"]
    add(store, make("A", keywords=("delta",)))  # replaced: same count, new vocabulary
    assert rank(store.conn, "alpha", mode="keywords", now=NOW)[0].score == 0.0
    assert uids(rank(store.conn, "delta", mode="keywords", now=NOW)) == ["A"]
    other = Store(tmp_path / "i.db")  # another connection writes
    try:
        add(other, make("D", keywords=("epsilon",)))
    finally:
        other.close()
    assert uids(rank(store.conn, "epsilon", mode="keywords", now=NOW)) == ["D"]


def test_rejects_unknown_mode_and_handles_datetime(store: Store) -> None:
    add(store, make("A", keywords=("alpha",)), make("B"))
    with pytest.raises(ValueError):
        rank(store.conn, "alpha", mode="semantic", now=NOW)  # type: ignore[arg-type]
    at_noon = dt.datetime(NOW.year, NOW.month, NOW.day, 12, 0)
    expected = rank(store.conn, "alpha", mode="keywords", now=NOW)
    assert rank(store.conn, "alpha", mode="keywords", now=at_noon) == expected
    assert rank(store.conn, "alpha", mode="keywords", now=NOW, max_results=0) == []


@pytest.mark.parametrize("common_above", [300, 1])
def test_hybrid_pool_keyword_scores_equal_the_query_term_weights_summed(store: Store, common_above: int,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The pool's keyword scores, from each session's own terms, are what the vocabulary-wide weights give:
    substrings, a term holding two query tokens, mixed case, a term in every handoff (idf 0), projects, and
    words common among the keywords (`common_above` 1: each word held by two keywords or more)."""
    from eywa.core.retrieval import scorer

    monkeypatch.setattr(scorer, "KEYWORD_MATCHES", common_above)

    add(store,
        make("A", projects=("Eywa-Bot",), keywords=("Telegram-Digest", "voice", "MISC")),
        make("B", projects=("eywa",), keywords=("digest-voice", "misc")),
        make("C", keywords=("misc", "voice-notes", "telegram")),
        make("D", projects=("other",), keywords=("misc",)),
        transcripts={uid: "a digest of the day" for uid in "ABCD"})
    for query in ("digest voice", "eywa telegram", "misc voice", "bot digest eywa", "nothing here"):
        p = scorer._Params(store.conn, tokenize_query(query), [], NOW, 14, None, HYBRID_KEYWORDS_WEIGHT, 100)
        rows = scorer._rows(p, [(rowid, 1.0) for (rowid,) in store.conn.execute("SELECT rowid FROM handoffs")])
        weights, _ = scorer._term_weights(p)
        expected = {}
        for row in rows:
            projects, keywords = (text_index.index_terms(json.loads(column)) for column in row.lists)
            raw = sum(weights.get(("project_index", t), 0.0) for t in projects) + sum(
                weights.get(("keyword_index", t), 0.0) for t in keywords)
            if raw > 0:
                expected[row.session_id] = raw
        assert {row.session_id: row.score for row in scorer._keyword_raw(p, rows)} == pytest.approx(expected)
        assert bool(expected) == (query != "nothing here")
