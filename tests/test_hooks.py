"""`eywa hook session-start | session-end` as Claude Code runs them: a new process, the hook JSON on stdin,
an index built from the real corpus, now pinned to 2026-02-17. Speed is measured by bench/hooks.py."""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from eywa.claude_code.hooks import CONTEXT_LIMIT, render_context
from eywa.core.handoffs.model import Handoff
from eywa.core.index.readonly import RecentHandoff
from eywa.core.index.store import Store

from .conftest import CORPUS, ROOT

NOW = "2026-02-17"
CLI_CWD = "/Users/alex/workspace/cli"  # where the corpus's Entire CLI sessions ran


def start_json(cwd: str = CLI_CWD, session_id: str = "9b2f7d0e-1111-4c3a-9d7e-123456789abc",
               source: str = "startup") -> dict:
    encoded = cwd.replace("/", "-")
    return {"session_id": session_id, "transcript_path": f"/Users/alex/.claude/projects/{encoded}/{session_id}.jsonl",
            "cwd": cwd, "hook_event_name": "SessionStart", "source": source}


# A transcript that exists: a SessionEnd naming none that does is no session's end (`claude mcp list`).
SOME_TRANSCRIPT = next((CORPUS / "entire" / "projects").glob("*/4f8c1176-7025-4530-a860-c6fc4c63a150.jsonl"))


def end_json(session_id: str, cwd: str = CLI_CWD) -> dict:
    return {**start_json(cwd, session_id), "hook_event_name": "SessionEnd", "reason": "prompt_input_exit",
            "transcript_path": str(SOME_TRANSCRIPT)}


