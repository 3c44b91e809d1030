"""What the full text holds and how queries reach it: renderer headings only, the session's days in words,
neighbouring query words scored again, dates and version numbers as phrases."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from eywa.core.archive.columns import FULLTEXT_VERSION, fulltext_columns
from eywa.core.handoffs.model import Handoff
from eywa.core.index import text_index
from eywa.core.index.store import Store
from eywa.core.ingest.reindex import refresh_fulltext
from eywa.core.retrieval.query_tokens import fts_phrases
from eywa.core.retrieval.scorer import rank

from .conftest import link_corpus

NOW = dt.date(2023, 12, 1)


def session(day: str, user: str, claude: str = "On it.") -> str:
    """A session as `Renderer.render` writes it: facts, the day heading, then one heading per event."""
    return (f"# Session x\n\n- cwd: /w\n- branch: alex/fix-rewind\n\n## {day}\n\n### 10:00 User\n\n{user}\n\n"
            f"### 10:01 Claude\n\n{claude}\n\n- Bash `go test ./...`\n")


def add(store: Store, sessions: dict[str, tuple[str, str]]) -> None:
    """uid -> (day, what the user said); every handoff is alike but for its date and transcript."""
    with store.transaction():
        for uid, (day, said) in sessions.items():
            handoff = Handoff(short_id=uid, session_id=uid, date=dt.date.fromisoformat(day), duration="5m",
                              headline="A session", projects=["p"], keywords=["misc"], substance=1,
                              what_happened=["routine"])
            store.put_handoff(handoff, path=f"{uid}.md", transcript=session(day, said))


def uids(store: Store, query: str, mode: str = "bm25") -> list[str]:
    return [hit.session_id for hit in rank(store.conn, query, mode=mode, now=NOW, days_back=400, max_results=5)]


# -- the columns ------------------------------------------------------------------------------------


def test_markdown_headings_inside_a_reply_stay_in_the_reply() -> None:
    reply = "Done.\n\n## Summary\n\nThe kraken parser now streams.\n\n### Changes\n\nRewrote the tokenizer."
    columns = fulltext_columns(session("2023-05-08", "Fix the kraken parser\n\n## Context\n\nIt hangs.", reply))
    assert "The kraken parser now streams" in columns.replies and "Rewrote the tokenizer" in columns.replies
    assert "## Summary" in columns.replies and "Changes" not in columns.actions
    assert "It hangs." in columns.prompts
    assert "Bash `go test ./...`" in columns.actions and "go test" not in columns.replies


def test_days_of_the_session_are_in_words_in_context() -> None:
    markdown = session("2023-05-08", "hello") + "\n## 2023-05-09\n\n### 09:00 User\n\nstill here\n"
    columns = fulltext_columns(markdown)
    assert columns.context.splitlines() == ["alex fix rewind", "8 May 2023", "9 May 2023"]
    assert "still here" in columns.prompts


# -- the query phrases -----------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "phrases"), [
    ("What did Nate cook on 9 November, 2022?", ["9 november 2022"]),
    ("the 3rd of May", ["3 may"]),
    ("Nov. 9th and August 11, 2023", ["11 august 2023", "9 november"]),
    ("what happened on 2026-02-17", ["17 february 2026"]),
    ("update to go 1.25.6", ["1 25 6"]),
    ("exclude .entire/ after go-git v5.16.5", ["5 16 5"]),
    ("in March 2023 and 2023-13-01 and March 32", []),  # months are words already; no such days
    ("fix the parser", []),
])
def test_fts_phrases_write_dates_and_versions_as_the_index_does(text: str, phrases: list[str]) -> None:
    assert sorted(fts_phrases(text)) == sorted(phrases)


# -- ranking ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["bm25", "hybrid"])
def test_query_words_close_together_outrank_the_same_words_apart(store: Store, mode: str) -> None:
    filler = " ".join(f"word{i}" for i in range(30))
    add(store, {
        "apart": ("2023-06-01", f"the kraken {filler} then the parser"),
        "close": ("2023-06-01", f"the kraken parser {filler} then the"),
        "other": ("2023-06-01", "nothing to see"),
    })
    assert uids(store, "kraken parser", mode)[:2] == ["close", "apart"]


@pytest.mark.parametrize("mode", ["bm25", "hybrid"])
def test_a_day_in_the_query_finds_the_session_of_that_day(store: Store, mode: str) -> None:
    add(store, {f"s{day}": (f"2022-11-{day:02d}", "we cooked a dish together") for day in (2, 9, 16, 23)})
    assert uids(store, "What dish did Nate cook on 9 November, 2022?", mode)[0] == "s9"
    assert uids(store, "the dish of 2022-11-16", mode)[0] == "s16"
    assert uids(store, "dish on Nov 2nd", mode)[0] == "s2"  # without the phrase, ties go to the newest


def test_a_version_number_in_the_query_finds_its_session(store: Store) -> None:
    add(store, {
        "new": ("2023-06-01", "bump go to 1.25.6 everywhere"),
        "old": ("2023-06-02", "bump go to 1.24.2 everywhere"),
    })
    assert uids(store, "update to go 1.25.6")[0] == "new"
    assert uids(store, "update to go 1.24.2")[0] == "old"


# -- an index split by an older version -------------------------------------------------------------


def test_ingest_splits_the_full_text_again_when_an_older_version_built_the_index(
        env: dict[str, Path]) -> None:
    from eywa.core.api import Eywa
    from eywa.core.config.settings import load_settings

    link_corpus(env["projects"], limit=3)
    eywa = Eywa(load_settings())
    try:
        eywa.ingest(llm=False)
        conn = eywa.store.conn
        fresh = conn.execute("SELECT rowid, prompts, replies, actions, context FROM fulltext ORDER BY rowid").fetchall()
        assert fresh and eywa.store.get_meta("fulltext_version") == FULLTEXT_VERSION
        # What an older eywa left: other columns, an older version.
        with eywa.store.transaction():
            conn.execute("UPDATE fulltext SET prompts = 'stale', replies = '', actions = '', context = ''")
            eywa.store.set_meta("fulltext_version", "1")
        stale = "SELECT COUNT(*) FROM fulltext WHERE prompts = 'stale'"

        def stale_hits() -> list[tuple[int, float]]:
            return text_index.search(eywa.store.text_index_folder, text_index.key_of(conn), ["stale"], 100)

        assert conn.execute(stale).fetchone()[0] == len(fresh)
        assert len(stale_hits()) == len(fresh)
        eywa.ingest(llm=False)  # nothing changed in the transcripts
        again = conn.execute("SELECT rowid, prompts, replies, actions, context FROM fulltext ORDER BY rowid").fetchall()
        assert again == fresh and eywa.store.get_meta("fulltext_version") == FULLTEXT_VERSION
        assert conn.execute(stale).fetchone()[0] == 0
        assert stale_hits() == []
        # The same in one transaction a handoff, as a refresh of a large index goes.
        with eywa.store.transaction():
            conn.execute("UPDATE fulltext SET prompts = 'stale'")
            eywa.store.set_meta("fulltext_version", "1")
        assert refresh_fulltext(eywa.store, eywa.settings.archive_dir, batch_seconds=0) == len(fresh)
        assert conn.execute("SELECT rowid, prompts, replies, actions, context FROM fulltext ORDER BY rowid"
                            ).fetchall() == fresh
        assert refresh_fulltext(eywa.store, eywa.settings.archive_dir) == 0  # current now: nothing to do
        assert stale_hits() == []
    finally:
        eywa.close()
