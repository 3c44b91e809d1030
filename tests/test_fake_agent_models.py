"""The scripted model server (tests/fake_agent_models.py) hands its turns to the agent's own turns only: a request
the script did not foresee (a side request, a retry) never takes one. The requests are shaped as the pinned CLIs
send them (Qwen Code 0.24's and Copilot CLI 1.0's Chat Completions, Codex 0.171's Responses, Gemini CLI 0.61's)."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest

from .fake_agent_models import ScriptedModels, Turn

QWEN = "You are Qwen Code, a non-interactive CLI agent developed by Alibaba Group.\nMore instructions."
# Qwen Code's managed auto-memory extraction: a forked agent it starts after a prompt answered without tool calls
EXTRACTOR = "You are now acting as the managed memory extraction subagent for an AI coding assistant."
TOOLS = [{"type": "function", "function": {"name": "run_shell_command", "parameters": {"type": "object"}}}]


def _chat(models: ScriptedModels, messages: list[dict[str, Any]], **form: Any) -> dict[str, Any]:
    """One Chat Completions request, answered whole (`stream` False unless `form` says otherwise)."""
    body = {"model": "qwen3-coder-plus", "messages": messages, "tools": TOOLS, "stream": False, **form}
    request = urllib.request.Request(f"{models.url}/v1/chat/completions", json.dumps(body).encode(),
                                     {"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as reply:
        if reply.headers["content-type"] == "text/event-stream":  # the last chunk before [DONE] ends the turn
            chunks = [json.loads(line[6:]) for line in reply.read().decode().splitlines()
                      if line.startswith("data: {")]
            deltas = [chunk["choices"][0]["delta"] for chunk in chunks]
            return {"content": "".join(d.get("content") or "" for d in deltas),
                    "tool_calls": [call for d in deltas for call in d.get("tool_calls", [])]}
        return json.loads(reply.read())["choices"][0]["message"]


def _said(answer: dict[str, Any]) -> str:
    """The text of an answer, or the command it runs."""
    calls = answer.get("tool_calls") or []
    return json.loads(calls[0]["function"]["arguments"])["command"] if calls else answer["content"]


def _main(*results: str) -> list[dict[str, Any]]:
    """Qwen Code's conversation after `results`: each a shell call of the model's and its output."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": QWEN}, {"role": "user", "content": "Add it"}]
    for number, output in enumerate(results):
        call = {"id": f"call_{number}", "type": "function",
                "function": {"name": "run_shell_command", "arguments": "{}"}}
        messages += [{"role": "assistant", "content": None, "tool_calls": [call]},
                     {"role": "tool", "tool_call_id": f"call_{number}", "content": output}]
    return messages


@pytest.fixture
def models() -> Any:
    script = [Turn(calls=[("run_shell_command", {"command": "git add -A"})]),
              Turn(calls=[("run_shell_command", {"command": "git status"})]), Turn(text="Done.")]
    with ScriptedModels(script, fallback=Turn(text="fallback")) as server:
        yield server


@pytest.mark.parametrize("side", [
    {"stream": True, "messages": [{"role": "system", "content": EXTRACTOR}, {"role": "user", "content": "history"},
                                  {"role": "assistant", "content": "noted"}, {"role": "user", "content": "extract"}]},
    {"stream": True, "response_format": {"type": "json_object"}},
    {"stream": False},
    {"stream": True, "tools": []},
], ids=["memory-extractor", "json-mode", "not-streamed", "no-tools"])
def test_a_side_request_between_two_agent_turns_takes_no_turn(models: ScriptedModels, side: dict[str, Any]) -> None:
    assert _said(_chat(models, _main(), stream=True)) == "git add -A"
    form = {key: value for key, value in side.items() if key != "messages"}
    assert _chat(models, side.get("messages") or _main("added", "more"), **form)["content"] == "fallback"
    assert _said(_chat(models, _main("added"), stream=True)) == "git status"
    assert _said(_chat(models, _main("added", "On branch main"), stream=True)) == "Done."


def test_a_retried_request_gets_the_turn_it_got_before(models: ScriptedModels) -> None:
    """Qwen Code and Copilot CLI send the same body again when a reply fails: had the first reply been lost (a client
    timeout under load), the retry must not take the next step of the script."""
    assert _said(_chat(models, _main(), stream=True)) == "git add -A"
    assert _said(_chat(models, _main("added"), stream=True)) == "git status"
    assert _said(_chat(models, _main("added"), stream=True)) == "git status"
    assert _said(_chat(models, _main("added", "On branch main"), stream=True)) == "Done."
    assert list(models.turns) == []


def test_a_side_request_still_takes_a_turn_that_names_it() -> None:
    """A compaction prompt (Copilot CLI's streams with `tool_choice` none; Codex's offers no tools) is scripted with
    `match`."""
    summary = Turn(match="Please create a detailed summary", text="<overview>summary</overview>")
    with ScriptedModels([Turn(text="first"), summary, Turn(text="after")]) as models:
        assert _chat(models, _main(), stream=True)["content"] == "first"
        ask = [*_main("x"), {"role": "user", "content": "Please create a detailed summary of the conversation"}]
        assert _chat(models, ask, stream=True, tools=[])["content"] == "<overview>summary</overview>"
        assert _chat(models, _main("x"), stream=True)["content"] == "after"


def test_a_subagent_opening_its_own_conversation_takes_the_next_turn(models: ScriptedModels) -> None:
    """Gemini CLI's codebase investigator is scripted by order: a conversation new to the server, under its own system
    prompt, is the agent's."""
    assert _said(_chat(models, _main(), stream=True)) == "git add -A"
    helper = [{"role": "system", "content": "You are **Codebase Investigator**"}, {"role": "user", "content": "find"}]
    assert _said(_chat(models, helper, stream=True)) == "git status"
    helper += [{"role": "assistant", "content": "looking"}, {"role": "user", "content": "go on"}]
    assert _chat(models, helper, stream=True)["content"] == "Done."
