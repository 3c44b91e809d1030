"""What the machine can do to eywa: a read-only, missing or unusable data directory, a full disk, a
transcript folder that disappears mid-scan, a broken config file. Each gives one clear message (CLI:
one stderr line, exit code 1, no traceback; bot: a log line and a word to the owner) and leaves what
was there before intact; once the fault is gone, the next run completes.

Real faults where the machine allows them (tmpfs and read-only bind mounts need root, chmod needs a
non-root user); the same faults injected at the os level otherwise, so every run checks something.
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from eywa.bot import app as bot_app
from eywa.bot import main as bot_main
from eywa.bot.app import build_application
from eywa.cli.main import main
from eywa.core.errors import StoreError
from eywa.core.index.bot_store import BotState
from eywa.core.index.store import Store
from eywa.core.ingest import run as ingest_run

from .conftest import CORPUS, ROOT
from .fake_telegram import BotThread, Call, FakeTelegram, Owner, bot_settings

NOW = "2026-02-17"
SOURCES = sorted(p for p in (CORPUS / "entire" / "projects").glob("*/*.jsonl")
                 if not p.name.startswith("agent-") and 4_000 < p.stat().st_size < 60_000)
EARLIER, LATER = SOURCES[:3], SOURCES[3:6]


@dataclass
class Outcome:
    code: int
    out: str
    err: str


Run = Callable[..., Outcome]  # `eywa ARGS...` in this process


@pytest.fixture
def eywa(env: dict[str, Path], capsys: pytest.CaptureFixture[str],
         monkeypatch: pytest.MonkeyPatch) -> Iterator[Run]:
    monkeypatch.setenv("EYWA_NOW", NOW)

    def run(*args: str) -> Outcome:
        code = main(list(args))
        captured = capsys.readouterr()
        return Outcome(code, captured.out, captured.err)
    yield run


def link(projects: Path, sources: list[Path]) -> None:
    for source in sources:
        target = projects / source.parent.name / source.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(source)


def one_message(outcome: Outcome, *words: str) -> str:
    """The outcome is a failure told in exactly one line that holds `words`."""
    assert outcome.code == 1, outcome
    lines = outcome.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("eywa: "), outcome.err
    assert all(word in lines[0] for word in words), lines[0]
    return lines[0]


def contents(data: Path, *, settled: bool = True) -> tuple[dict[str, bytes], set[tuple[str, str]]]:
    """Every handoff file, and every handoff row of an index that passes SQLite's integrity check.
    `settled`: no run failed since the last that completed, so each row has its file and each file its
    row (a failed run may leave files ahead of their rows: written first, they are rewritten next time)."""
    files = {p.relative_to(data).as_posix(): p.read_bytes() for p in (data / "handoffs").rglob("*.md")}
    conn = sqlite3.connect(data / "index.sqlite3")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        rows = set(conn.execute("SELECT session_uuid, path FROM handoffs"))
    finally:
        conn.close()
    named = {f"handoffs/{path}" for _, path in rows}
    assert named == set(files) if settled else named <= set(files)
    return files, rows


def listed(outcome: Outcome) -> set[str]:
    """The short ids `eywa last` printed."""
    assert outcome.code == 0, outcome
    return {line.split()[0] for line in outcome.out.splitlines()}


def ingested(eywa: Run, env: dict[str, Path], sources: list[Path]) -> tuple[dict[str, bytes], set]:
    link(env["projects"], sources)
    outcome = eywa("ingest", "--progress", "never")
    assert outcome.code == 0 and outcome.err == "", outcome
    return contents(env["data"])


def recovered(eywa: Run, env: dict[str, Path], before: tuple[dict[str, bytes], set]) -> None:
    """Earlier data is intact, and an ingest without the fault completes with the later sessions."""
    files, rows = contents(env["data"], settled=False)
    assert before[1] <= rows and all(files[name] == text for name, text in before[0].items())
    outcome = eywa("ingest", "--progress", "never")
    assert outcome.code == 0 and outcome.err == "", outcome
    stems = {uid for uid, _ in contents(env["data"])[1]}
    assert stems == {p.stem for p in EARLIER + LATER}


# --- a read-only data directory -----------------------------------------------------------------------


@contextmanager
def mounted(target: Path, *options: str) -> Iterator[None]:
    """`mount OPTIONS target`, undone after; skips the test where mounting is not allowed."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting needs root")
    done = subprocess.run(["mount", *options, str(target)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount here: {done.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(target)], check=True)


@contextmanager
def read_only(data: Path, technique: str) -> Iterator[str]:
    """The data directory made read-only; yields what the message must say."""
    if technique == "chmod":
        if os.geteuid() == 0:
            pytest.skip("root ignores permission bits")
        data.chmod(0o555)
        try:
            yield "permission denied"
        finally:
            data.chmod(0o755)
        return
    with mounted(data, "--bind", str(data)):
        subprocess.run(["mount", "-o", "remount,ro,bind", str(data)], check=True)
        yield "read-only file system"


@pytest.mark.parametrize("technique", ["read-only mount", "chmod"])
def test_read_only_data_dir_lets_every_reader_read_and_gives_each_writer_one_message(
        eywa: Run, env: dict[str, Path], technique: str) -> None:
    before = ingested(eywa, env, EARLIER)
    link(env["projects"], LATER)
    with read_only(env["data"], technique) as says:
        for command in (["ingest"], ["reindex"]):
            one_message(eywa(*command), says, str(env["data"]))
        assert listed(eywa("last")) == {uid[:8] for uid, _ in before[1]}  # the index, opened read-only
        for command in (["get", "session"], ["get", "--mode", "keywords", "session"],
                        ["show", EARLIER[0].stem[:8]], ["stats"]):
            outcome = eywa(*command)
            assert outcome.code == 0 and outcome.err == "" and outcome.out, (command, outcome)
        assert "## Eywa: 3 past sessions" in eywa("get", "session").out
    recovered(eywa, env, before)


def test_permission_denied_on_a_handoff_write_names_the_file_and_keeps_earlier_data(
        eywa: Run, env: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    before = ingested(eywa, env, EARLIER)
    link(env["projects"], LATER)

    def denied(src: str, dst: str) -> None:
        raise PermissionError(errno.EACCES, "Permission denied", dst)

    with monkeypatch.context() as patch:
        patch.setattr(os, "replace", denied)
        line = one_message(eywa("ingest"), "permission denied on", "make the data directory")
    assert str(env["data"] / "archive") in line  # the first file ingest writes for a session
    assert listed(eywa("last")) <= {uid[:8] for uid, _ in before[1]}  # reading needs no write
    recovered(eywa, env, before)


def test_bot_on_a_read_only_data_dir_says_so_and_exits(env: dict[str, Path], tmp_path: Path) -> None:
    (env["data"] / "handoffs").mkdir(parents=True)
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("EYWA_", "ANTHROPIC_"))}
    environ.update(HOME=str(env["home"]), EYWA_DATA_DIR=str(env["data"]), EYWA_PROJECTS_DIR=str(env["projects"]),
                   TELEGRAM_BOT_TOKEN="123:abc", EYWA_TELEGRAM__API_BASE_URL="http://127.0.0.1:9/bot")
    with read_only(env["data"], "read-only mount") as says:
        done = subprocess.run([sys.executable, "-m", "eywa.bot.main"], cwd=ROOT, env=environ, capture_output=True,
                              text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [f"eywa-bot: the data directory {env['data']} is on a {says}: eywa "
                                        "writes its index there; set data_dir (or EYWA_DATA_DIR) to another folder"]


# --- a missing data directory -------------------------------------------------------------------------


def test_missing_data_dir_is_created_by_ingest_and_readers_say_to_run_it(
        eywa: Run, env: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    data = env["data"] / "not" / "yet"
    monkeypatch.setenv("EYWA_DATA_DIR", str(data))
    link(env["projects"], EARLIER)
    for command in (["get", "session"], ["last"], ["stats"], ["show", "abc"]):
        one_message(eywa(*command), f"no index in {data}: run `eywa ingest` first")
    assert not data.exists()  # a reader creates nothing
    assert eywa("ingest", "--progress", "never").code == 0
    assert len(contents(data)[1]) == len(EARLIER)


def test_data_dir_that_cannot_be_created_is_named_in_one_message(
        eywa: Run, env: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = env["home"] / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("EYWA_DATA_DIR", str(blocker / "data"))
    link(env["projects"], EARLIER)
    one_message(eywa("ingest"), f"cannot create the data directory {blocker / 'data'}", "Not a directory")
    assert blocker.read_text() == "not a folder"


# --- an index SQLite cannot read -------------------------------------------------------------------------


def test_index_that_is_not_a_database_gives_each_reader_one_message(eywa: Run, env: dict[str, Path]) -> None:
    ingested(eywa, env, EARLIER)
    for leftover in env["data"].glob("index.sqlite3-*"):
        leftover.unlink()
    (env["data"] / "index.sqlite3").write_bytes(b"this is not a database" * 200)
    for command in (["get", "session"], ["last"], ["show", EARLIER[0].stem[:8]], ["stats"]):
        one_message(eywa(*command), "index", "file is not a database")


def test_index_damaged_while_open_is_a_store_error_that_says_to_reindex(eywa: Run, env: dict[str, Path]) -> None:
    from eywa.core.api import Eywa
    from eywa.core.config.settings import load_settings

    ingested(eywa, env, EARLIER)
    api = Eywa(load_settings(None))
    try:
        assert api.last(1)  # the store is open
        damage = sqlite3.connect(env["data"] / "index.sqlite3")
        damage.execute("DROP TABLE project_index")
        damage.commit()
        damage.close()
        with pytest.raises(StoreError, match=r"no such table: project_index.*`eywa reindex` rebuilds it"):
            api.last(1, project="anything")
    finally:
        api.close()


def test_bot_state_that_is_not_a_database_is_a_store_error_naming_the_folder(tmp_path: Path) -> None:
    path = tmp_path / "bot.sqlite3"
    path.write_bytes(b"this is not a database" * 200)
    with pytest.raises(StoreError, match=f"cannot use {tmp_path}: file is not a database"):
        BotState(path)
    assert path.read_bytes() == b"this is not a database" * 200


# --- a full disk --------------------------------------------------------------------------------------


def no_space(src: str, dst: str) -> None:
    """os.replace on a full disk."""
    raise OSError(errno.ENOSPC, "No space left on device", dst)


def fill(folder: Path) -> Path:
    """Writes a file until the disk under `folder` is full; returns it (delete it to free the space)."""
    filler = folder / "filler"
    with filler.open("wb", buffering=0) as out:  # nothing left in a buffer for close() to fail on
        try:
            while True:
                out.write(b"\0" * 65536)
                out.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


def test_full_disk_stops_ingest_with_one_message_and_keeps_earlier_data(
        eywa: Run, env: dict[str, Path]) -> None:
    env["data"].mkdir()
    with mounted(env["data"], "-t", "tmpfs", "-o", "size=16m,mode=0700", "tmpfs"):  # private, as Eywa makes it
        before = ingested(eywa, env, EARLIER)
        filler = fill(env["data"])
        link(env["projects"], LATER)
        one_message(eywa("ingest"), f"the disk holding the data directory {env['data']} is full", "free some space")
        # Full to the last byte, SQLite cannot even make its shared-memory file to read: the same words.
        one_message(eywa("last"), "is full")
        filler.unlink()
        recovered(eywa, env, before)


@pytest.mark.parametrize("where", ["index", "handoff file"])
def test_full_disk_injected_in_the_index_or_a_handoff_write_gives_one_message(
        eywa: Run, env: dict[str, Path], monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    before = ingested(eywa, env, EARLIER)
    link(env["projects"], LATER)
    with monkeypatch.context() as patch:
        if where == "index":  # SQLite's own SQLITE_FULL: the index may not grow by a page
            opened = Store.__init__

            def capped(self: Store, path: Path, **options: bool) -> None:  # ingest's planning child reads too
                opened(self, path, **options)
                pages = self.conn.execute("PRAGMA page_count").fetchone()[0]
                self.conn.execute(f"PRAGMA max_page_count = {pages}")

            patch.setattr(Store, "__init__", capped)
        else:
            patch.setattr(os, "replace", no_space)
        one_message(eywa("ingest"), f"the disk holding the data directory {env['data']} is full")
    recovered(eywa, env, before)


def test_bot_tells_the_owner_once_when_ingest_meets_a_full_disk(
        env: dict[str, Path], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(bot_app, "FIRST_INGEST_DELAY", 3600.0)  # the job runs when the test says
    link(env["projects"], EARLIER)
    caplog.set_level(logging.INFO, logger="eywa.bot")
    with FakeTelegram() as fake:
        app = build_application(bot_settings(fake, env["data"], env["projects"], ingest_every_minutes=60))
        owner = Owner(fake, 42)
        with BotThread(app) as runner:
            owner.says("/ingest")
            fake.wait_for(lambda calls: any(c.method == "editMessageText" and "done" in c.text for c in calls))
            link(env["projects"], LATER)

            def failed(call: Call) -> bool:
                return call.method == "editMessageText" and call.text.startswith("Ingest failed")

            with monkeypatch.context() as patch:
                patch.setattr(os, "replace", no_space)
                mark = fake.mark()
                owner.says("/ingest")
                (edit,) = [c for c in fake.wait_for(lambda calls: any(failed(c) for c in calls), mark) if failed(c)]
                assert edit.text == (f"Ingest failed: the disk holding the data directory {env['data']} is full: "
                                     "free some space and run it again (what was indexed before is kept)")
                (job,) = app.job_queue.get_jobs_by_name("ingest")
                mark = fake.mark()
                runner.run(job.run(app))
                runner.run(job.run(app))  # still failing: the owner is not told again
                told = [c for c in fake.since(mark) if c.method == "sendMessage"]
                assert [c.text for c in told] == [f"The scheduled ingest failed: {edit.text.split(': ', 1)[1]}"]
                assert told[0].chat_id == 42
            (status,) = owner.says("/status")
            assert "Last scheduled ingest: failed" in status.text and "is full" in status.text
            runner.run(job.run(app))
            (status,) = owner.says("/status")
            assert "Last scheduled ingest: ok" in status.text
    failures = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(failures) == 3 and all(r.exc_info is None and "is full" in r.getMessage() for r in failures)
    assert len(contents(env["data"])[1]) == len(EARLIER + LATER)


# --- a transcript folder that disappears mid-scan -----------------------------------------------------


def test_folder_vanishing_between_scan_and_read_skips_it_until_it_returns(
        eywa: Run, env: dict[str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    before = ingested(eywa, env, EARLIER)
    link(env["projects"], LATER)
    folders = sorted({env["projects"] / p.parent.name for p in LATER})
    away = tmp_path / "away"
    away.mkdir()
    scan = ingest_run.scan_sources

    def scan_then_vanish(sources: list) -> list:
        found = scan(sources)
        for folder in folders:  # e.g. a synced or network folder going away while ingest runs
            folder.rename(away / folder.name)
        return found

    with monkeypatch.context() as patch:
        patch.setattr(ingest_run, "scan_sources", scan_then_vanish)
        outcome = eywa("ingest", "--progress", "never")
    assert outcome.code == 0 and outcome.err == "", outcome
    assert contents(env["data"]) == before  # the earlier handoffs stay; the vanished ones wait
    for folder in folders:
        (away / folder.name).rename(folder)
    recovered(eywa, env, before)


# --- a broken config file -----------------------------------------------------------------------------

BROKEN = {
    "syntax": ("retrieval:\n  days_back: 7\n  max_handoffs: [3\n", ["YAML syntax error in", "line"]),
    "type": ("retrieval:\n  max_handoffs: many\n", ["retrieval.max_handoffs", "'many'"]),
}


@pytest.mark.parametrize("fault", sorted(BROKEN))
def test_broken_config_file_gives_every_front_end_one_message_and_touches_nothing(
        eywa: Run, env: dict[str, Path], capsys: pytest.CaptureFixture[str], fault: str) -> None:
    before = ingested(eywa, env, EARLIER)
    text, words = BROKEN[fault]
    config = env["home"] / "config.yaml"
    config.write_text(text)
    for command in (["ingest"], ["get", "session"], ["last"], ["stats"], ["mcp"]):
        one_message(eywa("--config", str(config), *command), str(config), *words)
    assert bot_main.main(["--config", str(config)]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("eywa-bot: ") and str(config) in line and all(w in line for w in words)
    assert contents(env["data"]) == before
