"""GitHub Copilot CLI and Qwen Code sessions beside the others, on the transcripts the real CLIs wrote
(tests/more_agent_transcripts.py): what each reader finds, its subagents folded, the renders and handoffs, runs
folded into the Claude Code session that started them, the drift counts, what push sends, bad lines, secrets,
and that an agent is a plug-in: nothing outside core/sources imports one."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eywa.cli.main import main as cli
from eywa.core.api import Eywa
from eywa.core.archive.renderer import Renderer
from eywa.core.config.settings import load_settings
from eywa.core.handoffs.model import parse_handoff
from eywa.core.machines.outbox import sync
from eywa.core.redaction.scrubber import Redactor
from eywa.core.sources import AGENTS, KINDS, agent, default_path
from eywa.core.sources.copilot import KNOWN_TYPES, build_copilot_session
from eywa.core.sources.discovery import file_session, group_sessions, scan_files
from eywa.core.sources.plugin import AgentSource
from eywa.core.sources.qwen import build_qwen_session
from eywa.core.sources.sessions import read_session

from .conftest import ROOT, identity
from .more_agent_transcripts import FIXTURES, GOLDEN, fixture_sessions, generate, read, views
from .test_agent_sources import kinds
from .test_bad_input import MUTATIONS, read_file
from .tools import agent_cli, debian

SESSIONS = fixture_sessions()
SECRET = "sk-ant-api03-" + "Zq7xW2vB9nL4kT8mR1sD6fH3jP5cY0uA" * 2 + "-AbCdEfGh"
REPO = "/tmp/eywa-agents/widgets"
BUILD = {"copilot": build_copilot_session, "qwen": build_qwen_session}


def calls(session: object) -> list[tuple[str, object, bool]]:
    return [(c.name, c.input.get("file_path") or c.input.get("command"), c.is_error)
            for c in session.tool_calls]  # type: ignore[attr-defined]


# -- the readers, on what the real CLIs wrote ----------------------------------------------------------------
def test_copilot_events_give_prompts_replies_edits_commands_the_failure_the_compaction_and_the_resume() -> None:
    path = SESSIONS["copilot-greeting"]
    session, stats = build_copilot_session("s", [path], identity)
    assert kinds(session) == {"user": 2, "assistant": 4, "tool": 4, "compaction": 1}
    assert session.user_texts == ["Add a greeting module to the widgets repo and check that it runs",
                                  "Rename hello to greet_user"]  # the second: `copilot --resume`, same file
    assert calls(session) == [("Write", f"{REPO}/greet.py", False),
                              ("Bash", "python3 -c 'import greet; print(greet.hello())'", False),
                              ("Bash", "sleep 2; ls does-not-exist", True),  # success, exit code 2
                              ("Edit", f"{REPO}/greet.py", False)]
    assert session.tool_calls[2].error == "ls: cannot access 'does-not-exist': No such file or directory"
    compaction = next(e for e in session.events if e.kind == "compaction")
    assert compaction.text == "greet.py added with hello(), checked by running it."
    assert (session.agent, session.version, session.model) == ("copilot", "1.0.102", "scripted-coder")
    assert (session.cwd, session.repository, session.git_branches) == (REPO, "https://github.com/acme/widgets",
                                                                       ["main"])
    file_stats = stats[str(path)]
    assert (file_stats.bad_lines, file_stats.unknown_types, file_stats.unknown_fields) == (0, {}, {})
    assert file_stats.version == "copilot 1.0.102" and session.known_records == file_stats.records


def test_a_copilot_subagents_events_fold_into_one_run_and_not_into_the_sessions_turns() -> None:
    session, _ = build_copilot_session("s", [SESSIONS["copilot-spawn"]], identity)
    assert session.user_texts == ["Ask a helper agent to count the lines of greet.py"]
    assert calls(session) == [("Agent", None, False)]  # the subagent's Bash call is its own
    assert session.tool_calls[0].input == {"subagent_type": "explore",
                                           "description": "Count the lines of greet.py and say how many"}
    (run,) = session.subagents
    assert (run.agent_type, run.description, run.prompt, run.answer, run.tool_counts) == (
        "explore", "Count greet.py lines", "Count the lines of greet.py and say how many", "greet.py has 2 lines.",
        {"Bash": 1})


def test_qwen_chat_gives_prompts_replies_reads_edits_commands_the_failure_the_compaction_and_the_resume() -> None:
    path = SESSIONS["qwen-greeting"]
    session, stats = build_qwen_session("s", [path], identity)
    assert kinds(session) == {"user": 2, "assistant": 4, "tool": 5, "compaction": 1}
    assert session.user_texts == ["Add a greeting module to the widgets repo and check that it runs",
                                  "Rename hello to greet_user"]  # the second: `qwen --resume`, same file
    assert calls(session) == [("Write", f"{REPO}/greet.py", False),
                              ("Bash", "python3 -c 'import greet; print(greet.hello())'", False),
                              ("Bash", "ls does-not-exist", True),
                              ("Read", f"{REPO}/greet.py", False),
                              ("Edit", f"{REPO}/greet.py", False)]
    assert session.tool_calls[2].error.startswith("ls: cannot access 'does-not-exist': No such file or directory")
    compaction = next(e for e in session.events if e.kind == "compaction")
    assert compaction.text == "greet.py added with hello(), checked by running it."
    assert (session.agent, session.version, session.model, session.cwd) == ("qwen", "0.24.4", "qwen3-coder-plus", REPO)
    file_stats = stats[str(path)]
    assert (file_stats.bad_lines, file_stats.unknown_types, file_stats.unknown_fields) == (0, {}, {})
    assert file_stats.version == "qwen 0.24.4"


def test_a_qwen_subagents_file_is_folded_with_what_its_meta_file_says() -> None:
    session = read(SESSIONS["qwen-spawn"])
    assert calls(session) == [("Agent", None, False)]
    (run,) = session.subagents
    assert (run.agent_type, run.description, run.prompt, run.answer, run.tool_counts) == (
        "general-purpose", "Count greet.py lines", "Count the lines of greet.py and say how many",
        "greet.py has 2 lines.", {"Bash": 1})
    assert len(session.source_files) == 2


def test_a_qwen_rewind_drops_the_turns_of_the_dead_branch(tmp_path: Path) -> None:
    """A rewind re-roots the chain: the next record's parent is an earlier record (or none: back to the start),
    and what followed it is gone."""
    records = [json.loads(line) for line in SESSIONS["qwen-greeting"].read_text().splitlines()]
    first_result = next(i for i, r in enumerate(records) if r["type"] == "tool_result")
    again = {**records[0], "uuid": "u-again", "parentUuid": None,
             "message": {"role": "user", "parts": [{"text": "Start over: only add greet.py"}]}}
    answer = {**records[first_result - 1], "uuid": "a-again", "parentUuid": "u-again",
              "message": {"role": "model", "parts": [{"text": "Starting over."}]}}
    path = tmp_path / "rewound.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [*records[:first_result + 1], again, answer]))
    session, _ = build_qwen_session("s", [path], identity)
    assert session.user_texts == ["Start over: only add greet.py"] and session.tool_calls == []
    branch = {**again, "uuid": "u-branch", "parentUuid": "a-again",
              "message": {"role": "user", "parts": [{"text": "Now run it"}]}}
    back = {**branch, "uuid": "u-back", "parentUuid": "u-again", "message": {"role": "user", "parts": [
        {"text": "No: just say hello"}]}}  # rewound to the answer before "Now run it"
    path.write_text(path.read_text() + json.dumps(branch) + "\n" + json.dumps(back) + "\n")
    session, _ = build_qwen_session("s", [path], identity)
    assert session.user_texts == ["Start over: only add greet.py", "No: just say hello"]
    assert [e.text for e in session.events if e.kind == "assistant"] == []  # "Starting over." followed u-again


@pytest.mark.parametrize("name", sorted(SESSIONS))
def test_renders_and_handoffs_match_golden_files(name: str) -> None:
    render, handoff = views(SESSIONS[name])
    assert render == (GOLDEN / f"{name}.md").read_text(encoding="utf-8")
    assert handoff == (GOLDEN / f"{name}.handoff.md").read_text(encoding="utf-8")


def _shape(path: Path) -> tuple[object, ...]:
    session = read(path)
    runs = [(r.agent_type, r.prompt, r.answer, r.tool_counts) for r in session.subagents]
    return session.agent, session.model, session.version, session.user_texts, \
        [(c.name, c.is_error) for c in session.tool_calls], kinds(session).get("compaction", 0), runs


def test_the_pinned_copilot_and_qwen_clis_still_write_what_the_committed_transcripts_hold(tmp_path: Path) -> None:
    """Both real CLIs, run headless now against the scripted server (~1 min): their transcripts read into
    sessions of the same shape as the committed ones (ids and times aside), with nothing unknown to the readers."""
    generate(tmp_path / "more")
    fresh = fixture_sessions(tmp_path / "more")
    assert sorted(fresh) == sorted(SESSIONS)
    for name, path in SESSIONS.items():
        assert _shape(fresh[name]) == _shape(path), name
    for kind in ("copilot", "qwen"):
        for file in scan_files(tmp_path / "more" / kind / agent(kind).folders[0], kind):
            stats = read_file(file.path)[1]
            session, built = BUILD[kind]("s", [file.path], identity)
            assert (built[str(file.path)].unknown_types, built[str(file.path)].unknown_fields) == ({}, {}), file.path
            assert stats.bad_lines == 0
    assert len(list((tmp_path / "more" / "claude").rglob("*.jsonl"))) == 1


def test_the_copilot_event_catalogue_is_the_pinned_clis_schema(tmp_path: Path) -> None:
    """The CLI unpacks its package, with schemas/session-events.schema.json, under $HOME/.cache on first run."""
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "COPILOT_OFFLINE": "true"}
    subprocess.run([str(agent_cli("copilot")), "--version"], env=env, check=True, capture_output=True, timeout=120)
    schema = json.loads(next(tmp_path.rglob("session-events.schema.json")).read_text())
    events = schema["definitions"][schema["$ref"].split("/")[-1]]["anyOf"]
    types = {schema["definitions"][e["$ref"].split("/")[-1]]["properties"]["type"]["const"] for e in events}
    assert types == KNOWN_TYPES


# -- ingest: handoffs, folding, projects, filters, drift -------------------------------------------------------
@pytest.fixture
def agents(env: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """The committed transcripts as each agent's folder (the Claude Code session copied last: it is newer than
    the runs it started, as it is for real), configured as sources."""
    monkeypatch.setenv("EYWA_NOW", "2026-12-02")
    copilot, qwen = tmp_path / "copilot-home", tmp_path / "qwen-home"
    shutil.copytree(FIXTURES / "copilot", copilot, copy_function=shutil.copy)
    shutil.copytree(FIXTURES / "qwen", qwen, copy_function=shutil.copy)
    shutil.copytree(FIXTURES / "claude", env["projects"], dirs_exist_ok=True, copy_function=shutil.copy)
    monkeypatch.setenv("EYWA_SOURCES", json.dumps([{"kind": "copilot", "path": str(copilot)},
                                                   {"kind": "qwen", "path": str(qwen)}]))
    return {**env, "copilot": copilot, "qwen": qwen}


def handoffs(data: Path) -> dict[str, object]:
    return {h.session_id: h for h in (parse_handoff(p.read_text()) for p in (data / "handoffs").rglob("*.md"))}


def test_handoffs_name_their_agent_subagents_fold_and_headless_runs_fold_into_the_claude_code_session(
        agents: dict[str, Path]) -> None:
    report = Eywa(load_settings()).ingest()
    # Runs folded: Copilot's and Qwen Code's subagents, and `copilot -p` and `qwen -p` in the Claude Code session.
    assert (report.sessions_updated, report.subagent_runs, report.bad_lines) == (5, 4, 0)
    found = handoffs(agents["data"])
    assert sorted(h.agent for h in found.values()) == ["claude-code", "copilot", "copilot", "qwen", "qwen"]
    assert {h.projects[0] for h in found.values()} == {"widgets"}
    parent = next(h for h in found.values() if h.agent == "claude-code")
    text = next((agents["data"] / "archive").rglob(f"{parent.session_id}.md")).read_text()
    assert "- copilot " in text and "Review greet.py for style -> greet.py reads well" in text
    assert "- qwen " in text and "Summarise greet.py -> greet.py defines greet_user()" in text
    runs = {SESSIONS["copilot-review"].parent.name, SESSIONS["qwen-summarise"].stem}
    assert runs.isdisjoint(found)  # neither run is a session of its own


def test_the_agent_filter_and_stats_count_each_agent_and_its_cli_version(
        agents: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    eywa = Eywa(load_settings())
    eywa.ingest()
    assert {r.agent for r in eywa.last(10, agent="copilot")} == {"copilot"}
    assert {r.agent for r in eywa.recall("greet_user rename", days_back=30, agent="qwen")} == {"qwen"}
    capsys.readouterr()
    assert cli(["stats", "--verbose"]) == 0
    out = capsys.readouterr().out
    assert "copilot 1.0.102: 3 files, nothing unknown" in out and "qwen 0.24.4: 4 files, nothing unknown" in out
    by_agent = next(line for line in out.splitlines() if line.startswith("by agent"))
    assert "copilot 2 sessions" in by_agent and "qwen 2 sessions" in by_agent
    assert cli(["last", "--agent", "qwen"]) == 0
    assert all(" qwen " in line for line in capsys.readouterr().out.splitlines())


def test_a_newer_clis_unknown_events_and_fields_are_counted_under_its_version(tmp_path: Path) -> None:
    for kind, name in (("copilot", "copilot-greeting"), ("qwen", "qwen-greeting")):
        lines = []
        for line in SESSIONS[name].read_text().splitlines():
            record = json.loads(line)
            if kind == "copilot" and record["type"] == "session.start":
                record["data"]["copilotVersion"] = "1.9.0"
            if kind == "qwen":
                record["version"] = "0.30.0"
            lines.append(json.dumps({**record, "voiceInputId": "v-1"} if record["type"] in ("user.message", "user")
                                    else record))
        lines.append(json.dumps({"type": "hologram.state" if kind == "copilot" else "hologram", "data": {}}))
        path = tmp_path / kind / "t.jsonl"
        path.parent.mkdir()
        path.write_text("\n".join(lines) + "\n")
        session, stats = BUILD[kind]("s", [path], identity)
        users = 2
        expected_type = "hologram.state" if kind == "copilot" else "hologram"
        expected_field = f"{'user.message' if kind == 'copilot' else 'user'}.voiceInputId"
        assert stats[str(path)].unknown_types == {expected_type: 1}
        assert stats[str(path)].unknown_fields == {expected_field: users}
        assert stats[str(path)].version == ("copilot 1.9.0" if kind == "copilot" else "qwen 0.30.0")
        assert len(session.user_texts) == users  # read as before, only counted


def test_secrets_in_copilot_and_qwen_transcripts_never_reach_the_data_directory(agents: dict[str, Path]) -> None:
    for path in [*agents["copilot"].rglob("*.jsonl"), *agents["qwen"].rglob("*.jsonl")]:
        text = path.read_text()
        # In a prompt, a command, a reply and a subagent's task of each agent.
        text = text.replace("Rename hello to greet_user", f"Rename hello, key {SECRET}")
        text = text.replace("ls does-not-exist", f"ls does-not-exist {SECRET}")
        text = text.replace("Renamed hello() to greet_user() in greet.py.", f"Done, ANTHROPIC_API_KEY={SECRET}")
        text = text.replace("Count greet.py lines", f"Count lines {SECRET}")
        path.write_text(text)
    for meta in agents["qwen"].rglob("*.meta.json"):
        meta.write_text(meta.read_text().replace("Count greet.py lines", f"Count lines {SECRET}"))
    Eywa(load_settings()).ingest()
    piece = SECRET[14:30]
    assert [p for p in agents["data"].rglob("*") if p.is_file() and piece.encode() in p.read_bytes()] == []
    assert any("[REDACTED" in p.read_text() for p in (agents["data"] / "archive").rglob("*.md"))


# -- push, folders, bad lines, the plug-in seam ----------------------------------------------------------------
def _renders(home: Path, kind: str) -> list[str]:
    groups = group_sessions(scan_files(home / agent(kind).folders[0], kind), file_session)
    return [Renderer().render(read_session(group, identity)[0]) for _, group in sorted(groups.items())]


@pytest.mark.parametrize("kind", ["copilot", "qwen"])
def test_push_sends_what_the_reader_needs_and_the_hub_reads_the_same_sessions(kind: str, tmp_path: Path) -> None:
    """What the agent says travels (its `travelling`: the outbox of core/machines/outbox.py is made of it, and
    push sends the outbox), sent by the real rsync: the copy holds its transcripts (and Qwen Code's subagent
    .meta.json), nothing else, and reads alike."""
    rsync = debian("rsync", command="rsync")
    folder = tmp_path / "home"
    shutil.copytree(FIXTURES / kind, folder)
    (folder / "logs").mkdir()
    (folder / "logs" / "process.log").write_text("not a transcript\n")
    (folder / "settings.json").write_text("{}")
    outbox, hub = tmp_path / "outbox", tmp_path / "hub"
    sync([(kind, folder)], outbox, Redactor())
    subprocess.run([str(rsync), "--recursive", "--times", f"{outbox / kind}/", f"{hub}/"], check=True,
                   capture_output=True, timeout=60)
    sent = sorted(p.relative_to(hub).as_posix() for p in hub.rglob("*") if p.is_file())
    assert sent == sorted(p.relative_to(FIXTURES / kind).as_posix() for p in (FIXTURES / kind).rglob("*")
                          if p.is_file())
    assert _renders(hub, kind) == _renders(folder, kind) != []
    assert agent(kind).working_directories(folder) == {REPO}  # a spoke maps where its sessions ran


def test_each_agents_folder_follows_its_clis_own_variables(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("COPILOT_HOME", "QWEN_HOME", "QWEN_RUNTIME_DIR"):
        monkeypatch.delenv(name, raising=False)
    assert default_path("copilot", tmp_path) == tmp_path / ".copilot"
    assert default_path("qwen", tmp_path) == tmp_path / ".qwen"
    monkeypatch.setenv("COPILOT_HOME", "/srv/copilot")
    monkeypatch.setenv("QWEN_HOME", "/srv/qwen")
    assert (default_path("copilot", tmp_path), default_path("qwen", tmp_path)) == (Path("/srv/copilot"),
                                                                                   Path("/srv/qwen"))
    monkeypatch.setenv("QWEN_RUNTIME_DIR", "/srv/qwen-runtime")  # Qwen Code writes its sessions there first
    assert default_path("qwen", tmp_path) == Path("/srv/qwen-runtime")


@st.composite
def damaged(draw: Callable) -> tuple[Path, list[bytes]]:
    """A Copilot CLI events file or a Qwen Code chat the real CLIs wrote, about one line in four mutated the
    ways tests/test_bad_input.py mutates Claude Code's, Codex's and Gemini CLI's."""
    path = draw(st.sampled_from([SESSIONS["copilot-greeting"], SESSIONS["copilot-spawn"], SESSIONS["qwen-greeting"]]))
    lines = path.read_bytes().splitlines()
    return path, [draw(st.sampled_from(MUTATIONS))(draw, line) if draw(st.integers(0, 3)) == 0 else line
                  for line in lines]


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(damaged())
def test_copilot_and_qwen_readers_never_raise_on_bad_lines_and_count_them(
        tmp_path_factory: pytest.TempPathFactory, damaged: tuple[Path, list[bytes]]) -> None:
    source, lines = damaged
    root = Path(tempfile.mkdtemp(dir=tmp_path_factory.getbasetemp()))
    target = root / source.name
    target.write_bytes(b"".join(line + b"\n" for line in lines))
    expected = read_file(target)[1]
    build = build_copilot_session if "copilot" in source.parts else build_qwen_session
    session, stats = build("s", [target], str)
    assert stats[str(target)].bad_lines == expected.bad_lines
    assert stats[str(target)].records + expected.bad_lines >= len([line for line in lines if line.strip()]) - 1
    Renderer().render(session)  # and it renders
    shutil.rmtree(root)


