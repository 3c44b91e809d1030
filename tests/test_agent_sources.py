"""Codex CLI and Gemini CLI sessions beside Claude Code's, on the transcripts the real CLIs wrote
(tests/agent_transcripts.py): what each reader finds, the renders, the handoffs, runs folded into the Claude
Code session that started them, one project across agents, the --agent filter, stats by agent. Bad lines:
tests/test_bad_input.py; SIGKILL during their ingest: tests/test_crash_recovery.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import zstandard

from eywa.cli.main import main as cli
from eywa.core.api import Eywa
from eywa.core.archive.renderer import Renderer
from eywa.core.config.settings import load_settings
from eywa.core.handoffs.model import parse_handoff
from eywa.core.sources.codex import build_codex_session
from eywa.core.sources.gemini import build_gemini_session

from .agent_transcripts import GOLDEN, fixture_sessions, generate, render
from .conftest import AGENT_SESSIONS, copy_agent_fixtures

SESSIONS = fixture_sessions()
SECRET = "sk-ant-api03-" + "Zq7xW2vB9nL4kT8mR1sD6fH3jP5cY0uA" * 2 + "-AbCdEfGh"


def identity(text: str) -> str:
    return text


def kinds(session: object) -> dict[str, int]:
    counts: dict[str, int] = {}
    for event in session.events:  # type: ignore[attr-defined]
        counts[event.kind] = counts.get(event.kind, 0) + 1
    return counts


# -- the readers, on what the real CLIs wrote ----------------------------------------------------------------
def test_codex_rollout_gives_prompts_replies_edits_commands_the_failure_the_compaction_and_the_resume() -> None:
    path = SESSIONS["codex-greeting"]
    session, stats = build_codex_session("s", [path], identity)
    assert kinds(session) == {"user": 2, "assistant": 4, "tool": 4, "compaction": 1}
    assert session.user_texts == ["Add a greeting module to the widgets repo and check that it runs",
                                  "Rename hello to greet_user"]  # the second prompt: `codex exec resume`
    calls = [(c.name, c.input.get("file_path") or c.input.get("command"), c.is_error) for c in session.tool_calls]
    assert calls == [("Write", "/tmp/eywa-agents/widgets/greet.py", False),
                     ("Bash", "python3 -c 'import greet; print(greet.hello())'", False),
                     ("Bash", "ls does-not-exist", True),
                     ("Edit", "/tmp/eywa-agents/widgets/greet.py", False)]
    assert "No such file or directory" in session.tool_calls[2].error
    compaction = next(e for e in session.events if e.kind == "compaction")
    assert compaction.text.startswith("Summary: greet.py added")
    assert (session.agent, session.version, session.model) == ("codex", "0.171.0", "gpt-5.5")
    assert session.repository == "https://github.com/acme/widgets.git" and session.cwd == "/tmp/eywa-agents/widgets"
    assert stats[str(path)].bad_lines == 0 and stats[str(path)].unknown_types == {}
    assert session.known_records == stats[str(path)].records == 57


def test_gemini_chat_gives_its_messages_tool_calls_the_failure_and_the_resumed_turns_once() -> None:
    path = SESSIONS["gemini-farewell"]
    session, stats = build_gemini_session("s", [path], identity)
    # The resume rewrote the history ($set.messages): each message still counts once, in its first form.
    assert kinds(session) == {"user": 2, "assistant": 3, "tool": 4}
    calls = [(c.name, c.input.get("file_path") or c.input.get("command"), c.is_error) for c in session.tool_calls]
    assert calls == [("Write", "/tmp/eywa-agents/widgets/farewell.py", False),
                     ("Bash", "python3 -c 'import farewell; print(farewell.farewell())'", False),
                     ("Bash", "cat missing.txt", True),
                     ("Edit", "/tmp/eywa-agents/widgets/farewell.py", False)]
    assert session.tool_calls[2].error.startswith("cat: missing.txt: No such file or directory")
    assert (session.agent, session.model, session.cwd) == ("gemini", "gemini-2.5-pro", "/tmp/eywa-agents/widgets")
    assert stats[str(path)].bad_lines == 0


def test_a_gemini_chat_without_its_project_root_file_takes_its_folder_from_its_own_context(tmp_path: Path) -> None:
    copied = tmp_path / SESSIONS["gemini-farewell"].name
    shutil.copy(SESSIONS["gemini-farewell"], copied)
    assert build_gemini_session("s", [copied], identity)[0].cwd == "/tmp/eywa-agents/widgets"


def test_an_older_single_object_gemini_chat_reads_as_its_jsonl_form(tmp_path: Path) -> None:
    """Before v0.39 a chat was one JSON object (ConversationRecord): the metadata and every message."""
    path = SESSIONS["gemini-summarise"]
    records = [json.loads(line) for line in path.read_text().splitlines()]
    meta = records[0]
    messages = [r for r in records if "id" in r]
    legacy = tmp_path / "chats" / path.name.replace(".jsonl", ".json")
    legacy.parent.mkdir()
    legacy.write_text(json.dumps({**meta, "messages": messages}, indent=2))
    old, stats = build_gemini_session("s", [legacy], identity)
    new, _ = build_gemini_session("s", [path], identity)
    assert old.events == new.events and old.models == new.models and stats[str(legacy)].bad_lines == 0
    legacy.write_text(legacy.read_text()[:-10])  # cut short: nothing read, one bad line
    assert build_gemini_session("s", [legacy], identity)[1][str(legacy)].bad_lines == 1


@pytest.mark.parametrize("name", sorted(SESSIONS))
def test_renders_match_golden_files(name: str) -> None:
    assert render(SESSIONS[name]) == (GOLDEN / f"{name}.md").read_text(encoding="utf-8")


def test_a_zstd_compressed_rollout_reads_as_the_plain_one(tmp_path: Path) -> None:
    plain = SESSIONS["codex-greeting"]
    packed = tmp_path / (plain.name + ".zst")
    packed.write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes()))
    unpacked, stats = build_codex_session("s", [packed], identity)
    assert Renderer().render(unpacked) == Renderer().render(build_codex_session("s", [plain], identity)[0])
    assert stats[str(packed)].records == 57
    packed.write_bytes(packed.read_bytes()[:-200] + b"\x00" * 50)  # a damaged frame: the rest is lost, counted
    session, stats = build_codex_session("s", [packed], identity)
    assert stats[str(packed)].bad_lines >= 1 and stats[str(packed)].records < 57


def _shape(path: Path) -> tuple[object, ...]:
    build = build_codex_session if "codex" in path.parts else build_gemini_session
    session = build("s", [path], identity)[0]
    calls = [(c.name, c.is_error) for c in session.tool_calls]
    return session.agent, session.model, session.cwd, session.user_texts, calls, kinds(session).get("compaction", 0)


@pytest.mark.slow  # the real Codex and Gemini CLIs
def test_the_pinned_clis_still_write_what_the_committed_transcripts_hold(tmp_path: Path) -> None:
    """The real Codex CLI and Gemini CLI, run headless now against the scripted servers (~10 s) in a folder of
    this run's own: their transcripts read into sessions of the same shape as the committed ones (ids and
    times aside), naming the folder the committed ones name."""
    generate(tmp_path / "agents")
    fresh = fixture_sessions(tmp_path / "agents")
    assert sorted(fresh) == sorted(SESSIONS)
    for name, path in SESSIONS.items():
        assert _shape(fresh[name]) == _shape(path), name
    assert len(list((tmp_path / "agents" / "claude").rglob("*.jsonl"))) == 1


# -- ingest: handoffs, folding, projects, filters, stats ---------------------------------------------------
@pytest.fixture
def agents(env: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    monkeypatch.setenv("EYWA_NOW", "2026-12-02")
    return {**env, **copy_agent_fixtures(tmp_path / "agents", env["projects"], monkeypatch)}


def handoffs(data: Path) -> dict[str, object]:
    return {h.session_id: h for h in (parse_handoff(p.read_text()) for p in (data / "handoffs").rglob("*.md"))}


def test_runs_started_by_a_claude_code_session_are_folded_into_it_and_every_handoff_names_its_agent(
        agents: dict[str, Path]) -> None:
    report = Eywa(load_settings()).ingest()
    # The runs: codex exec and gemini -p in the Claude Code session, Codex's spawned helper, Gemini CLI's
    # codebase_investigator.
    assert report.sessions_updated == AGENT_SESSIONS and report.subagent_runs == 4 and report.bad_lines == 0
    found = handoffs(agents["data"])
    assert sorted(h.agent for h in found.values()) == ["claude-code", "codex", "codex", "codex", "gemini", "gemini"]
    parent = next(h for h in found.values() if h.agent == "claude-code")
    archive = (agents["data"] / "archive").rglob(f"{parent.session_id}.md")
    text = next(archive).read_text()
    assert "## Subagent runs" in text and "- codex " in text and "- gemini " in text
    assert "Review greet.py for style -> greet.py reads well" in text
    # The two runs are not sessions of their own: neither handoff nor archive.
    gemini_run = json.loads(SESSIONS["gemini-summarise"].open().readline())["sessionId"]
    run_ids = {SESSIONS["codex-review"].stem[-36:], gemini_run}
    assert run_ids.isdisjoint(found)
    investigator = (agents["data"] / "archive").rglob(f"{SESSIONS['gemini-investigator'].stem[-8:]}*.md")
    assert "- gemini " in next(investigator).read_text()  # Gemini CLI's own subagent, in its chat's handoff
    spawner = next((agents["data"] / "archive").rglob(f"{SESSIONS['codex-spawn'].stem[-36:]}.md")).read_text()
    assert "Count the lines of greet.py and say how many -> greet.py has 2 lines." in spawner  # Codex's own
    assert {h.projects[0] for h in found.values()} == {"widgets"}  # the clone widgets-wt too, by its remote


def test_a_run_ingested_before_its_parent_session_is_folded_into_it_later(agents: dict[str, Path]) -> None:
    claude = next(agents["projects"].rglob("*.jsonl"))
    aside = agents["home"] / claude.name
    shutil.move(claude, aside)  # the Claude Code session's transcript is not there yet
    eywa = Eywa(load_settings())
    assert eywa.ingest().sessions_updated == AGENT_SESSIONS + 1  # 2 runs of their own, no parent
    shutil.move(aside, claude)
    eywa.ingest()
    found = handoffs(agents["data"])
    assert sorted(h.agent for h in found.values()) == ["claude-code", "codex", "codex", "codex", "gemini", "gemini"]
    assert len(list((agents["data"] / "archive").rglob("*.md"))) == AGENT_SESSIONS
    assert eywa.stats().handoffs == AGENT_SESSIONS
    again = eywa.ingest()
    assert again.sessions_updated == 0 and again.files_changed == 0  # linked runs stay linked, unread


def test_agent_filter_in_the_api_and_the_cli(agents: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    eywa = Eywa(load_settings())
    eywa.ingest()
    assert {r.agent for r in eywa.recall("greet", days_back=30, max_results=5, agent="codex")} == {"codex"}
    assert {r.agent for r in eywa.recall("farewell docstring", days_back=30, agent="gemini")} == {"gemini"}
    assert eywa.recall("farewell docstring", days_back=30, agent="claude-code")[0].agent == "claude-code"
    assert {r.agent for r in eywa.last(10, agent="codex")} == {"codex"}
    capsys.readouterr()
    assert cli(["get", "--agent", "gemini", "--json", "farewell"]) == 0
    assert {r["agent"] for r in json.loads(capsys.readouterr().out)} == {"gemini"}
    assert cli(["last", "--agent", "codex"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and all(" codex " in line for line in lines)
    assert cli(["stats"]) == 0
    by_agent = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("by agent"))
    assert "codex 3 sessions" in by_agent and "gemini 2 sessions" in by_agent and "claude-code 1 session " in by_agent


def test_a_source_turned_off_is_not_read(agents: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    sources = json.loads(__import__("os").environ["EYWA_SOURCES"]) + [{"kind": "gemini", "enabled": False}]
    monkeypatch.setenv("EYWA_SOURCES", json.dumps([s for s in sources if s["kind"] != "gemini" or "path" not in s]))
    Eywa(load_settings()).ingest()
    assert "gemini" not in {h.agent for h in handoffs(agents["data"]).values()}


def test_secrets_in_codex_and_gemini_transcripts_never_reach_the_data_directory(agents: dict[str, Path]) -> None:
    for path in [*agents["codex"].rglob("*.jsonl"), *agents["gemini"].rglob("*.jsonl")]:
        text = path.read_text()
        # In a prompt, a command and a reply of each agent.
        text = text.replace("Rename hello to greet_user", f"Rename hello, key {SECRET}")
        text = text.replace("cat missing.txt", f"cat missing.txt {SECRET}")
        text = text.replace("Added a docstring to farewell().", f"Added a docstring, ANTHROPIC_API_KEY={SECRET}")
        path.write_text(text)
    Eywa(load_settings()).ingest()
    piece = SECRET[14:30]
    leaked = [p for p in agents["data"].rglob("*") if p.is_file() and piece.encode() in p.read_bytes()]
    assert leaked == []
    assert any("[REDACTED" in p.read_text() for p in (agents["data"] / "archive").rglob("*.md"))
