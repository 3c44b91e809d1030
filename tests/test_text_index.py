"""The full-text index (core/index/text_index.py): kept in step with the store's `fulltext` table through every
change, a crash and an upgrade, and ranking as BM25 with proximity should."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from eywa.core.errors import StoreError
from eywa.core.handoffs.model import SECTION_TITLES, Handoff
from eywa.core.index import text_index
from eywa.core.index.store import Store
from eywa.core.retrieval.scorer import rank

NOW = dt.date(2025, 6, 15)
FILLER = " ".join(f"word{i}" for i in range(20))


def handoff(uid: str, *, days_ago: int = 0, projects: tuple[str, ...] = ()) -> Handoff:
    return Handoff(short_id=uid, session_id=uid, date=NOW - dt.timedelta(days=days_ago), duration="5m",
                   headline=f"Session {uid}", projects=list(projects), keywords=[], substance=1,
                   what_happened=["routine"])


def add(store: Store, texts: dict[str, str], projects: tuple[str, ...] = ()) -> None:
    with store.transaction():
        for i, (uid, text) in enumerate(texts.items()):
            store.put_handoff(handoff(uid, days_ago=i, projects=projects), path=f"{uid}.md",
                              transcript=f"# Session {uid}\n\n### 10:00 User\n\n{text}\n")


def found(store: Store, *words: str) -> list[str]:
    """The sessions the index returns for `words`, best first."""
    hits = text_index.search(store.text_index_folder, text_index.key_of(store.conn), list(words), 50)
    names = dict(store.conn.execute("SELECT rowid, session_uuid FROM handoffs"))
    return [names[rid] for rid, _ in hits]


def queued(store: Store) -> int:
    return store.conn.execute("SELECT COUNT(*) FROM text_index_queue").fetchone()[0]


def test_every_change_to_the_full_text_reaches_the_index(store: Store) -> None:
    add(store, {"a": "the kraken parser", "b": "a quiet week"})
    assert found(store, "kraken") == ["a"] and queued(store) == 0
    add(store, {"a": "the leviathan parser"})  # the session again, changed
    assert found(store, "kraken") == [] and found(store, "leviathan") == ["a"]
    with store.transaction():
        store.delete_handoff("a")
    assert found(store, "leviathan") == [] and found(store, "week") == ["b"]
    with store.transaction():
        store.clear_index()
    assert found(store, "week") == [] and queued(store) == 0


def test_words_are_stemmed_alike_in_sessions_and_queries(store: Store) -> None:
    add(store, {"a": "we were chasing race conditions", "b": "nothing here"})
    assert found(store, "chased", "condition") == ["a"]


def test_a_change_committed_before_a_crash_reaches_the_index_on_the_next_open(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store(tmp_path / "i.db")
    with monkeypatch.context() as m:
        def crash(*args: object) -> int:
            raise KeyboardInterrupt  # the process dies between SQLite's commit and the index's
        m.setattr(text_index, "ensure", crash)
        with pytest.raises(KeyboardInterrupt):
            add(store, {"a": "the kraken parser"})
    store.close()
    store = Store(tmp_path / "i.db")
    try:
        assert found(store, "kraken") == ["a"] and queued(store) == 0
    finally:
        store.close()


def test_a_missing_or_older_index_folder_is_rebuilt_from_the_store(tmp_path: Path) -> None:
    store = Store(tmp_path / "i.db")
    add(store, {"a": "the kraken parser", "b": "a quiet week"})
    folder, key = store.text_index_folder, text_index.key_of(store.conn)
    store.close()
    shutil.rmtree(folder)
    assert text_index.search(folder, key, ["kraken"], 5) == []  # a reader before any store reopened: nothing
    store = Store(tmp_path / "i.db")
    assert found(store, "kraken") == ["a"]
    store.close()
    (folder / "eywa-version").write_text(f"0 {key}")  # written by an older eywa
    (folder / "meta.json").unlink()
    store = Store(tmp_path / "i.db")
    try:
        assert found(store, "kraken") == ["a"] and found(store, "week") == ["b"]
        assert (folder / "eywa-version").read_text() == f"{text_index.VERSION} {key}"
    finally:
        store.close()


def test_a_new_index_file_beside_an_old_folder_never_reads_it(tmp_path: Path) -> None:
    store = Store(tmp_path / "i.db")
    add(store, {"a": "the kraken parser", "b": "a quiet week"})
    store.close()
    for path in tmp_path.glob("i.db*"):
        path.unlink()
    store = Store(tmp_path / "i.db")  # same folder, another SQLite index: its rowids mean other sessions
    try:
        add(store, {"c": "a quiet week"})
        assert found(store, "kraken") == [] and found(store, "week") == ["c"]
    finally:
        store.close()


def test_an_index_of_schema_3_keeps_its_text_and_becomes_searchable(tmp_path: Path) -> None:
    store = Store(tmp_path / "i.db")
    add(store, {"a": "the kraken parser", "b": "a quiet week"})
    rows = store.conn.execute("SELECT id, session_uuid, handoff, prompts, replies, actions, context FROM fulltext"
                              " ORDER BY id").fetchall()
    store.close()
    # What schema 3 had: the same text in an FTS5 table.
    conn = sqlite3.connect(tmp_path / "i.db", isolation_level=None)
    conn.executescript(
        "DROP TABLE fulltext; CREATE VIRTUAL TABLE fulltext USING fts5(session_uuid UNINDEXED, handoff, prompts,"
        " replies, actions, context, tokenize = 'porter unicode61');"
        "UPDATE meta SET value = '3' WHERE key = 'schema_version'; DROP TABLE migrations;")
    conn.executemany("INSERT INTO fulltext(rowid, session_uuid, handoff, prompts, replies, actions, context)"
                     " VALUES(?, ?, ?, ?, ?, ?, ?)", rows)
    conn.close()
    shutil.rmtree(text_index.folder_of(tmp_path / "i.db"))
    store = Store(tmp_path / "i.db")
    try:
        assert store.conn.execute("SELECT id, session_uuid, handoff, prompts, replies, actions, context"
                                  " FROM fulltext ORDER BY id").fetchall() == rows
        assert found(store, "kraken") == ["a"]
    finally:
        store.close()


def test_a_word_in_every_session_barely_counts(store: Store) -> None:
    texts = {f"plain{i}": f"deploy {FILLER} deploy " * (1 + i % 3) for i in range(8)}
    add(store, texts | {"kraken": f"deploy the kraken {FILLER}"})
    assert found(store, "deploy", "kraken")[0] == "kraken"


def test_proximity_rescores_the_best_sessions_of_the_word_scores(store: Store, monkeypatch: pytest.MonkeyPatch
                                                                  ) -> None:
    add(store, {
        "apart": f"kraken {FILLER} parser",
        "close": f"kraken parser {FILLER}",
        "one": f"kraken kraken {FILLER}",
    })
    assert found(store, "kraken", "parser")[:2] == ["close", "apart"]
    monkeypatch.setattr(text_index, "PROXIMITY_SLOP", 0)
    scores = dict(text_index.search(store.text_index_folder, text_index.key_of(store.conn), ["kraken", "parser"], 5))
    assert len(set(scores.values()) & {scores[1], scores[2]}) == 1  # "apart" and "close" tie without it


def test_proximity_counts_the_words_of_one_message_only(store: Store) -> None:
    # The same words, so the same BM25: "kraken" closing one prompt and "parser" opening the next are no phrase.
    prompts = {"two": ["we met a kraken", f"parser {FILLER}"], "one": [f"we met a kraken parser {FILLER}"]}
    with store.transaction():
        for i, (uid, texts) in enumerate(prompts.items()):
            events = "".join(f"\n### 10:0{n} User\n\n{text}\n" for n, text in enumerate(texts))
            store.put_handoff(handoff(uid, days_ago=i), path=f"{uid}.md", transcript=f"# Session {uid}\n{events}")
    scores = text_index.search(store.text_index_folder, text_index.key_of(store.conn), ["kraken", "parser"], 5)
    assert found(store, "kraken", "parser") == ["one", "two"] and scores[0][1] > scores[1][1]


def test_proximity_adds_at_most_its_cap_times_the_word_score(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    # 189d8afc and eb4bcc15: "packed" says the query in one line, twice (a change line and the report it came from), in
    # a short session; "built" says its words more often, apart, in a longer one, and wins once the pairs are bounded.
    words = ["calculate", "token", "usage", "store", "metadata", "json"]
    gap, line = " ".join(f"gap{i}" for i in range(11)), " ".join(words)
    add(store, {"packed": f"{line} {gap} {line} " + " ".join([gap] * 6),
                "built": " ".join(f"{word} {gap}" for word in words) + f" {line}"}
        | {f"other{i}": FILLER for i in range(6)})
    rows = dict(store.conn.execute("SELECT session_uuid, rowid FROM handoffs"))

    def scores() -> dict[int, float]:
        return dict(text_index.search(store.text_index_folder, text_index.key_of(store.conn), words, 5))

    with_cap = scores()
    monkeypatch.setattr(text_index, "PROXIMITY_CAP", float("inf"))
    assert scores() == with_cap  # at the default cap neither session's pairs reach it here
    assert found(store, *words)[0] == "packed"
    slop = text_index.PROXIMITY_SLOP
    monkeypatch.setattr(text_index, "PROXIMITY_SLOP", 0)
    word_scores = scores()
    monkeypatch.setattr(text_index, "PROXIMITY_SLOP", slop)
    monkeypatch.setattr(text_index, "PROXIMITY_CAP", 0.5)
    assert scores()[rows["packed"]] == pytest.approx(1.5 * word_scores[rows["packed"]])
    assert found(store, *words)[0] == "built"


def test_a_line_said_again_in_a_session_counts_once(store: Store) -> None:
    # git's error pasted in two prompts weighs as pasted once: "twice" holds the same words as "once" after it.
    error = "Please make sure you have the correct access rights"
    prompts = {"twice": [f"{error}\nkraken", f"{error}\n{FILLER}"], "once": [f"{error}\nkraken", FILLER],
               "other": [f"kraken rights {FILLER}"]}
    with store.transaction():
        for i, (uid, texts) in enumerate(prompts.items()):
            events = "".join(f"\n### 10:0{n} User\n\n{text}\n" for n, text in enumerate(texts))
            store.put_handoff(handoff(uid, days_ago=i), path=f"{uid}.md", transcript=f"# Session {uid}\n{events}")
    scores = dict(text_index.search(store.text_index_folder, text_index.key_of(store.conn), ["correct", "rights"], 5))
    rows = dict(store.conn.execute("SELECT session_uuid, rowid FROM handoffs"))
    assert scores[rows["twice"]] == scores[rows["once"]]


def test_a_handoff_line_another_line_nearly_repeats_counts_once(store: Store) -> None:
    # 189d8afc's report change line said again by an Insight: "twice" weighs as "once"; Key Files lines, whose paths
    # share most of their words, all count
    line = "Added `TokenUsage` to `SaveContext` and stored it in `metadata.json`"
    with store.transaction():
        for i, (uid, lines) in enumerate({"twice": [line, f"`strategy.go`: added {line[6:]}"], "once": [line]}.items()):
            said = handoff(uid, days_ago=i)
            said.what_happened = lines
            store.put_handoff(said, path=f"{uid}.md", transcript=f"# Session {uid}\n\n### 10:00 User\n\n{FILLER}\n")
        files = handoff("files", days_ago=2)
        files.substance = 2
        files.key_files = ["`cmd/entire/cli/agent/openclaw/hooks.go` (5 edits)",
                          "`cmd/entire/cli/agent/openclaw/hooks_test.go` (2 edits)"]
        store.put_handoff(files, path="files.md", transcript=f"# Session files\n\n### 10:00 User\n\n{FILLER}\n")
    scores = dict(text_index.search(store.text_index_folder, text_index.key_of(store.conn), ["metadata", "json"], 5))
    rows = dict(store.conn.execute("SELECT session_uuid, rowid FROM handoffs"))
    assert scores[rows["twice"]] == scores[rows["once"]]
    assert found(store, "test") == ["files"] and text_index._KEY_FILES == f"## {SECTION_TITLES['key_files']}"


def test_search_within_a_set_of_rows_finds_nothing_else(store: Store) -> None:
    add(store, {"a": "kraken", "b": "kraken", "c": "kraken"})
    rows = dict(store.conn.execute("SELECT session_uuid, rowid FROM handoffs"))
    hits = text_index.search(store.text_index_folder, text_index.key_of(store.conn), ["kraken"], 5, only=[rows["b"]])
    assert [rid for rid, _ in hits] == [rows["b"]]
    assert text_index.search(store.text_index_folder, text_index.key_of(store.conn), ["kraken"], 5, only=[]) == []


def test_a_project_filter_applies_to_the_full_text_ranking(store: Store) -> None:
    add(store, {f"other{i}": "kraken kraken kraken" for i in range(30)}, projects=("other",))
    add(store, {"mine": "a kraken"}, projects=("eywa",))
    for mode in ("bm25", "hybrid"):
        hits = rank(store.conn, "kraken", mode=mode, now=NOW, days_back=400, project="eywa", max_results=3)
        assert [hit.session_id for hit in hits] == ["mine"]


def test_an_index_folder_that_cannot_be_written_fails_clearly_and_loses_nothing(tmp_path: Path) -> None:
    store = Store(tmp_path / "i.db")
    folder = store.text_index_folder
    shutil.rmtree(folder)
    folder.write_text("in the way")  # not a folder: nothing can be written there
    try:
        with pytest.raises(StoreError, match="cannot update the full-text index"):
            add(store, {"a": "the kraken parser"})
        assert store.conn.execute("SELECT session_uuid FROM handoffs").fetchall() == [("a",)]
        assert queued(store) == 1
    finally:
        store.close()
    folder.unlink()
    store = Store(tmp_path / "i.db")
    try:
        assert found(store, "kraken") == ["a"]
    finally:
        store.close()


def test_two_index_files_in_one_folder_keep_a_full_text_index_each(tmp_path: Path) -> None:
    first, second = Store(tmp_path / "a.db"), Store(tmp_path / "b.db")
    try:
        add(first, {"a": "the kraken parser"})
        add(second, {"b": "a quiet week"})
        first.close()
        first = Store(tmp_path / "a.db")  # reopening one must not rebuild over the other
        assert found(first, "kraken") == ["a"] and found(first, "week") == []
        assert found(second, "week") == ["b"] and found(second, "kraken") == []
    finally:
        first.close()
        second.close()


def test_term_top_sums_the_weights_of_the_terms_each_session_lists(store: Store) -> None:
    with store.transaction():
        for uid, projects, keywords in (("a", ["Eywa"], ["sqlite", "fts5"]), ("b", [], ["SQLite"]),
                                        ("c", ["eywa"], []), ("d", ["other"], ["rust"])):
            h = handoff(uid)
            h.projects, h.keywords = projects, keywords
            store.put_handoff(h, path=f"{uid}.md")
    names = dict(store.conn.execute("SELECT rowid, session_uuid FROM handoffs"))
    weights = {("projects", "eywa"): 3.0, ("keywords", "sqlite"): 2.0, ("keywords", "fts5"): 0.5}
    hits = text_index.term_top(store.text_index_folder, text_index.key_of(store.conn), weights, 10)
    assert [(names[rid], score) for rid, score in hits] == [("a", 5.5), ("c", 3.0), ("b", 2.0)]
    with store.transaction():  # "a" again, without its project
        h = handoff("a")
        h.keywords = ["fts5"]
        store.put_handoff(h, path="a.md")
    names = dict(store.conn.execute("SELECT rowid, session_uuid FROM handoffs"))
    hits = text_index.term_top(store.text_index_folder, text_index.key_of(store.conn), weights, 10)
    assert [(names[rid], score) for rid, score in hits] == [("c", 3.0), ("b", 2.0), ("a", 0.5)]


def test_eywa_get_rebuilds_a_full_text_index_of_an_older_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from eywa.cli.main import main

    data = tmp_path / "data"
    store = Store(data / "index.sqlite3")
    add(store, {"a": "the kraken parser", "b": "a quiet week"})
    key = text_index.key_of(store.conn)
    store.close()
    (text_index.folder_of(data / "index.sqlite3") / "eywa-version").write_text(f"1 {key}")  # an older eywa's
    for name, value in (("EYWA_DATA_DIR", data), ("EYWA_PROJECTS_DIR", tmp_path), ("HOME", tmp_path),
                        ("EYWA_NOW", NOW.isoformat())):
        monkeypatch.setenv(name, str(value))
    monkeypatch.delenv("EYWA_CONFIG", raising=False)
    assert main(["get", "--mode", "bm25", "--days-back", "400", "--json", "kraken"]) == 0, capsys.readouterr().err
    assert [hit["session_id"] for hit in json.loads(capsys.readouterr().out)] == ["a"]


def test_a_word_in_nearly_every_session_matches_alone_only_when_the_query_has_no_rarer_word(store: Store) -> None:
    texts = {f"plain{i}": f"deploy {FILLER}" for i in range(10)}
    add(store, texts | {"kraken": f"deploy the kraken {FILLER}"})
    assert found(store, "deploy", "kraken") == ["kraken"]
    assert len(found(store, "deploy")) == 11


def test_the_extractors_fixed_words_are_left_out_and_the_sessions_own_kept(store: Store) -> None:
    # "Not committed: ... (no commit in the session)" in every handoff put "commit" in nearly every session, so a
    # query's "commit" counted for nothing; only the session that says it matches it now
    with store.transaction():
        for i in range(10):
            left = handoff(f"s{i}", days_ago=i)
            left.what_happened = [f"Not committed: `kraken{i}.go` (no commit in the session)",
                                  "Checks: `make` passed after the last edit"]
            store.put_handoff(left, path=f"s{i}.md", transcript=f"# Session s{i}\n\n### 10:00 User\n\n{FILLER}\n")
    add(store, {"said": f"commit the parser {FILLER}"})
    assert found(store, "commit") == ["said"] and found(store, "checks", "edit") == []
    assert found(store, "kraken3") == ["s3"] and len(found(store, "make")) == 10


def test_staged_changes_become_searchable_together_at_the_end(store: Store) -> None:
    add(store, {"a": "the kraken parser"})
    with store.staged_text_index():
        add(store, {"b": "the kraken lexer"})
        add(store, {"c": "the kraken printer"})
        assert found(store, "kraken") == ["a"] and queued(store) == 2  # handed over, not yet committed
    assert sorted(found(store, "kraken")) == ["a", "b", "c"] and queued(store) == 0


def test_a_store_writing_while_another_stages_loses_nothing(tmp_path: Path) -> None:
    staging, other = Store(tmp_path / "i.db"), Store(tmp_path / "i.db")
    try:
        with staging.staged_text_index():
            add(staging, {"a": "the kraken parser"})
            add(other, {"b": "the kraken lexer"})  # tantivy's writer is taken: stays queued, no error
        assert found(staging, "kraken") == ["a"] and queued(staging) == 1
        Store(tmp_path / "i.db").close()  # the next store opened applies it
        assert sorted(found(staging, "kraken")) == ["a", "b"] and queued(staging) == 0
    finally:
        staging.close()
        other.close()


def _segments(folder: Path) -> int:
    return len(json.loads((folder / "meta.json").read_text())["segments"])


def test_a_rebuild_commits_every_few_documents_so_few_wait_for_tantivy(store: Store,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    texts = {f"s{i}": f"the kraken parser {i}" for i in range(7)}
    add(store, texts)
    monkeypatch.setattr(text_index, "_QUEUE_DOCUMENTS", 3)
    text_index.reset(store.conn)
    text_index.ensure(store.conn, store.text_index_folder)
    # Each commit leaves a segment, too few yet for tantivy to merge: 3 + 3 + 1.
    assert _segments(store.text_index_folder) == 3
    assert sorted(found(store, "kraken")) == sorted(texts) and queued(store) == 0
    monkeypatch.setattr(text_index, "_QUEUE_DOCUMENTS", 2000)
    monkeypatch.setattr(text_index, "_QUEUE_CHARS", len(FILLER))  # long texts: a commit each
    add(store, {uid: f"{text} {FILLER}" for uid, text in texts.items()})
    text_index.reset(store.conn)
    text_index.ensure(store.conn, store.text_index_folder)
    assert _segments(store.text_index_folder) == 7


def test_staging_outside_a_rebuild_commits_once_at_the_end(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text_index, "_QUEUE_DOCUMENTS", 1)
    add(store, {"a": "the kraken parser"})
    with store.staged_text_index():
        add(store, {f"s{i}": "the kraken lexer" for i in range(5)})
        assert found(store, "kraken") == ["a"]  # handed over, none committed
    assert len(found(store, "kraken")) == 6