def hook(event: str, payload: dict | str, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    stdin = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run([sys.executable, *extra, "-m", "eywa.cli.main", "hook", event], input=stdin, cwd=ROOT,
                          env=env, text=True, capture_output=True, timeout=60)


def context_of(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0 and result.stderr == ""
    output = json.loads(result.stdout)
    assert output["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    return output["hookSpecificOutput"]["additionalContext"]


def base_env(home: Path, data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EYWA_", "ANTHROPIC_"))}
    env.update(HOME=str(home), EYWA_DATA_DIR=str(data), EYWA_PROJECTS_DIR=str(CORPUS), EYWA_NOW=NOW)
    return env


@pytest.fixture(scope="module")
def corpus_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    home = tmp_path_factory.mktemp("home")
    env = base_env(home, home / "data")
    result = subprocess.run([sys.executable, "-m", "eywa.cli.main", "ingest"], cwd=ROOT, env=env, text=True,
                            capture_output=True, timeout=600)
    assert result.returncode == 0, result.stderr
    return env


def newest_cli_sessions(env: dict[str, str], count: int) -> list[tuple[str, str]]:
    """Project cli's sessions of the two weeks up to its newest one: open threads first, then newest first."""
    conn = sqlite3.connect(Path(env["EYWA_DATA_DIR"]) / "index.sqlite3")
    try:
        rows = "FROM handoffs h JOIN project_index p USING(session_uuid) WHERE p.project = 'cli' AND h.substance > 0"
        newest = dt.date.fromisoformat(conn.execute(f"SELECT MAX(h.date) {rows}").fetchone()[0])
        return conn.execute(
            f"SELECT h.short_id, h.date {rows} AND h.date >= ?"
            " ORDER BY h.body LIKE '%## Open Threads' || char(10) || 'None.%', h.date DESC, h.ended_at DESC,"
            " h.session_uuid LIMIT ?", ((newest - dt.timedelta(days=13)).isoformat(), count)).fetchall()
    finally:
        conn.close()


def test_session_start_gives_the_cwds_project_open_work_first_then_newest(corpus_env: dict[str, str]) -> None:
    context = context_of(hook("session-start", start_json(), corpus_env))
    assert context.startswith("## Eywa: recent sessions in project cli\n")
    expected = newest_cli_sessions(corpus_env, 3)
    assert len(expected) == 3
    positions = [context.index(f"session {short}_") for short, _ in expected]
    assert positions == sorted(positions)  # open threads first, then newest first
    first = context.split("\n\n---\n\n")[0]
    assert "## Open Threads\n- " in first  # the corpus has open work in project cli within the window
    assert context.count("\n\n---\n\n") == 2
    assert "session_uuid:" not in context and "substance:" not in context


def test_session_start_from_a_worktree_finds_the_same_project(corpus_env: dict[str, str]) -> None:
    worktree = context_of(hook("session-start", start_json(CLI_CWD + "/.worktrees/2"), corpus_env))
    assert worktree == context_of(hook("session-start", start_json(), corpus_env))


def test_session_start_leaves_out_the_session_being_resumed(corpus_env: dict[str, str]) -> None:
    newest = sqlite3.connect(Path(corpus_env["EYWA_DATA_DIR"]) / "index.sqlite3").execute(
        "SELECT session_uuid FROM handoffs WHERE short_id = ?", (newest_cli_sessions(corpus_env, 1)[0][0],)
    ).fetchone()[0]
    context = context_of(hook("session-start", start_json(session_id=newest, source="resume"), corpus_env))
    assert newest[:8] not in context
    assert f"session {newest_cli_sessions(corpus_env, 2)[1][0]}_" in context


@pytest.mark.parametrize("cwd", ["/Users/someone/workspace/never-seen-before", "/Users/alex", "", "relative/path"])
def test_session_start_prints_nothing_without_relevant_history(corpus_env: dict[str, str], cwd: str) -> None:
    result = hook("session-start", start_json(cwd), corpus_env)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_session_start_gives_a_projects_last_work_however_old_unless_days_back_says_otherwise(
        corpus_env: dict[str, str]) -> None:
    months_later = {**corpus_env, "EYWA_NOW": "2026-12-02"}  # ten months after the corpus' last day
    context = context_of(hook("session-start", start_json(), months_later))
    assert context == context_of(hook("session-start", start_json(), corpus_env))  # the same last work
    assert f"session {newest_cli_sessions(corpus_env, 1)[0][0]}_" in context
    recent_only = {**months_later, "EYWA_RETRIEVAL__DAYS_BACK": "30"}  # a filter the user asked for
    result = hook("session-start", start_json(), recent_only)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert "project cli" in context_of(hook("session-start", start_json(), {**recent_only,
                                                                            "EYWA_RETRIEVAL__DAYS_BACK": "400"}))


def test_session_start_prints_nothing_on_an_empty_index(tmp_path: Path) -> None:
    env = base_env(tmp_path, tmp_path / "data")
    result = hook("session-start", start_json(), env)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert not (tmp_path / "data").exists()  # a hook never creates the index
    Store(tmp_path / "data" / "index.sqlite3").close()  # an index with the schema and no handoffs
    result = hook("session-start", start_json(), env)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def broken_setups(tmp_path: Path) -> dict[str, dict[str, str]]:
    a_file = tmp_path / "not-a-dir"
    a_file.write_text("x")
    garbage = tmp_path / "garbage"
    garbage.mkdir()
    (garbage / "index.sqlite3").write_bytes(b"this is not a database" * 100)
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("data_dir: [unclosed\n")
    env = base_env(tmp_path, tmp_path / "data")
    return {
        "data dir is a file": {**env, "EYWA_DATA_DIR": str(a_file)},
        "index is garbage": {**env, "EYWA_DATA_DIR": str(garbage)},
        "config is bad YAML": {**env, "EYWA_CONFIG": str(bad_yaml)},
        "now is garbage": {**env, "EYWA_NOW": "yesterday-ish"},
    }


@pytest.mark.parametrize("event", ["session-start", "session-end"])
def test_a_broken_data_directory_fails_open(tmp_path: Path, event: str) -> None:
    payload = start_json() if event == "session-start" else end_json("4f8c1176-7025-4530-a860-c6fc4c63a150")
    for name, env in broken_setups(tmp_path).items():
        result = hook(event, payload, env)
        assert (result.returncode, result.stdout, result.stderr) == (0, "", ""), name


@pytest.mark.parametrize("stdin", ["", "not json", "[1, 2]", '{"session_id": "../../etc/passwd"}', "{" * 10_000])
def test_bad_hook_input_fails_open(tmp_path: Path, stdin: str) -> None:
    env = base_env(tmp_path, tmp_path / "data")
    for event in ("session-start", "session-end"):
        result = hook(event, stdin, env)
        assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert not (tmp_path / "data" / "pending").exists() or not any((tmp_path / "data" / "pending").iterdir())


def test_session_end_marks_the_session_and_ingest_extracts_it(corpus_env: dict[str, str]) -> None:
    session_id = "4f8c1176-7025-4530-a860-c6fc4c63a150"
    payload = end_json(session_id)
    result = hook("session-end", payload, corpus_env)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    mark = Path(corpus_env["EYWA_DATA_DIR"]) / "pending" / f"{session_id}.json"
    assert json.loads(mark.read_text()) == payload
    ingest = subprocess.run([sys.executable, "-m", "eywa.cli.main", "ingest"], cwd=ROOT, env=corpus_env, text=True,
                            capture_output=True, timeout=300)
    assert "0 new or changed; 1 session updated" in ingest.stdout
    assert not mark.exists()


def test_a_session_end_whose_transcript_does_not_exist_leaves_no_mark(tmp_path: Path) -> None:
    """`claude mcp add` and `claude mcp list` fire SessionEnd for a transcript they never write."""
    env = base_env(tmp_path, tmp_path / "data")
    payload = {**end_json("9d1f0c2e-0000-4000-8000-000000000000"),
               "transcript_path": str(tmp_path / "projects" / "x" / "9d1f0c2e-0000-4000-8000-000000000000.jsonl")}
    result = hook("session-end", payload, env)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert not (tmp_path / "data" / "pending").exists()
    assert hook("session-end", end_json("9d1f0c2e-0000-4000-8000-000000000000"), env).returncode == 0
    assert [p.name for p in (tmp_path / "data" / "pending").iterdir()] == ["9d1f0c2e-0000-4000-8000-000000000000.json"]


def imported_modules(event: str, payload: dict, env: dict[str, str]) -> set[str]:
    result = hook(event, payload, env, "-X", "importtime")
    assert result.returncode == 0
    return {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}


@pytest.mark.parametrize("event", ["session-start", "session-end"])
def test_hooks_import_no_heavy_or_network_module(corpus_env: dict[str, str], tmp_path: Path, event: str) -> None:
    payload = start_json() if event == "session-start" else end_json("0abc-not-in-corpus")
    env = {**corpus_env, "EYWA_DATA_DIR": str(tmp_path / "d")} if event == "session-end" else corpus_env
    modules = imported_modules(event, payload, env)
    assert ("sqlite3" if event == "session-start" else "eywa.core.ingest.pending") in modules  # it did the work
    roots = {name.split(".")[0] for name in modules}
    forbidden = {"anthropic", "mcp", "telegram", "pydantic_settings", "pydantic", "socket", "ssl", "http", "httpx"}
    assert roots & forbidden == set()
    assert {"eywa.core.config.settings", "eywa.core.api", "eywa.core.index.store"} & modules == set()


def big_handoff(index: int, body_kb: int) -> Handoff:
    item = "Refactored the checkpoint writer so that résumé-safe offsets survive a crash — " * 12
    return Handoff(short_id=f"{index:08x}", session_id=f"{index:08x}-0000-4000-8000-000000000000",
                   date=dt.date(2026, 2, 16) - dt.timedelta(days=index), duration="1h 5m",
                   headline=f"Big session number {index}", projects=["cli"], keywords=["checkpoint-writer"],
                   substance=2, what_happened=[item] * max(1, body_kb * 1024 // len(item.encode())),
                   insights=["**Offsets** -- they must be fsynced"], open_threads=["None."])


def build_big_index(data: Path, body_kbs: list[int]) -> None:
    store = Store(data / "index.sqlite3")
    with store.transaction():
        for i, kb in enumerate(body_kbs):
            handoff = big_handoff(i, kb)
            store.put_handoff(handoff, path=f"2026/02/{16 - i:02d}/{handoff.session_id}.md")
    store.close()


@pytest.mark.parametrize(("body_kbs", "whole"), [([4, 4, 4, 4, 4], 2), ([30, 1, 1], 0), ([1, 1, 1, 1, 1], 5)])
def test_session_start_context_stays_within_10_kb(tmp_path: Path, body_kbs: list[int], whole: int) -> None:
    build_big_index(tmp_path / "data", body_kbs)
    env = {**base_env(tmp_path, tmp_path / "data"), "EYWA_RETRIEVAL__MAX_HANDOFFS": "5"}
    context = context_of(hook("session-start", start_json(), env))
    assert len(context.encode("utf-8")) <= CONTEXT_LIMIT
    assert context.count("## What Happened") == max(1, whole)
    if whole == 0:  # one handoff alone is too big: it is cut at a line end, and says how to read the rest
        assert context.rstrip().endswith("[cut to fit; `eywa show 00000000` prints it whole]")
    else:
        assert context.count("## Open Threads") == whole


def test_render_context_never_exceeds_the_limit_even_with_multibyte_text() -> None:
    body = "# Überschrift\n" + "\n".join("- " + "ß→€" * 50 for _ in range(200))
    for limit in (300, 1000, CONTEXT_LIMIT):
        text = render_context("cli", [RecentHandoff("u", "abcd1234", "2026-02-16", 65, body)], limit)
        assert len(text.encode("utf-8")) <= limit
        text.encode("utf-8").decode("utf-8")
