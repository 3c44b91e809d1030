"""Files written by earlier releases (tests/fixtures/upgrade/<commit>/, built by its build.py with that
release's code) open with this one, migrate in place through core/index/migrations.py, and work; a second
open migrates nothing."""

from __future__ import annotations

import datetime as dt
import shutil
import sqlite3
from pathlib import Path

import pytest

from eywa.core.api import Eywa
from eywa.core.config.settings import load_settings
from eywa.core.errors import StoreError
from eywa.core.index.bot_store import MIGRATIONS as BOT_MIGRATIONS
from eywa.core.index.bot_store import BotState
from eywa.core.index.llm_tables import MIGRATIONS as LLM_MIGRATIONS
from eywa.core.index.migrations import applied, migrate
from eywa.core.index.schema_version import needs_migrating
from eywa.core.index.store import MIGRATIONS as INDEX_MIGRATIONS
from eywa.core.index.store import Store

UPGRADE = Path(__file__).parent / "fixtures" / "upgrade"
RELEASES = ("c89dd8f", "842f99c")  # before the eywa.* namespace; and the last before migrations
NOW = "2026-03-01T12:00:00+00:00"


def _names(migrations: tuple) -> set[str]:
    return {name for name, _ in migrations}


@pytest.fixture
def old_index(env: dict[str, Path], request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Path:
    env["data"].mkdir()
    path = env["data"] / "index.sqlite3"
    shutil.copy(UPGRADE / request.param / "index.sqlite3", path)
    monkeypatch.setenv("EYWA_NOW", NOW)
    return path


@pytest.mark.parametrize("old_index", RELEASES, indirect=True)
def test_an_index_of_an_earlier_release_migrates_in_place_and_recalls_its_sessions(old_index: Path) -> None:
    conn = sqlite3.connect(old_index)
    assert needs_migrating(conn)  # what `eywa get` and the hooks ask, without the store
    conn.close()
    eywa = Eywa(load_settings())
    try:
        assert [r.short_id for r in eywa.recall("codeowners", days_back=400)][:1] == ["1b3e6441"]
        assert "9b76dc0f" in [r.short_id for r in eywa.recall("redacts", days_back=400)]
        stats = eywa.stats()
        assert stats.handoffs == 3 and stats.agents == {"claude-code": 3}
        # the LLM state the release wrote reads: its one failed session and its one request
        assert stats.llm["states"] == {"failed": 1} and stats.llm["requests"] == 1
        assert stats.llm["usage"]["input_tokens"] == 1000
    finally:
        eywa.close()
    conn = sqlite3.connect(old_index)
    assert not needs_migrating(conn)
    assert applied(conn) == _names(INDEX_MIGRATIONS) | _names(LLM_MIGRATIONS)
    assert {"agent", "machine"} <= {row[1] for row in conn.execute("PRAGMA table_info(handoffs)")}
    assert "cost_usd" in {row[1] for row in conn.execute("PRAGMA table_info(llm_usage)")}
    assert conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'source_drift'").fetchone() == (1,)
    assert conn.execute("SELECT DISTINCT agent FROM handoffs").fetchall() == [("claude-code",)]
    conn.close()


@pytest.mark.parametrize("old_index", RELEASES, indirect=True)
def test_a_migrated_index_opens_again_without_migrating_or_waiting_for_a_writer(old_index: Path) -> None:
    Store(old_index).close()
    writer = sqlite3.connect(old_index, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # a migration would wait for this lock (30 s) and fail
    try:
        store = Store(old_index)
        assert migrate(store.conn, INDEX_MIGRATIONS) == []
        store.close()
    finally:
        writer.execute("ROLLBACK")
        writer.close()


@pytest.mark.parametrize("old_index", RELEASES, indirect=True)
def test_eywa_get_migrates_an_index_of_an_earlier_release_once(old_index: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    from eywa.cli.main import main

    for _ in range(2):
        assert main(["get", "--json", "--days-back", "400", "codeowners"]) == 0, capsys.readouterr().err
        assert '"1b3e6441' in capsys.readouterr().out
    conn = sqlite3.connect(old_index)
    assert applied(conn) == _names(INDEX_MIGRATIONS)
    assert len(conn.execute("SELECT * FROM migrations").fetchall()) == len(INDEX_MIGRATIONS)
    conn.close()


@pytest.mark.parametrize("release", RELEASES)
def test_bot_state_of_an_earlier_release_keeps_pages_digests_and_watched_sessions(tmp_path: Path,
                                                                                  release: str) -> None:
    path = tmp_path / "bot.sqlite3"
    shutil.copy(UPGRADE / release / "bot.sqlite3", path)
    state = BotState(path)
    page = state.load_page(state.get("token") or "")
    assert page is not None and (page.kind, page.query, page.offset) == ("recall", "status line", 5)
    assert page.session_ids == ["5a3bb1c8-c3ce-466e-b487-24212cbf1da1"]
    assert state.digest_times() == {111: "08:30", 222: ""}
    assert state.last_digest(111) == dt.datetime(2026, 6, 1, 8, 30)
    # c89dd8f had no watched sessions: the table is added, and works
    assert state.watched_sessions() == ([] if release == "c89dd8f" else [("1b3e6441", 111)])
    state.watch_session("9b76dc0f", 222)
    assert ("9b76dc0f", 222) in state.watched_sessions()
    assert applied(state.conn) == _names(BOT_MIGRATIONS)
    state.close()
    state = BotState(path)
    assert migrate(state.conn, BOT_MIGRATIONS) == []
    assert state.digest_times() == {111: "08:30", 222: ""}
    state.close()


def test_a_new_file_records_every_migration_and_a_failed_one_leaves_it_as_it_was(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "x.db", isolation_level=None)
    ran = migrate(conn, (("t-one", "CREATE TABLE one(a);\nINSERT INTO one VALUES(1);"),))
    assert ran == ["t-one"]

    def broken(c: sqlite3.Connection) -> None:
        c.execute("INSERT INTO one VALUES(2)")
        raise RuntimeError("half way")

    with pytest.raises(RuntimeError, match="half way"):
        migrate(conn, (("t-one", ""), ("t-two", broken)))
    assert conn.execute("SELECT a FROM one").fetchall() == [(1,)]
    assert applied(conn) == {"t-one"}
    conn.close()


def test_an_index_older_than_every_migration_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite3"
    Store(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.executescript("DROP TABLE migrations; DROP INDEX handoffs_machine; ALTER TABLE handoffs DROP COLUMN machine;"
                       " UPDATE meta SET value = '1' WHERE key = 'schema_version';")
    before = conn.execute("SELECT * FROM sqlite_master ORDER BY name").fetchall()
    with pytest.raises(StoreError, match="has schema 1, this eywa needs 7"):
        Store(path)
    assert conn.execute("SELECT * FROM sqlite_master ORDER BY name").fetchall() == before
    conn.close()
