"""Ingest in worker processes gives exactly what ingest in one process gives, and fails as cleanly."""

from __future__ import annotations

import gc
import multiprocessing
import os
import sqlite3
import threading
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

import eywa.core.ingest.prepare
from eywa.core.index.store import Store
from eywa.core.index.term_stats import TermStats
from eywa.core.ingest.prepare import prepared_in_order, worker_count
from eywa.core.ingest.run import IngestPaths, IngestReport, ingest
from eywa.core.redaction.scrubber import default_redactor
from eywa.core.sources import CLAUDE_CODE, Source
from eywa.core.sources.claude import subagent_parent
from eywa.core.sources.discovery import group_sessions, scan_files
from eywa.core.sources.plugin import SessionFiles, SourceFile

from .conftest import link_corpus

ZONE = ZoneInfo("Europe/Berlin")
_TABLES = {  # every row the ingest writes, in a stable order (the meta table holds the run's clock)
    "sources": "SELECT path, size, mtime_ns, session_uuid, kind, bad_lines FROM sources ORDER BY path",
    "handoffs": "SELECT * FROM handoffs ORDER BY session_uuid",
    "project_index": "SELECT * FROM project_index ORDER BY project, session_uuid",
    "keyword_index": "SELECT * FROM keyword_index ORDER BY keyword, session_uuid",
    "fulltext": "SELECT session_uuid, handoff, prompts, replies, actions, context FROM fulltext ORDER BY session_uuid",
    "term_df": "SELECT * FROM term_df ORDER BY term",
    "session_terms": "SELECT * FROM session_terms ORDER BY session_uuid",
}


def run_ingest(projects: Path, data: Path, workers: int) -> IngestReport:
    store = Store(data / "index.sqlite3")
    try:
        return ingest(store, IngestPaths((Source(CLAUDE_CODE, projects),), data / "handoffs", data / "archive"),
                      redactor=default_redactor(), zone=ZONE, workers=workers)
    finally:
        store.close()


def written(data: Path) -> tuple[dict[str, bytes], dict[str, list[tuple]]]:
    files = {str(p.relative_to(data)): p.read_bytes() for p in sorted(data.rglob("*.md"))}
    with sqlite3.connect(data / "index.sqlite3") as conn:
        rows = {table: conn.execute(query).fetchall() for table, query in _TABLES.items()}
    return files, rows


def test_workers_write_the_same_files_and_rows_as_one_process(env: dict[str, Path], tmp_path: Path) -> None:
    link_corpus(env["projects"], 30)
    serial = run_ingest(env["projects"], tmp_path / "serial", workers=0)
    parallel = run_ingest(env["projects"], tmp_path / "parallel", workers=2)
    assert parallel.updated == serial.updated and len(serial.updated) >= 25
    assert (parallel.bytes_read, parallel.bad_lines) == (serial.bytes_read, serial.bad_lines)
    files, rows = written(tmp_path / "parallel")
    assert (files, rows) == written(tmp_path / "serial")
    assert len(files) == 2 * len(serial.updated) and len(rows["term_df"]) > 1000


def test_a_failure_in_a_worker_reaches_the_caller_and_the_next_run_ends_as_a_clean_one(
        env: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sources = link_corpus(env["projects"], 12)
    doomed = sources[6].stem
    real = eywa.core.ingest.prepare.prepare

    def failing(group, *args):  # the workers are forked: they inherit this patch
        if group.session_id == doomed:
            raise ValueError(f"cannot prepare {doomed}")
        return real(group, *args)

    monkeypatch.setattr(eywa.core.ingest.prepare, "prepare", failing)
    with pytest.raises(ValueError, match=doomed):
        run_ingest(env["projects"], env["data"], workers=2)
    assert not multiprocessing.active_children()
    monkeypatch.setattr(eywa.core.ingest.prepare, "prepare", real)
    run_ingest(env["projects"], env["data"], workers=2)
    run_ingest(env["projects"], tmp_path / "clean", workers=0)
    assert written(env["data"]) == written(tmp_path / "clean")


def test_closing_the_results_early_stops_the_workers(env: dict[str, Path]) -> None:
    link_corpus(env["projects"], 12)
    groups = sorted(group_sessions(scan_files(env["projects"]), subagent_parent).values(), key=lambda g: g.session_id)
    results = prepared_in_order(groups, default_redactor().redact, ZONE, workers=2)
    first = next(results)
    assert first.session_id == groups[0].session_id
    results.close()
    assert not multiprocessing.active_children()


def test_what_the_workers_inherit_stays_frozen_in_this_process_while_they_run(env: dict[str, Path]) -> None:
    # Unfrozen, this process's collector writes to every inherited object's header, copying the pages the workers share.
    link_corpus(env["projects"], 12)
    groups = sorted(group_sessions(scan_files(env["projects"]), subagent_parent).values(), key=lambda g: g.session_id)
    results = prepared_in_order(groups, default_redactor().redact, ZONE, workers=2)
    assert gc.get_freeze_count() == 0
    next(results)
    next(results)
    assert gc.get_freeze_count() > 0
    results.close()
    assert gc.get_freeze_count() == 0 and not multiprocessing.active_children()


def test_term_counts_follow_sessions_whose_terms_are_replaced(tmp_path: Path) -> None:
    store = Store(tmp_path / "index.sqlite3")
    with store.transaction():
        stats = TermStats(store.conn)
        stats.record("a", ["gemini", "rewind", "gemini"])
        stats.record("b", ["rewind"])
        assert stats.df(["gemini", "rewind", "never"]) == {"gemini": 1, "rewind": 2}
        stats.flush()
    with store.transaction():
        stats = TermStats(store.conn)  # a new transaction reads the counts written by the last one
        assert stats.document_count() == 2
        stats.record("a", ["checkpoint"])
        assert stats.df(["gemini", "rewind", "checkpoint"]) == {"gemini": 0, "rewind": 1, "checkpoint": 1}
        assert stats.document_count() == 2
        stats.flush()
    rows = store.conn.execute("SELECT term, df FROM term_df ORDER BY term").fetchall()
    assert rows == [("checkpoint", 1), ("gemini", 0), ("rewind", 1)]
    assert store.conn.execute("SELECT terms FROM session_terms WHERE session_uuid = 'a'").fetchone() == (
        '["checkpoint"]',)
    store.close()


def sessions_of(count: int, size: int) -> list[SessionFiles]:
    return [SessionFiles(f"s{i}", main=[SourceFile(f"/p/s{i}.jsonl", size, 0, "main")]) for i in range(count)]


def test_workers_start_only_for_a_large_ingest_in_a_single_threaded_process(
        monkeypatch: pytest.MonkeyPatch) -> None:
    cpus = len(os.sched_getaffinity(0))
    # The CLI's process: one thread (threads left behind by earlier tests of the suite do not count here).
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    assert worker_count(sessions_of(6, 5_000_000)) == (min(cpus, 4) if cpus > 1 else 0)
    assert worker_count(sessions_of(1, 50_000_000)) == 0  # one session: nothing to share
    assert worker_count(sessions_of(6, 100_000)) == 0  # forking would cost more than it saves
    monkeypatch.undo()
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)  # as the bot's event loop runs beside its ingest thread
    other.start()
    try:
        assert worker_count(sessions_of(6, 5_000_000)) == 0
    finally:
        stop.set()
        other.join()
