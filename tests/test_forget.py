"""`eywa forget`: a session gone from everything Eywa keeps (handoff, archive, index rows, full text, term
statistics, LLM state, spoke copies), kept out by a tombstone while its transcript exists, back with
`--undo`; in bulk by project or date after a count and a confirmation. The other sessions' statistics are
those of an index that never had it."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from eywa.cli.main import main
from eywa.core.api import Eywa
from eywa.core.config.settings import load_settings

from .conftest import link_corpus, write_jsonl

NOW = "2026-03-01T12:00:00+00:00"
QUERIES = ("explain command help text", "hooks session state", "codeowners review")


def _eywa() -> Eywa:
    return Eywa(load_settings())


def _ingest() -> None:
    eywa = _eywa()
    try:
        eywa.ingest(llm=False)
    finally:
        eywa.close()


def _statistics(db: Path) -> dict[str, object]:
    conn = sqlite3.connect(db)
    try:
        return {
            "term_df": sorted(conn.execute("SELECT term, df FROM term_df")),
            "session_terms": sorted(conn.execute("SELECT session_uuid, terms FROM session_terms")),
            "project_df": sorted(conn.execute("SELECT project, COUNT(*) FROM project_index GROUP BY project")),
            "handoffs": sorted(uid for (uid,) in conn.execute("SELECT session_uuid FROM handoffs")),
        }
    finally:
        conn.close()


def _search(mode: str) -> list[list[str]]:
    eywa = _eywa()
    try:
        return [[r.session_id for r in eywa.recall(q, days_back=400, max_results=5, mode=mode)] for q in QUERIES]
    finally:
        eywa.close()


@pytest.fixture
def corpus(env: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    monkeypatch.setenv("EYWA_NOW", NOW)
    return link_corpus(env["projects"], 12)


def test_forgetting_a_session_leaves_the_statistics_and_searches_of_an_index_built_without_it(
        env: dict[str, Path], corpus: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    gone = corpus[5]  # in the middle: sessions after it counted its terms
    _ingest()
    eywa = _eywa()
    try:
        assert eywa.forget([gone.stem]) == 1
    finally:
        eywa.close()
    forgotten = (_statistics(env["data"] / "index.sqlite3"), _search("bm25"))
    # the same transcripts but that one, ingested into a new data directory
    without = env["home"] / "without"
    for path in corpus:
        if path != gone:
            (without / path.parent.name).mkdir(parents=True, exist_ok=True)
            (without / path.parent.name / path.name).symlink_to(path)
    monkeypatch.setenv("EYWA_DATA_DIR", str(env["home"] / "data-without"))
    monkeypatch.setenv("EYWA_PROJECTS_DIR", str(without))
    _ingest()
    assert forgotten == (_statistics(env["home"] / "data-without" / "index.sqlite3"), _search("bm25"))
    assert gone.stem not in {uid for row in forgotten[1] for uid in row}
    assert any(forgotten[1])  # the searches found something


def test_a_forgotten_session_is_in_no_file_stays_out_and_comes_back_with_undo(
        env: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("EYWA_NOW", NOW)
    sid = "7e2b9c41-0000-4000-8000-00000000f0a1"
    base = {"sessionId": sid, "cwd": "/home/ana/src/diary", "version": "2.1.37"}
    records = [
        {**base, "type": "user", "uuid": "u1", "timestamp": "2026-02-20T10:00:00Z",
         "message": {"role": "user", "content": "Write my private letter about the marzipanquokka affair"}},
        {**base, "type": "assistant", "uuid": "a1", "parentUuid": "u1", "timestamp": "2026-02-20T10:01:00Z",
         "message": {"role": "assistant", "model": "claude-opus-4-6", "content": [
             {"type": "text", "text": "Done: the marzipanquokka letter is in letter.md."}]}},
    ]
    transcript = write_jsonl(env["projects"] / "-home-ana-src-diary" / f"{sid}.jsonl", records)
    link_corpus(env["projects"], 3)
    _ingest()
    spoke_copy = env["data"] / "spokes" / "laptop" / "claude-code" / "-home-ana-src-diary" / f"{sid}.jsonl"
    assert main(["forget", sid[:8]]) == 0
    assert "forgot 7e2b9c41" in capsys.readouterr().out
    hits = [str(p) for p in env["data"].rglob("*") if p.is_file() and b"marzipanquokka" in p.read_bytes().lower()]
    assert hits == []
    assert main(["show", sid]) == 1
    # the transcript grows, a spoke pushes a copy again: neither brings it back
    with transcript.open("a") as handle:
        handle.write(json.dumps({**records[0], "uuid": "u2", "timestamp": "2026-02-20T11:00:00Z"}) + "\n")
    write_jsonl(spoke_copy, [dict(r, sessionId=sid) for r in records])
    _ingest()
    assert main(["show", sid]) == 1 and not spoke_copy.exists()
    capsys.readouterr()
    assert main(["forget", "--undo", sid[:8]]) == 0
    _ingest()
    assert main(["show", sid]) == 0 and "marzipanquokka" in capsys.readouterr().out


def test_forgetting_in_bulk_counts_and_asks_first(corpus: list[Path], capsys: pytest.CaptureFixture[str]) -> None:
    _ingest()
    eywa = _eywa()
    try:
        total = eywa.stats().handoffs
    finally:
        eywa.close()
    assert main(["forget", "--project", "cli", "--before", "2026-01-20"]) == 1  # not a terminal, no --yes
    err = capsys.readouterr()
    assert "without --yes" in err.err and "sessions match" in err.err
    matched = int(err.err.split("(")[1].split()[0])
    assert 0 < matched < total
    assert main(["forget", "--project", "cli", "--before", "2026-01-20", "--yes"]) == 0
    assert f"forgot {matched} sessions" in capsys.readouterr().out
    eywa = _eywa()
    try:
        assert eywa.stats().handoffs == total - matched
        assert all(r.date.isoformat() >= "2026-01-20" for r in eywa.last(50, project="cli"))
    finally:
        eywa.close()
    assert main(["forget", "--before", "not-a-date"]) == 1
    assert main(["forget", "--project", "no-such-project", "--yes"]) == 0
    assert "Nothing to forget" in capsys.readouterr().out


def test_forgetting_removes_the_llm_state(corpus: list[Path], env: dict[str, Path]) -> None:
    from eywa.core.index.llm_tables import ensure_tables

    _ingest()
    eywa = _eywa()
    try:
        uid = eywa.last(1)[0].session_id
        ensure_tables(eywa.store.conn)
        with eywa.store.transaction():
            eywa.store.conn.execute("INSERT INTO llm_state(session_uuid, status, result, updated_at)"
                                    " VALUES(?, 'done', '{}', 'now')", (uid,))
        eywa.forget([uid])
        left = eywa.store.conn.execute("SELECT COUNT(*) FROM llm_state WHERE session_uuid = ?", (uid,)).fetchone()
        assert left == (0,)
    finally:
        eywa.close()
    shutil.rmtree(env["data"])
