"""Eywa as a Claude Code plugin (claude_code_plugin/: a local marketplace holding the plugin), installed and
run by the real CLI in a throwaway HOME: its hooks fire and its MCP server is listed and answers."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from eywa.claude_code.hooks_install import EVENTS
from tests.claude_harness import ClaudeCode, ScriptedModel, result_text, tool, tool_results

from .conftest import ROOT

pytestmark = pytest.mark.slow  # the real Claude Code CLI

MARKETPLACE = ROOT / "claude_code_plugin"
PLUGIN = MARKETPLACE / "eywa"
GET = "mcp__plugin_eywa_eywa__eywa_get"


@pytest.fixture(scope="module")
def plugged(claude_code: ClaudeCode) -> Iterator[ClaudeCode]:
    added = claude_code.cli("plugin", "marketplace", "add", str(MARKETPLACE))
    assert added.returncode == 0, added.stderr + added.stdout
    installed = claude_code.cli("plugin", "install", "eywa@eywa")
    assert installed.returncode == 0, installed.stderr + installed.stdout
    yield claude_code


def test_the_plugin_installs_from_its_marketplace_and_its_mcp_server_connects(plugged: ClaudeCode) -> None:
    listed = plugged.cli("plugin", "list")
    assert "eywa@eywa" in listed.stdout and "enabled" in listed.stdout.split("eywa@eywa", 1)[1].split("❯")[0]
    servers = plugged.cli("mcp", "list")
    assert "plugin:eywa:eywa" in servers.stdout and "Connected" in servers.stdout.split("plugin:eywa:eywa", 1)[1]


def test_the_plugins_hooks_mark_the_session_and_give_the_next_one_its_context(plugged: ClaudeCode,
                                                                            scripted_model: ScriptedModel) -> None:
    scripted_model.on("port the digest to the plugin", "The digest now runs from the plugin.")
    first = plugged.run("port the digest to the plugin")
    assert (plugged.data_dir / "pending" / f"{first.session_id}.json").exists(), "the SessionEnd hook did not run"
    assert plugged.eywa("ingest").returncode == 0
    scripted_model.on("continue the plugin work", "Continuing.")
    plugged.run("continue the plugin work")
    sent = json.dumps(scripted_model.requests_for("continue the plugin work")[0]["messages"])
    assert "SessionStart hook additional context" in sent
    assert json.dumps(plugged.headline(first.session_id))[1:-1] in sent
    plugged.first_session = first.session_id  # type: ignore[attr-defined]


def test_the_plugins_tools_are_found_by_their_words_and_answer_markdown(plugged: ClaudeCode,
                                                                        scripted_model: ScriptedModel) -> None:
    scripted_model.on("what did the earlier sessions do",
                      tool("ToolSearch", {"query": "memory of past sessions"}),
                      tool(GET, {"query": "digest plugin"}),
                      "Found it.")
    plugged.run("what did the earlier sessions do", allowed_tools=f"Read {GET}")
    requests = scripted_model.requests_for("what did the earlier sessions do")
    (found,) = tool_results(requests[1])
    names = [ref.get("tool_name") for ref in found["content"]]
    assert names[0] == GET and "mcp__plugin_eywa_eywa__eywa_extract" in names, names  # best match first
    (answer,) = tool_results(requests[2])
    body = result_text(answer)
    assert not answer.get("is_error") and body.startswith("## Eywa: "), body[:200]
    assert f"# {plugged.headline(plugged.first_session)}" in body  # type: ignore[attr-defined]


def test_the_plugins_hooks_are_the_ones_eywa_hooks_install_writes() -> None:
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    assert set(hooks) == set(EVENTS)
    for event, (subcommand, matcher) in EVENTS.items():
        (group,) = hooks[event]
        assert group.get("matcher") == matcher
        (hook,) = group["hooks"]
        assert hook["command"] == f'"${{CLAUDE_PLUGIN_ROOT}}/bin/eywa-plugin" hook {subcommand}'
    server = json.loads((PLUGIN / ".mcp.json").read_text())["mcpServers"]["eywa"]
    assert server == {"command": "${CLAUDE_PLUGIN_ROOT}/bin/eywa-plugin", "args": ["mcp"]}


def test_without_eywa_on_path_the_hooks_stay_silent_and_the_server_says_why(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    launcher = str(PLUGIN / "bin" / "eywa-plugin")
    hook = subprocess.run([launcher, "hook", "session-start"], env=env, capture_output=True, text=True, timeout=10)
    assert (hook.returncode, hook.stdout, hook.stderr) == (0, "", "")
    server = subprocess.run([launcher, "mcp"], env=env, capture_output=True, text=True, timeout=10)
    assert server.returncode == 1 and "eywa is not on PATH" in server.stderr
    assert os.access(launcher, os.X_OK)
