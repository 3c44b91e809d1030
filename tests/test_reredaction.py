"""Stored text follows today's redaction rules: a data directory written by release c89dd8f (whose rules let a
key block that is an assignment's value through, all but its first word; tests/fixtures/upgrade/build_secrets.py
made it with that release's code) is redacted again by the first ingest of this one, once and resumably:
the key is then in no file under the data directory (SQLite files and the full-text index included) and in
no column, whichever way the session was stored (a deterministic handoff whose transcript is kept, one whose
transcript is gone, Claude's handoff), nor in a raw copy a spoke had pushed to the hub."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from eywa.core.api import Eywa
from eywa.core.config.settings import load_settings
from eywa.core.ingest import reredact
from eywa.core.redaction.scrubber import REDACTION_RULES

from .conftest import write_jsonl

FIXTURE = Path(__file__).parent / "fixtures" / "upgrade" / "c89dd8f-secrets"
WINDOW = 12
NOW = "2026-06-02T12:00:00+00:00"

_spec = importlib.util.spec_from_file_location("build_secrets", FIXTURE.parent / "build_secrets.py")
assert _spec is not None and _spec.loader is not None
build_secrets = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_secrets)
SESSIONS = build_secrets.SESSIONS
SPOKE_SESSION = "6d1f3a52-7a0e-4c4b-9f0d-3c5e2b1a9e04"


def windows() -> set[str]:
    return {line[i : i + WINDOW].lower() for line in build_secrets.key_lines() for i in range(len(line) - WINDOW + 1)}


def leaks(data: bytes, found: set[str]) -> int:
    low = data.decode("latin-1").lower()
    return sum(1 for i in range(len(low) - WINDOW + 1) if low[i : i + WINDOW] in found)


def files_with_the_key(root: Path) -> dict[str, int]:
    found = windows()
    return {str(p.relative_to(root)): n for p in sorted(root.rglob("*")) if p.is_file()
            and (n := leaks(p.read_bytes(), found))}


def columns_with_the_key(db: Path) -> list[str]:
    found = windows()
    conn = sqlite3.connect(db)
    hits = []
    for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
        for row in conn.execute(f"SELECT * FROM {table}"):
            if any(isinstance(v, str) and leaks(v.encode(), found) for v in row):
                hits.append(table)
    conn.close()
    return hits


@pytest.fixture
def upgraded_data(env: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """The fixture's data directory, the transcripts of `kept` and `claude` where they were (`gone`'s was
    deleted by the agent's cleanup), and a raw copy of another session a spoke pushed before the outbox."""
    shutil.copytree(FIXTURE, env["data"])
    monkeypatch.setenv("EYWA_NOW", NOW)
    monkeypatch.setenv("EYWA_PROJECTS_DIR", str(env["home"] / "src-projects"))
    projects = env["home"] / "src-projects"
    build_secrets.write_transcripts(projects, ("kept", "claude"))
    # where that release read them: the index's source rows name these files, as they were then
    conn = sqlite3.connect(env["data"] / "index.sqlite3", isolation_level=None)
    for path in (projects / build_secrets.PROJECT).iterdir():
        conn.execute("UPDATE sources SET path = ?, size = ?, mtime_ns = ? WHERE session_uuid = ?",
                     (str(path), path.stat().st_size, path.stat().st_mtime_ns, path.stem))
    conn.close()
    records = [dict(r, sessionId=SPOKE_SESSION) for r in build_secrets.transcripts()["gone"]]
    write_jsonl(env["data"] / "spokes" / "laptop" / "claude-code" / build_secrets.PROJECT / f"{SPOKE_SESSION}.jsonl",
                records)
    assert files_with_the_key(env["data"])  # the old release did leak it
    assert columns_with_the_key(env["data"] / "index.sqlite3")
    return env


