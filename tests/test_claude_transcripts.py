"""Transcripts the pinned Claude Code wrote in the harness (tests/fixtures/claude-code-<version>/, remade by
`python -m tests.claude_harness_regen`) read right: renders and handoffs match their golden files, and each
kind of record this version writes means what it should."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from eywa.core.extract.deterministic import draft
from eywa.core.session import Session
from tests.claude_harness_regen import FIXTURES, GOLDEN, eywa_view, sessions_of
from tests.claude_scenarios import SCENARIOS


def session_of(name: str) -> Session:
    (session, _), = sessions_of(FIXTURES / name)
    return session


def texts(session: Session, kind: str) -> list[str]:
    return [e.text for e in session.events if e.kind == kind]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_harness_transcript_renders_and_hands_off_as_its_golden_files(name: str) -> None:
    render, handoff = eywa_view(FIXTURES / name)
    assert render == (GOLDEN / f"{name}.md").read_text(encoding="utf-8")
    assert handoff == (GOLDEN / f"{name}.handoff.md").read_text(encoding="utf-8")


def test_every_record_type_of_this_version_is_known() -> None:
    for name in SCENARIOS:
        for _, stats in sessions_of(FIXTURES / name):
            assert all(not s.unknown_types for s in stats.values()), name


def test_background_agent_outcome_comes_from_its_notification_never_a_user_prompt() -> None:
    session = session_of("background-agent")
    assert not any("task-notification" in text for text in texts(session, "user"))
    assert texts(session, "user") == ["find where the retry policy lives"]
    agent = next(c for c in session.tool_calls if c.name == "Agent")
    assert agent.result == "The retry policy lives in core/llm_client.py (RetryPolicy)."
    assert agent.subagent_stats["status"] == "completed" and agent.subagent_stats["totalToolUseCount"] == 1
    bullets = draft(session, ZoneInfo("UTC")).what_happened
    assert not any("task-notification" in bullet or "Delegated 2" in bullet for bullet in bullets), bullets
    assert all(bullet == "Delegated 1 subagent run" for bullet in bullets if bullet.startswith("Delegated"))


def test_a_run_notifying_twice_is_one_run(tmp_path: Path) -> None:
    folder = tmp_path / "projects"
    shutil.copytree(FIXTURES / "background-agent", folder)
    transcript = next(p for p in folder.glob("*/*.jsonl"))
    lines = transcript.read_text(encoding="utf-8").splitlines()
    notice = next(line for line in lines if '"turnOrigin":"task_notification"' in line)
    transcript.write_text("\n".join([*lines, notice]) + "\n", encoding="utf-8")  # the note says it may come again
    (session, _), = sessions_of(folder)
    assert len(session.delegated_runs) == 1
    bullets = draft(session, ZoneInfo("UTC")).what_happened
    assert not any("task-notification" in bullet or "Delegated 2" in bullet for bullet in bullets), bullets
    assert not any("task-notification" in text for text in texts(session, "user"))


def test_a_run_asked_again_notifies_twice_and_is_still_one_run() -> None:
    """Real: SendMessage resumes the finished run; its second notification names the SendMessage call."""
    session = session_of("background-agent-twice")
    calls = {c.name: c for c in session.tool_calls}
    assert calls["Agent"].result == "RESULT-ONE: the retry policy lives in core/llm_client.py."
    assert calls["SendMessage"].result == "RESULT-TWO: tests/test_llm_client.py covers RetryPolicy."
    assert calls["Agent"].subagent_stats["agentId"] == calls["SendMessage"].subagent_stats["agentId"]
    assert len(session.delegated_runs) == 1 and len(session.subagents) == 1
    assert texts(session, "user") == ["map the retry code and its tests"]
    bullets = draft(session, ZoneInfo("UTC")).what_happened
    assert not any("task-notification" in bullet or "Delegated 2" in bullet for bullet in bullets), bullets


def test_a_notification_without_its_agent_call_is_the_runs_outcome(tmp_path: Path) -> None:
    folder = tmp_path / "projects"
    shutil.copytree(FIXTURES / "background-agent", folder)
    transcript = next(p for p in folder.glob("*/*.jsonl"))
    kept = [line for line in transcript.read_text(encoding="utf-8").splitlines()
            if '"name":"Agent"' not in line]  # the call is gone (a transcript cut by an older compaction)
    transcript.write_text("\n".join(kept) + "\n", encoding="utf-8")
    (session, _), = sessions_of(folder)
    (outcome,) = [e for e in session.events if e.kind == "subagent"]
    assert outcome.text == "The retry policy lives in core/llm_client.py (RetryPolicy)."
    assert outcome.meta["status"] == "completed"
    assert texts(session, "user") == ["find where the retry policy lives"]


def test_foreground_agent_result_is_the_report_without_its_frame() -> None:
    session = session_of("foreground-agent")
    agent = next(c for c in session.tool_calls if c.name == "Agent")
    assert agent.result == "One index is missing: sources.session_uuid has none."
    assert len(session.delegated_runs) == 1 and len(session.subagents) == 1


def test_resumed_session_is_one_session_with_both_prompts() -> None:
    assert texts(session_of("resumed-session"), "user") == ["start the tokenizer work",
                                                            "now keep hyphenated words whole"]


@pytest.mark.parametrize(("name", "trigger"), [("manual-compaction", "manual"), ("auto-compaction", "auto")])
def test_compaction_keeps_the_summary_not_the_instructions_to_the_model(name: str, trigger: str) -> None:
    session = session_of(name)
    (compaction,) = [e for e in session.events if e.kind == "compaction"]
    assert compaction.meta["trigger"] == trigger
    assert "Primary Request: fix the date parser" in compaction.text
    assert "system-reminder" not in compaction.text and "read the full transcript" not in compaction.text


def test_slash_commands_are_commands_and_their_local_output_is_left_out() -> None:
    session = session_of("slash-command")
    assert [e.text for e in session.events if e.kind == "command"] == ["/context"]
    assert texts(session, "user") == ["explain the context use"]
    manual = session_of("manual-compaction")
    assert [e.text for e in manual.events if e.kind == "command"] == ["/compact"]
    assert not any("Compacted" in e.text for e in manual.events)


def test_plan_mode_is_named() -> None:
    assert session_of("plan-mode").permission_modes == ["plan"]


def test_task_tools_leave_the_unfinished_task_open() -> None:
    session = session_of("task-tools")
    assert session.todos == [{"content": "Write the migration", "status": "completed"},
                             {"content": "Backfill old rows", "status": "pending"}]
    threads = draft(session, ZoneInfo("UTC")).open_threads
    assert any("Backfill old rows" in t for t in threads) and not any("Write the migration" in t for t in threads)


def test_an_attached_image_is_counted_with_its_prompt() -> None:
    (prompt,) = [e for e in session_of("image-prompt").events if e.kind == "user"]
    assert prompt.images == 1 and prompt.text == "what is wrong in this screenshot"


def test_a_call_the_permission_rules_refuse_is_denied_not_rejected() -> None:
    (call,) = session_of("permission-denied").tool_calls
    assert call.denied and not call.rejected and "needs approval" in call.error


def test_an_interrupted_tool_call_is_the_users_and_the_turn_is_interrupted() -> None:
    session = session_of("interrupted-tool")
    (call,) = session.tool_calls
    assert call.rejected
    assert [e.text for e in session.events if e.kind == "interrupt"] == ["Request interrupted by user for tool use"]


def test_print_session_edits_count_and_key_files() -> None:
    handoff = draft(session_of("print-session"), ZoneInfo("UTC"))
    assert handoff.substance == 2 and handoff.key_files == ["`notes.md` (1 edit)"]


def test_fixture_transcripts_are_lines_the_cli_wrote() -> None:
    """Kept real: every line is a JSON record carrying this version (or a versionless bookkeeping line)."""
    for path in FIXTURES.rglob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            assert record.get("version", "2.1.332") == "2.1.332", path


def test_a_result_holding_tags_of_its_own_keeps_the_notifications_fields(tmp_path: Path) -> None:
    folder = tmp_path / "projects"
    shutil.copytree(FIXTURES / "background-agent", folder)
    transcript = next(p for p in folder.glob("*/*.jsonl"))
    text = transcript.read_text(encoding="utf-8").replace(
        "<result>The retry policy lives in core/llm_client.py (RetryPolicy).</result>",
        "<result>Found <status>failed</status> in a log; the policy is RetryPolicy.</result>")
    transcript.write_text(text, encoding="utf-8")
    (session, _), = sessions_of(folder)
    agent = next(c for c in session.tool_calls if c.name == "Agent")
    assert agent.subagent_stats["status"] == "completed"
    assert agent.result == "Found <status>failed</status> in a log; the policy is RetryPolicy."
