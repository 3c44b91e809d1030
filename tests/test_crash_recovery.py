"""Crashes: `eywa ingest` SIGKILLed at random moments, halfway through handoff writes and inside index
transactions. After every kill the store passes its integrity checks and agrees with itself, no handoff
file is partial, and the next run ends exactly where an uninterrupted run does."""

from __future__ import annotations

import collections
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

import orjson
import pytest
import tantivy

from eywa.core.api import Eywa
from eywa.core.config.settings import load_settings
from eywa.core.index.store import Store

from .conftest import AGENT_SESSIONS, ROOT, copy_agent_fixtures, link_corpus

pytestmark = pytest.mark.slow  # ingest SIGKILLed again and again

SESSIONS = 15
KILLS = 20
KILLS_PER_CHAIN = 5  # kills in a row on one data directory before it is run to the end
QUERIES = ["checkpoint rewind", "telemetry", "session hooks test", "git worktree"]
# Rows that say when and how fast the last run went, not what it stored.
RUN_META = {"last_ingest_at", "last_ingest_report", "text_index_key"}  # the key is random per index file


def ingest_cmd(note: Path, *how: str) -> list[str]:
    return [sys.executable, "-m", "tests.ingest_until_killed", str(note), *how]


def run_to_end(data: Path, note: Path) -> tuple[str, float]:
    started = time.perf_counter()
    result = subprocess.run(ingest_cmd(note, "count"), cwd=ROOT, env={**os.environ, "EYWA_DATA_DIR": str(data)},
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return note.read_text(), time.perf_counter() - started


def run_killed(data: Path, note: Path, how: list[str], delay: float | None) -> str:
    """Run one ingest until it is killed (by itself, or by us after `delay` s); where it was, or 'completed'."""
    note.unlink(missing_ok=True)
    log = note.with_suffix(".log")
    # A file, not a pipe, for stderr: a worker process that outlived its parent would hold a pipe open.
    with log.open("wb") as stderr:
        child = subprocess.Popen(ingest_cmd(note, *how), cwd=ROOT, env={**os.environ, "EYWA_DATA_DIR": str(data)},
                                 stdout=subprocess.DEVNULL, stderr=stderr)
        try:
            child.wait(delay)
        except subprocess.TimeoutExpired:
            child.send_signal(signal.SIGKILL)
            child.wait()
    if child.returncode == 0:
        return "completed"
    assert child.returncode == -signal.SIGKILL, log.read_text()
    _no_process_left(note)
    return note.read_text() if note.exists() else f"timed {delay:.2f}s"


def _no_process_left(note: Path) -> None:
    """Worker processes of a killed ingest (they share its command line) end by themselves."""
    deadline = time.monotonic() + 10
    while True:
        alive = []
        for proc in Path("/proc").iterdir():
            try:
                if proc.name.isdigit() and str(note).encode() in (proc / "cmdline").read_bytes():
                    alive.append(proc.name)
            except OSError:
                continue
        if not alive or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    for pid in alive:
        os.kill(int(pid), signal.SIGKILL)
    assert alive == [], f"processes of the killed ingest were still running: {alive}"


def files(data: Path) -> dict[str, bytes]:
    return {str(p.relative_to(data)): p.read_bytes() for p in sorted(data.rglob("*.md"))}


def leftovers(data: Path) -> list[str]:
    return sorted(str(p.relative_to(data)) for folder in ("handoffs", "archive") if (data / folder).is_dir()
                  for p in (data / folder).rglob("*") if p.is_file() and p.suffix != ".md")


def dump(data: Path) -> dict[str, list]:
    """Every row of every table (the full-text table through its own columns), in a stable order."""
    conn = sqlite3.connect(data / "index.sqlite3")
    tables = [name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
              if not name.startswith(("fulltext_", "sqlite_"))]
    rows = {name: sorted(map(repr, conn.execute(f"SELECT * FROM {name}"))) for name in tables}
    rows["meta"] = [row for row in rows["meta"] if not any(repr(key) in row for key in RUN_META)]
    conn.close()
    return rows


def search(data: Path) -> list[list[str]]:
    eywa = Eywa(load_settings(data_dir=data))
    try:
        return [[r.session_id for r in eywa.recall(query, days_back=3650, max_results=5)] for query in QUERIES]
    finally:
        eywa.close()


def text_index_rows(data: Path) -> set[int]:
    """The rows the full-text index holds once a store has opened the index (it applies what a kill left
    queued), which must be those of the `fulltext` table."""
    store = Store(data / "index.sqlite3")
    try:
        assert store.conn.execute("SELECT COUNT(*) FROM text_index_queue").fetchone() == (0,)
        index = tantivy.Index.open(str(store.text_index_folder))
        searcher = index.searcher()
        hits = searcher.search(tantivy.Query.all_query(), 10 * SESSIONS, count=False).hits
        rows = searcher.fast_field_values("rid", [address for _, address in hits])
        assert len(rows) == len(set(rows)) == searcher.num_docs
        return set(rows)
    finally:
        store.close()


def check_after_kill(data: Path, clean: dict[str, bytes]) -> int:
    """The store is whole and consistent with the files; the number of sessions it holds."""
    assert (data / "index.sqlite3").exists()
    conn = sqlite3.connect(data / "index.sqlite3")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'handoffs'").fetchone():
            # killed between the file's creation and the schema's commit: an empty store, nothing written yet
            assert files(data) == {}
            return 0
        handoffs = dict(conn.execute("SELECT rowid, session_uuid FROM handoffs"))
        assert {r for (r,) in conn.execute("SELECT rowid FROM fulltext")} == set(handoffs)
        for table in ("project_index", "keyword_index", "session_terms"):
            assert {s for (s,) in conn.execute(f"SELECT session_uuid FROM {table}")} <= set(handoffs.values())
        main = {s for (s,) in conn.execute("SELECT session_uuid FROM sources WHERE kind = 'main'")}
        assert main == set(handoffs.values())
        # Document frequencies agree with the sessions' terms: no half-applied batch.
        counted = collections.Counter(t for (terms,) in conn.execute("SELECT terms FROM session_terms")
                                      for t in orjson.loads(terms))
        stored = dict(conn.execute("SELECT term, df FROM term_df"))
        assert {t: n for t, n in stored.items() if n} == dict(counted)
        for (path,) in conn.execute("SELECT path FROM handoffs"):
            assert f"handoffs/{path}" in clean and f"archive/{path}" in clean
            assert (data / "handoffs" / path).is_file() and (data / "archive" / path).is_file()
    finally:
        conn.close()
    assert text_index_rows(data) == set(handoffs)
    written = files(data)
    # A file that exists is whole, and exactly the file an uninterrupted run writes.
    assert {name: body for name, body in written.items() if clean.get(name) != body} == {}
    assert all(Path(name).name.startswith(".") and name.endswith(".tmp") for name in leftovers(data))
    return len(handoffs)


def where(outcome: str) -> str:
    """What a kill hit, from the note the killed run left."""
    if outcome.startswith("write"):
        return "handoff file write" if "/handoffs/" in outcome else "archive file write"
    if outcome.startswith("sql"):
        return "index transaction" if outcome == "sql in a transaction" else "index read"
    return "timed, after the work" if outcome.startswith("completed") else "timed"


class Baseline(NamedTuple):
    files: dict[str, bytes]
    rows: dict[str, list]
    search: list[list[str]]
    writes: int  # handoff and archive files an uninterrupted run writes
    sql_steps: int  # SQLite progress callbacks in an uninterrupted run
    seconds: float


def kill_chain(number: int, folder: Path, clean: Baseline) -> collections.Counter[str]:
    """KILLS_PER_CHAIN kills of ingest, each on what the previous ones left, then a run to the end that must
    give the uninterrupted result (a run that ends before its kill point starts a fresh data directory)."""
    rng = random.Random(20260217 + number)
    landed: collections.Counter[str] = collections.Counter()
    kills, round_, attempts = 0, 0, 0
    while kills < KILLS_PER_CHAIN:
        round_ += 1
        data, note = folder / f"chain{number}-{round_}", folder / f"chain{number}-{round_}.note"
        stored = 0
        while kills < KILLS_PER_CHAIN:
            left = (SESSIONS - stored) / SESSIONS  # the share of the work this run has left to do
            # By attempt, not by kill: a timed kill that a quicker machine outran is followed by a counted one.
            kind = ("write", "sql", "timed")[(attempts + number) % 3]
            attempts += 1
            if kind == "write":
                how, delay = ["write", str(rng.randint(1, max(1, int(clean.writes * left))))], None
            elif kind == "sql":
                how, delay = ["sql", str(rng.randint(1, max(1, int(clean.sql_steps * left))))], None
            else:
                how, delay = ["count"], rng.uniform(0.3, 1.0) * clean.seconds
            outcome = run_killed(data, note, how, delay)
            if outcome == "completed":
                break
            kills += 1
            landed[where(outcome)] += 1
            stored = check_after_kill(data, clean.files) if (data / "index.sqlite3").exists() else 0
        run_to_end(data, note)
        assert leftovers(data) == []  # temporary files of killed writes are gone
        assert files(data) == clean.files
        assert dump(data) == clean.rows
        assert search(data) == clean.search
    return landed


def test_ingest_killed_anywhere_resumes_to_the_uninterrupted_result(
        env: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    link_corpus(env["projects"], SESSIONS)
    copy_agent_fixtures(tmp_path / "agents", env["projects"], monkeypatch)  # Codex and Gemini CLI's too
    monkeypatch.setenv("EYWA_NOW", "2026-02-17")
    data = tmp_path / "baseline"
    counted, seconds = run_to_end(data, tmp_path / "baseline.note")
    total = {kind: int(n) for kind, n in (part.split("=") for part in counted.split()[1:])}
    clean = Baseline(files(data), dump(data), search(data), total["write"], total["sql"], seconds)
    sessions = SESSIONS + AGENT_SESSIONS
    assert len(clean.files) == 2 * sessions and len(clean.rows["handoffs"]) == sessions
    assert sum("'codex'" in row or "'gemini'" in row for row in clean.rows["handoffs"]) == AGENT_SESSIONS - 1

    # Two chains at a time: each run is mostly interpreter start-up, and there are two cores.
    with ThreadPoolExecutor(2) as pool:
        chains = list(pool.map(lambda number: kill_chain(number, tmp_path, clean), range(KILLS // KILLS_PER_CHAIN)))
    landed = sum(chains, collections.Counter())
    print(f"{landed.total()} kills: {dict(landed)}; uninterrupted run {seconds:.1f}s")
    assert landed.total() >= 20
    assert landed["handoff file write"] + landed["archive file write"] >= 4 and landed["index transaction"] >= 3


def test_a_write_removes_the_temporary_files_of_dead_writers_only(tmp_path: Path) -> None:
    from eywa.core.handoffs.model import atomic_write

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()
    orphan = tmp_path / f".a.md.{dead}.x1y2z3ab.tmp"
    live = tmp_path / f".b.md.{os.getpid()}.k9l8m7nq.tmp"  # a write in flight in this very process
    foreign = tmp_path / ".c.md.q4w5e6r7.tmp"  # no pid: not ours to judge
    for path in (orphan, live, foreign):
        path.write_text("half a handoff")
    atomic_write(tmp_path / "d.md", "whole")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, foreign.name, "d.md"])
    assert (tmp_path / "d.md").read_text() == "whole"


def test_a_write_into_a_folder_deleted_since_the_last_one_makes_it_again(tmp_path: Path) -> None:
    import shutil

    from eywa.core.handoffs.model import atomic_write

    folder = tmp_path / "2026" / "02" / "17"
    atomic_write(folder / "a.md", "first")
    shutil.rmtree(tmp_path / "2026")  # by hand, while the bot keeps running
    atomic_write(folder / "b.md", "second")
    assert sorted(p.name for p in folder.iterdir()) == ["b.md"]
    assert (folder / "b.md").read_text() == "second"
