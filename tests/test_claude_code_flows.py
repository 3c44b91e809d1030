"""Eywa inside the real Claude Code (the pinned CLI against the scripted model, a throwaway HOME): the hooks
`eywa hooks install` writes, the MCP server added with the line it prints, found through ToolSearch."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator

import pytest

from tests.claude_harness import ClaudeCode, ScriptedModel, result_text, text, tool, tool_results

pytestmark = pytest.mark.slow  # the real Claude Code CLI

MCP_TOOLS = "Write Read Bash mcp__eywa__eywa_get mcp__eywa__eywa_extract"


def _text_of(request: dict) -> str:
    return json.dumps(request.get("messages", []))


@pytest.fixture(scope="module")
def installed(claude_code: ClaudeCode, scripted_model: ScriptedModel) -> Iterator[ClaudeCode]:
    """Hooks installed and the MCP server added as the README says, after one session was ingested."""
    done = claude_code.eywa("hooks", "install", "--settings", str(claude_code.settings_path))
    assert done.returncode == 0, done.stderr
    line = next(x.strip() for x in done.stdout.splitlines() if x.strip().startswith("claude mcp add"))
    added = claude_code.cli(*shlex.split(line)[1:])
    assert added.returncode == 0, added.stderr + added.stdout
    scripted_model.on("rework the keyword scorer",
                      tool("Write", {"file_path": str(claude_code.project / "scorer.py"), "content": "SCORE = 1\n"}),
                      "The keyword scorer now weighs rare words more.")
    first = claude_code.run("rework the keyword scorer so rare words weigh more", "--settings",
                            '{"disableAllHooks": true}')
    assert claude_code.eywa("ingest").returncode == 0
    claude_code.first_session = first.session_id  # type: ignore[attr-defined]
    yield claude_code


def test_session_start_hook_gives_the_model_the_projects_last_handoff(installed: ClaudeCode,
                                                                      scripted_model: ScriptedModel) -> None:
    scripted_model.on("what did we do last time", "We reworked the keyword scorer.")
    installed.run("what did we do last time")
    request = scripted_model.requests_for("what did we do last time")[0]
    sent = _text_of(request)
    assert "SessionStart hook additional context" in sent
    assert json.dumps(installed.headline(installed.first_session))[1:-1] in sent  # type: ignore[attr-defined]


def test_session_end_marks_the_session_and_the_next_ingest_extracts_it(installed: ClaudeCode,
                                                                       scripted_model: ScriptedModel) -> None:
    scripted_model.on("rename the config loader", "Renamed load_config to read_config.")
    run = installed.run("rename the config loader")
    mark = installed.data_dir / "pending" / f"{run.session_id}.json"
    assert mark.exists(), "SessionEnd left no mark"
    assert installed.eywa("ingest").returncode == 0
    assert not mark.exists()
    assert installed.headline(run.session_id) == "Rename load_config to read_config"  # its report, as a commit subject


def test_mcp_tool_is_found_through_toolsearch_and_answers_plain_markdown(installed: ClaudeCode,
                                                                         scripted_model: ScriptedModel) -> None:
    scripted_model.on("recall the scorer work",
                      tool("ToolSearch", {"query": "select:mcp__eywa__eywa_get"}),
                      tool("mcp__eywa__eywa_get", {"query": "keyword scorer"}),
                      "Found the earlier session.")
    installed.run("recall the scorer work", allowed_tools=MCP_TOOLS)
    requests = scripted_model.requests_for("recall the scorer work")
    assert any(t["name"] == "mcp__eywa__eywa_get" for t in requests[1]["tools"]), "ToolSearch did not load it"
    (answer,) = tool_results(requests[2])
    body = result_text(answer)
    assert not answer.get("is_error"), body
    assert body.startswith("## Eywa: ") and " past session" in body.splitlines()[0], body[:200]
    assert f"# {installed.headline(installed.first_session)}" in body  # type: ignore[attr-defined]
    assert '{"result"' not in body and "\\n" not in body


def test_deferred_tool_descriptions_say_when_to_call_them(installed: ClaudeCode,
                                                          scripted_model: ScriptedModel) -> None:
    scripted_model.on("look up the eywa tools", tool("ToolSearch", {"query": "select:mcp__eywa__eywa_get,"
                                                                             "mcp__eywa__eywa_extract"}))
    installed.run("look up the eywa tools", allowed_tools=MCP_TOOLS)
    loaded = {t["name"]: t for t in scripted_model.requests_for("look up the eywa tools")[1]["tools"]}
    get, extract = loaded["mcp__eywa__eywa_get"], loaded["mcp__eywa__eywa_extract"]
    for words in ("past Claude Code sessions", "earlier", "handoff"):
        assert words in get["description"], words
    assert "session" in extract["description"] and "save" in extract["description"].lower()
    assert get["input_schema"]["properties"]["max_handoffs"]["maximum"] == 5


def test_eywa_extract_without_an_id_saves_the_calling_session(installed: ClaudeCode,
                                                              scripted_model: ScriptedModel) -> None:
    scripted_model.on("save this session now",
                      tool("ToolSearch", {"query": "select:mcp__eywa__eywa_extract"}),
                      tool("mcp__eywa__eywa_extract", {}),
                      "Saved.")
    run = installed.run("save this session now", allowed_tools=MCP_TOOLS)
    (answer,) = tool_results(scripted_model.requests_for("save this session now")[2])
    body = result_text(answer)
    assert not answer.get("is_error"), body
    assert body.startswith(f"## Eywa: handoff of session {run.session_id}"), body[:300]
    assert f"# {installed.headline(run.session_id)}" in body


def test_bad_tool_arguments_come_back_as_a_tool_error_the_cli_shows(installed: ClaudeCode,
                                                                   scripted_model: ScriptedModel) -> None:
    scripted_model.on("recall with too many",
                      tool("ToolSearch", {"query": "select:mcp__eywa__eywa_get"}),
                      tool("mcp__eywa__eywa_get", {"query": "scorer", "days_back": 0}),
                      text("The arguments were wrong."))
    run = installed.run("recall with too many", allowed_tools=MCP_TOOLS)
    (answer,) = tool_results(scripted_model.requests_for("recall with too many")[2])
    assert answer.get("is_error") is True
    assert "invalid arguments for eywa_get: days_back = 0" in result_text(answer)
    records = installed.records(run.session_id)
    errors = [b for r in records if r.get("type") == "user" and isinstance(r["message"]["content"], list)
              for b in r["message"]["content"] if b.get("type") == "tool_result" and b.get("is_error")]
    assert errors and "days_back" in json.dumps(errors)


def test_eywa_extract_after_clear_saves_the_new_session_not_the_one_the_server_started_with(
        installed: ClaudeCode, scripted_model: ScriptedModel) -> None:
    scripted_model.on("draft the changelog first", "Drafted.")
    scripted_model.on("save what follows the clear",
                      tool("ToolSearch", {"query": "select:mcp__eywa__eywa_extract"}),
                      tool("mcp__eywa__eywa_extract", {}),
                      "Saved.")
    installed.run(None, allowed_tools=MCP_TOOLS, messages=[[text("draft the changelog first")], [text("/clear")],
                                                           [text("save what follows the clear")]])
    folder = installed.transcript("x").parent
    (after,) = [p.stem for p in folder.glob("*.jsonl") if "save what follows the clear" in p.read_text()
                and "<command-name>/clear</command-name>" in p.read_text()]
    (before,) = [p.stem for p in folder.glob("*.jsonl") if "draft the changelog first" in p.read_text()]
    assert after != before
    (answer,) = tool_results(scripted_model.requests_for("save what follows the clear")[2])
    body = result_text(answer)
    assert body.startswith(f"## Eywa: handoff of session {after}"), body[:300]