def test_every_registered_agent_is_a_plug_in_of_the_one_interface() -> None:
    assert len(set(KINDS)) == len(AGENTS)
    for entry in AGENTS:
        plugin = agent(entry.kind)
        assert isinstance(plugin, AgentSource) and plugin.kind == entry.kind
        assert type(plugin).read is not AgentSource.read, entry.kind  # every agent reads its own format


_AGENT_IMPORT = re.compile(r"^\s*(?:from|import) eywa\.core\.sources\.(\w+)", re.MULTILINE)
# Claude Code's own front end reads its transcripts; runs are linked from its Bash tool's calls.
_CLAUDE_CODE_READERS = {"claude_code/mcp_server.py", "core/ingest/agent_runs.py"}


def test_no_module_outside_core_sources_imports_an_agents_module() -> None:
    """Ingest, push, the API and the front ends ask `eywa.core.sources.agent(kind)`: adding an agent is its module
    and its registry line."""
    modules = {entry.module for entry in AGENTS}
    found = []
    for path in sorted(p for top in ("core", "bot", "cli", "claude_code") for p in (ROOT / top).rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith("core/sources/") or relative in _CLAUDE_CODE_READERS:
            continue
        imported = _AGENT_IMPORT.findall(path.read_text(encoding="utf-8"))
        found += [(relative, name) for name in imported if name in modules]
    assert found == []