def test_an_upgrade_re_redacts_every_stored_text_and_the_key_is_in_no_file_and_no_column(
        upgraded_data: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    from eywa.cli.main import main

    data = upgraded_data["data"]
    assert main(["ingest", "--progress", "always"]) == 0
    err = capsys.readouterr().err
    assert "session" in err  # the progress bar was drawn
    assert files_with_the_key(data) == {}
    assert columns_with_the_key(data / "index.sqlite3") == []

    eywa = Eywa(load_settings())
    try:
        kept, claude, gone = (eywa.show(SESSIONS[name]) for name in ("kept", "claude", "gone"))
        spoke = eywa.show(SPOKE_SESSION)
        stats = eywa.stats()
    finally:
        eywa.close()
    conn = sqlite3.connect(data / "index.sqlite3")
    extractors = dict(conn.execute("SELECT session_uuid, extractor FROM handoffs"))
    conn.close()
    # Claude's handoff stays Claude's, redacted where it lay; the others keep their place and say why they matter
    assert extractors[SESSIONS["claude"]] == "llm:claude-haiku-4-5"
    assert claude.headline == "Moved the exporter's signing key"
    assert "[REDACTED:private-key]" in claude.body
    assert extractors[SESSIONS["kept"]] == extractors[SESSIONS["gone"]] == "deterministic"
    # `kept` and the spoke's copy drafted again by today's extractor; `gone` as that release drafted it
    assert gone.headline == "The vault exporter (gone) fails to sign"
    assert "- Asked: The vault exporter (gone) fails to sign" in gone.body
    assert all("- Moved it; the signature passes" in r.body for r in (kept, spoke))  # the reply read as an outcome
    assert spoke.machine == "laptop"
    # the keywords the old release made of the key's pieces are gone with them
    assert not [k for r in (kept, gone) for k in r.keywords if any(c.isdigit() for c in k)]
    line = stats.redaction
    assert line["rules"] == str(REDACTION_RULES) and line["pending"] == 0
    assert line["last"]["rules_from"] == "1" and line["last"]["redrafted"] == 1 and line["last"]["in_place"] == 2
    assert line["last"]["copies"] == 1
    assert main(["stats"]) == 0
    assert "redaction rules" in capsys.readouterr().out


def test_a_re_redaction_killed_half_way_finishes_on_the_next_ingest(upgraded_data: dict[str, Path],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    data = upgraded_data["data"]
    done = []
    real = reredact._redact_session

    def dies_after_one(*args: object, **kwargs: object) -> list:
        if done:
            raise KeyboardInterrupt
        done.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(reredact, "_redact_session", dies_after_one)
    monkeypatch.setattr(reredact, "_BATCH_SECONDS", 0.0)  # a transaction a session
    eywa = Eywa(load_settings())
    with pytest.raises(KeyboardInterrupt):
        eywa.ingest()
    eywa.close()
    conn = sqlite3.connect(data / "index.sqlite3")
    assert conn.execute("SELECT COUNT(*) FROM redaction_pending").fetchone()[0] == 2  # one done, two to go
    conn.close()
    monkeypatch.setattr(reredact, "_redact_session", real)
    eywa = Eywa(load_settings())
    try:
        eywa.ingest()
        first = eywa.stats().redaction["last"]
        eywa.ingest()  # once: nothing is redacted again
        assert eywa.stats().redaction["last"] == first
    finally:
        eywa.close()
    assert files_with_the_key(data) == {}
    assert columns_with_the_key(data / "index.sqlite3") == []


def test_an_llm_answer_stored_under_older_rules_is_redacted_too(upgraded_data: dict[str, Path]) -> None:
    eywa = Eywa(load_settings())
    try:
        eywa.ingest(llm=False)
    finally:
        eywa.close()
    conn = sqlite3.connect(upgraded_data["data"] / "index.sqlite3")
    (result,) = conn.execute("SELECT result FROM llm_state WHERE session_uuid = ?", (SESSIONS["claude"],)).fetchone()
    conn.close()
    assert "[REDACTED:private-key]" in json.loads(result)["insights"][0]["explanation"]
