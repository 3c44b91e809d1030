"""The harness itself: the real `claude -p` runs against the scripted model, tools and all."""

from __future__ import annotations

from tests.claude_harness import ClaudeCode, ScriptedModel, result_text, tool, tool_results


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
