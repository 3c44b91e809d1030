"""The harness itself: the real `claude -p` runs against the scripted model, tools and all."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.claude_harness import ClaudeCode, ScriptedModel, result_text, tool, tool_results
from tests.claude_harness_regen import COMMITTED_ROOT, FIXTURES, eywa_view, run_scenario
from tests.claude_scenarios import SCENARIOS
from tests.tools import stand_in

pytestmark = pytest.mark.slow  # the real Claude Code CLI


def test_claude_p_answers_with_the_scripted_text_and_writes_its_transcript(claude_code: ClaudeCode,
                                                                          scripted_model: ScriptedModel) -> None:
    scripted_model.on("harness says hello", "Hello from the scripted model.")
    run = claude_code.run("harness says hello")
    assert run.result["result"] == "Hello from the scripted model."
    assert run.result["is_error"] is False
    request = scripted_model.requests_for("harness says hello")[-1]
    assert request["stream"] is True and request["model"]
    types = [r.get("type") for r in claude_code.records(run.session_id)]
    assert "user" in types and "assistant" in types


def test_a_scripted_tool_call_runs_in_the_cli_and_its_result_reaches_the_model(claude_code: ClaudeCode,
                                                                            scripted_model: ScriptedModel) -> None:
    target = claude_code.project / "made-by-claude.txt"
    scripted_model.on("write the marker file",
                      tool("Write", {"file_path": str(target), "content": "written through the real CLI\n"}),
                      "The file is written.")
    run = claude_code.run("write the marker file")
    assert target.read_text() == "written through the real CLI\n"
    assert run.result["result"] == "The file is written."
    second = scripted_model.requests_for("write the marker file")[1]
    results = tool_results(second)
    assert len(results) == 1 and not results[0].get("is_error")
    assert "made-by-claude.txt" in result_text(results[0])


_VOLATILE = [  # what differs between two runs of one scenario: ids, clocks, the folder it ran in
    (re.compile(r'"?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"?'), "<uuid>"),  # quoted or not
    (re.compile(r"\ba[0-9a-f]{16}\b"), "<agent>"),
    (re.compile(r"\b\d{4}-\d{2}-\d{2}( \d{2}:\d{2})?\b"), "<date>"),
    (re.compile(r"\b\d{2}:\d{2}\b"), "<time>"),
    (re.compile(r"\(\d+ tools, \d+s\)"), "(<n> tools, <n>s)"),
    (re.compile(r"[\d,]+ tokens before"), "<n> tokens before"),
    (re.compile(r'"?\b[0-9a-f]{8}\b"?'), "<short-id>"),  # YAML quotes one that reads as a number
]


def _stable(text: str, root: str) -> str:
    text = text.replace(root, "<root>")
    for pattern, placeholder in _VOLATILE:
        text = pattern.sub(placeholder, text)
    return text


@pytest.fixture
def run_root() -> Iterator[Path]:
    """A folder of this test's own whose path is as long as COMMITTED_ROOT's, so a line Eywa cuts is cut where
    the committed one was."""
    with stand_in(COMMITTED_ROOT) as root:
        assert len(str(root)) == len(str(COMMITTED_ROOT))
        yield root


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_the_pinned_cli_still_writes_what_the_committed_transcripts_hold(name: str, tmp_path: Path,
                                                                         run_root: Path) -> None:
    """The committed harness transcripts are this CLI's: run again, each scenario reads the same to Eywa."""
    unscripted = run_scenario(name, run_root / name, tmp_path / "written")
    assert not unscripted
    committed = eywa_view(FIXTURES / name)
    fresh = eywa_view(tmp_path / "written")
    for old, new in zip(committed, fresh, strict=True):
        assert _stable(new, str(run_root / name)) == _stable(old, str(COMMITTED_ROOT / name))
