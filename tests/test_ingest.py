"""Incremental, idempotent, crash-safe ingest, on a copy-free tree built in tmp (the corpus is read in place)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from eywa.core.api import Eywa
from eywa.core.config.settings import load_settings
from eywa.core.extract.deterministic import HANDOFF_RULES, SUBSTANCE_RULES
from eywa.core.handoffs.model import parse_handoff

from .conftest import CORPUS, link_corpus, write_jsonl

ENTIRE = CORPUS / "entire" / "projects"


def tree_bytes(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.md"))}


def make_eywa(**overrides: object) -> Eywa:
    return Eywa(load_settings(**overrides))


def test_second_run_changes_nothing_and_reads_no_file(env: dict[str, Path]) -> None:
    link_corpus(env["projects"], 25)
    eywa = make_eywa()
    first = eywa.ingest()
    assert first.sessions_updated == 25 and first.bytes_read > 0
    before = tree_bytes(env["data"] / "handoffs")
    mtimes = {p: p.stat().st_mtime_ns for p in (env["data"] / "handoffs").rglob("*.md")}
    second = eywa.ingest()
    assert second.sessions_updated == 0 and second.bytes_read == 0 and second.files_changed == 0
    assert tree_bytes(env["data"] / "handoffs") == before
    assert {p: p.stat().st_mtime_ns for p in mtimes} == mtimes


def test_appending_to_a_transcript_updates_only_that_session(env: dict[str, Path]) -> None:
    link_corpus(env["projects"], 10)
    source = sorted(ENTIRE.glob("*/*.jsonl"))[10]
    copy = env["projects"] / "-home-me-grow" / source.name
    copy.parent.mkdir()
    copy.write_bytes(source.read_bytes())
    eywa = make_eywa()
    eywa.ingest()
    with copy.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"type": "user", "uuid": "new-1", "sessionId": copy.stem,
                                 "timestamp": "2026-02-20T09:00:00Z", "cwd": "/home/me/grow",
                                 "message": {"role": "user", "content": "zanzibar migration follow-up"}}) + "\n")
    report = eywa.ingest()
    assert report.updated == [copy.stem]
    assert report.files_changed == 1
    assert "zanzibar" in eywa.store.conn.execute(
        "SELECT prompts FROM fulltext WHERE session_uuid = ?", (copy.stem,)).fetchone()[0]


def test_deleted_source_keeps_its_handoff(env: dict[str, Path]) -> None:
    sources = link_corpus(env["projects"], 5)
    eywa = make_eywa()
    eywa.ingest()
    gone = env["projects"] / sources[0].parent.name / sources[0].name
    gone.unlink()
    eywa.ingest()
    assert eywa.show(sources[0].stem).session_id == sources[0].stem


def test_interrupted_ingest_resumes_to_the_same_files(env: dict[str, Path], tmp_path: Path) -> None:
    link_corpus(env["projects"], 20)

    class Stop(Exception):
        pass

    def stop_after(n: int):
        def progress(done: int, total: int, session_id: str) -> None:
            if done == n:
                raise Stop

        return progress

    eywa = make_eywa()
    with pytest.raises(Stop):
        eywa.ingest(progress=stop_after(7))
    eywa.ingest()
    resumed = tree_bytes(env["data"] / "handoffs")
    clean = make_eywa(data_dir=tmp_path / "clean")
    clean.ingest()
    assert resumed == tree_bytes(tmp_path / "clean" / "handoffs")
    assert len(resumed) == 20


def test_handoff_files_follow_the_architecture_layout(env: dict[str, Path]) -> None:
    link_corpus(env["projects"], 8)
    eywa = make_eywa()
    eywa.ingest()
    files = sorted((env["data"] / "handoffs").rglob("*.md"))
    assert len(files) == 8
    for path in files:
        handoff = parse_handoff(path.read_text(encoding="utf-8"))
        year, month, day, name = path.relative_to(env["data"] / "handoffs").parts
        assert f"{year}-{month}-{day}" == handoff.date.isoformat()
        assert name == f"{handoff.session_id}.md" and handoff.short_id == handoff.session_id[:8]
        text = path.read_text(encoding="utf-8")
        assert text.startswith("---\nsession_id: ") and "\nkeywords: [" in text and "\nsubstance: " in text
        if handoff.substance:
            assert 1 <= len(handoff.keywords) <= 7
            assert (env["data"] / "archive" / path.relative_to(env["data"] / "handoffs")).is_file()


def test_missing_projects_folder_is_a_clear_error(env: dict[str, Path]) -> None:
    from eywa.core.errors import IngestError

    with pytest.raises(IngestError, match="EYWA_PROJECTS_DIR"):
        make_eywa(projects_dir=env["home"] / "nowhere").ingest()


def test_bad_lines_are_counted_and_the_session_survives(env: dict[str, Path]) -> None:
    path = env["projects"] / "-home-me-x" / "abcdef12-0000-0000-0000-000000000000.jsonl"
    good = {"type": "user", "uuid": "u1", "timestamp": "2026-02-01T10:00:00Z", "cwd": "/home/me/x",
            "message": {"role": "user", "content": "wire the quokka exporter"}}
    write_jsonl(path, [good, "{not json", "[1,2]", json.dumps(good)[:20]], trailing_newline=False)
    eywa = make_eywa()
    report = eywa.ingest()
    assert report.sessions_updated == 1 and report.bad_lines == 3
    assert eywa.stats().bad_lines == 3


def test_reingesting_a_touched_session_replaces_its_index_rows(env: dict[str, Path]) -> None:
    for source in sorted(ENTIRE.glob("*/*.jsonl"))[:3]:
        target = env["projects"] / source.parent.name / source.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source.read_bytes())
    eywa = make_eywa()
    eywa.ingest()
    counts = [eywa.store.conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
              for t in ("fulltext", "handoffs", "keyword_index", "session_terms")]
    for path in env["projects"].rglob("*.jsonl"):
        os.utime(path, ns=(1, 1))
    assert eywa.ingest().sessions_updated == 3
    assert [eywa.store.conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
            for t in ("fulltext", "handoffs", "keyword_index", "session_terms")] == counts


def test_extract_one_session_rewrites_only_that_handoff(env: dict[str, Path]) -> None:
    sources = link_corpus(env["projects"], 4)
    eywa = make_eywa()
    eywa.ingest()
    target = sources[2].stem
    record = eywa.extract(target[:10])
    assert record.session_id == target
    assert json.loads(eywa.store.get_meta("last_ingest_report"))["sessions_updated"] == 1
    with pytest.raises(LookupError, match="no transcript"):
        eywa.extract("ffffffff")


def test_an_upgrade_judges_again_the_sessions_older_rules_found_empty(env: dict[str, Path]) -> None:
    sid = "d88bceb6-bb3a-4ae8-9405-d67d19950a46"
    base = {"sessionId": sid, "cwd": "/home/me/cli"}
    write_jsonl(env["projects"] / "-home-me-cli" / f"{sid}.jsonl", [
        {**base, "type": "user", "uuid": "u1", "timestamp": "2026-01-06T13:32:00Z",
         "message": {"role": "user", "content": "<command-name>/workflows:review</command-name>\n"
                                                "<command-args>https://github.com/me/cli/pull/6</command-args>"}},
        {**base, "type": "assistant", "uuid": "a1", "parentUuid": "u1", "timestamp": "2026-01-06T13:33:00Z",
         "message": {"role": "assistant", "id": "m1", "model": "claude-opus-4-5",
                     "content": [{"type": "text", "text": "The zanzibar hook is installed twice by enable."}]}},
    ])
    link_corpus(env["projects"], 3)
    eywa = make_eywa()
    eywa.ingest()
    conn = eywa.store.conn

    def judged() -> tuple[int, str | None]:
        substance = conn.execute("SELECT substance FROM handoffs WHERE session_uuid = ?", (sid,)).fetchone()[0]
        return substance, eywa.store.get_meta("substance_rules")

    assert judged() == (1, SUBSTANCE_RULES)
    with eywa.store.transaction():  # as an eywa of the older rules left it
        conn.execute("UPDATE handoffs SET substance = 0 WHERE session_uuid = ?", (sid,))
        conn.execute("DELETE FROM meta WHERE key = 'substance_rules'")
    report = eywa.ingest()
    assert report.updated == [sid] and report.files_changed == 0
    assert judged() == (1, SUBSTANCE_RULES)
    assert [hit.session_id for hit in eywa.recall("zanzibar hook", days_back=3650)][:1] == [sid]
    assert eywa.ingest().sessions_updated == 0


def test_an_upgrade_drafts_every_deterministic_handoff_again_by_the_new_rules(env: dict[str, Path]) -> None:
    link_corpus(env["projects"], 6)
    eywa = make_eywa()
    eywa.ingest()
    conn = eywa.store.conn
    assert eywa.store.get_meta("handoff_rules") == HANDOFF_RULES
    kept = conn.execute("SELECT session_uuid FROM handoffs LIMIT 1").fetchone()[0]
    with eywa.store.transaction():  # as an eywa of older rules left it; one handoff is Claude's
        conn.execute("UPDATE handoffs SET headline = 'Old rules', extractor = 'llm:test' WHERE session_uuid = ?",
                     (kept,))
        conn.execute("UPDATE handoffs SET headline = 'Old rules' WHERE session_uuid != ?", (kept,))
        conn.execute("DELETE FROM meta WHERE key = 'handoff_rules'")
    report = eywa.ingest()
    assert report.files_changed == 0 and len(report.updated) == 5 and kept not in report.updated
    headlines = dict(conn.execute("SELECT session_uuid, headline FROM handoffs"))
    assert headlines.pop(kept) == "Old rules" and "Old rules" not in headlines.values()
    assert eywa.store.get_meta("handoff_rules") == HANDOFF_RULES
    assert eywa.ingest().sessions_updated == 0
