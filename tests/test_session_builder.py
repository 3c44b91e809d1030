from __future__ import annotations

from pathlib import Path

from eywa.core.sources.claude import read_meta, subagent_parent
from eywa.core.sources.claude.builder import build_session
from eywa.core.sources.discovery import group_sessions, scan_files
from eywa.core.sources.sessions import is_transcript

from .conftest import identity, write_jsonl

SID = "11111111-2222-3333-4444-555555555555"


def rec(kind: str, uuid: str, content: object, ts: str = "2026-02-01T10:00:00Z", **extra: object) -> dict:
    role = "assistant" if kind == "assistant" else "user"
    record = {"type": kind, "uuid": uuid, "sessionId": SID, "timestamp": ts, "cwd": "/home/ana/src/eywa",
              "gitBranch": "ana/gemini-rewind", "message": {"role": role, "content": content}}
    record.update(extra)
    return record


def asst(uuid: str, msg_id: str, block: dict, ts: str = "2026-02-01T10:00:05Z", model: str = "claude-opus-4-6") -> dict:
    r = rec("assistant", uuid, [block], ts)
    r["message"].update({"id": msg_id, "model": model})
    return r


def build(tmp_path: Path, records: list[object]):
    path = write_jsonl(tmp_path / "proj" / f"{SID}.jsonl", records)
    return build_session(SID, [path], [], identity)


def kinds(session) -> list[str]:
    return [e.kind for e in session.events]


def test_assistant_message_split_over_lines_is_one_message(tmp_path: Path) -> None:
    session, _ = build(tmp_path, [
        rec("user", "u1", "Add rewind for gemini"),
        asst("a1", "msg_1", {"type": "thinking", "thinking": "secret musing", "signature": "x"}),
        asst("a2", "msg_1", {"type": "text", "text": "First part."}),
        asst("a3", "msg_1", {"type": "text", "text": "Second part."}),
        asst("a3b", "msg_1", {"type": "text", "text": "Second part."}),
    ])
    assert kinds(session) == ["user", "assistant"]
    assert session.events[1].text == "First part.\n\nSecond part."
    assert session.models == {"claude-opus-4-6": 1}


def test_thinking_is_left_out(tmp_path: Path) -> None:
    session, _ = build(tmp_path, [rec("user", "u1", "go"), asst("a1", "m", {"type": "thinking", "thinking": "musing"})])
    assert all("musing" not in e.text for e in session.events)


def test_tool_error_and_rejection_are_recorded(tmp_path: Path) -> None:
    session, _ = build(tmp_path, [
        rec("user", "u1", "run the tests"),
        asst("a1", "m1", {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "go test ./..."}}),
        rec("user", "u2", [{"type": "tool_result", "tool_use_id": "t1", "content": "FAIL x", "is_error": True}]),
        asst("a2", "m2", {"type": "tool_use", "id": "t2", "name": "Edit", "input": {"file_path": "/a/b.go"}}),
        rec("user", "u3", [{"type": "tool_result", "tool_use_id": "t2", "is_error": True,
                            "content": "The user doesn't want to proceed with this tool use. It was rejected"}]),
        rec("user", "u4", [{"type": "text", "text": "[Request interrupted by user for tool use]"}]),
    ])
    first, second = session.tool_calls
    assert first.is_error and first.error == "FAIL x" and not first.rejected
    assert second.rejected
    assert kinds(session)[-1] == "interrupt"


def test_slash_command_and_meta_caveat(tmp_path: Path) -> None:
    session, _ = build(tmp_path, [
        rec("user", "u1", "<local-command-caveat>Caveat: ignore</local-command-caveat>", isMeta=True),
        rec("user", "u2", "<command-name>/review</command-name><command-message>review</command-message>"
                          "<command-args>PR 12</command-args>"),
        rec("user", "u3", "<local-command-stdout>done</local-command-stdout>"),
    ])
    assert kinds(session) == ["command"]
    assert session.events[0].text == "/review" and session.events[0].meta["args"] == "PR 12"


def test_summary_is_trusted_only_when_its_leaf_is_in_the_file(tmp_path: Path) -> None:
    session, _ = build(tmp_path, [
        {"type": "summary", "summary": "Gemini rewind support", "leafUuid": "u1"},
        {"type": "summary", "summary": "Some other session", "leafUuid": "elsewhere"},
        rec("user", "u1", "hello"),
    ])
    assert session.summaries == ["Gemini rewind support"]


def test_compaction_boundary_takes_its_continuation_summary(tmp_path: Path) -> None:
    session, _ = build(tmp_path, [
        rec("user", "u1", "long work"),
        {"type": "system", "subtype": "compact_boundary", "uuid": "s1", "timestamp": "2026-02-01T11:00:00Z",
         "compactMetadata": {"trigger": "auto", "preTokens": 167361}},
        rec("user", "u2", "This session is being continued from a previous conversation. Summary: rewind",
            isCompactSummary=True),
    ])
    compaction = session.events[-1]
    assert compaction.kind == "compaction" and compaction.meta["pre_tokens"] == 167361
    assert "Summary: rewind" in compaction.text


def test_synthetic_api_error_is_an_error_not_a_model(tmp_path: Path) -> None:
    session, _ = build(tmp_path, [
        rec("user", "u1", "hi"),
        asst("a1", "m1", {"type": "text", "text": "API Error: 529 overloaded"}, model="<synthetic>"),
    ])
    assert kinds(session) == ["user", "api_error"] and session.models == {}


def test_images_are_noted_not_embedded(tmp_path: Path) -> None:
    session, _ = build(tmp_path, [rec("user", "u1", [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo" * 100}},
        {"type": "text", "text": "what is wrong here?"}])])
    assert session.events[0].images == 1 and "iVBOR" not in session.events[0].text


def test_inline_sidechain_is_folded_as_a_subagent_run(tmp_path: Path) -> None:
    session, _ = build(tmp_path, [
        rec("user", "u1", "explore"),
        rec("user", "s1", "Find the rewind code", isSidechain=True),
        {**asst("s2", "m9", {"type": "tool_use", "id": "x", "name": "Grep", "input": {"pattern": "rewind"}}),
         "isSidechain": True},
        {**asst("s3", "m9b", {"type": "text", "text": "It is in rewind.go"}), "isSidechain": True},
    ])
    assert kinds(session) == ["user"]
    (run,) = session.subagents
    assert run.prompt == "Find the rewind code" and run.answer == "It is in rewind.go"
    assert run.tool_counts == {"Grep": 1}


def test_unknown_record_types_pass_harmlessly(tmp_path: Path) -> None:
    session, stats = build(tmp_path, [rec("user", "u1", "hi"), {"type": "brand-new-thing", "x": 1},
                                      {"type": "queue-operation", "operation": "enqueue"},
                                      {"type": "progress", "data": {"type": "bash_progress"}}])
    assert kinds(session) == ["user"]
    assert next(iter(stats.values())).unknown_types == {"brand-new-thing": 1}


def test_file_of_foreign_json_is_not_a_transcript(tmp_path: Path) -> None:
    session, _ = build(tmp_path, [{"role": "user", "text": "other agent"}, {"event": "x"}])
    assert not is_transcript(session)


def _layout_tree(root: Path) -> None:
    project = root / "-home-ana-src-eywa"
    main = "aaaaaaaa-0000-0000-0000-000000000001"
    write_jsonl(project / f"{main}.jsonl", [rec("user", "u1", "build it") | {"sessionId": main}])
    # 2.0.x: agent file beside the sessions, parent named inside
    write_jsonl(project / "agent-1234abcd.jsonl", [
        {**rec("user", "x1", "Research the store"), "sessionId": main, "isSidechain": True, "agentId": "1234abcd"},
        {**asst("x2", "m", {"type": "text", "text": "SQLite WAL"}), "sessionId": main, "isSidechain": True}])
    write_jsonl(project / "agent-warm0001.jsonl", [
        {**rec("user", "w1", "Warmup"), "sessionId": main, "isSidechain": True}])
    # 2.1.x: <session>/subagents/agent-*.jsonl with .meta.json
    sub = project / main / "subagents"
    write_jsonl(sub / "agent-a77.jsonl", [rec("user", "y1", "Review the diff"),
                                         asst("y2", "m", {"type": "text", "text": "Looks right"})])
    (sub / "agent-a77.meta.json").write_text('{"agentType": "code-reviewer", "description": "Review diff"}')
    # a subagent whose parent transcript is gone
    write_jsonl(project / "agent-0rphan00.jsonl", [
        {**rec("user", "o1", "Summarise the logs"), "sessionId": "ffffffff-dead", "isSidechain": True}])


def test_subagents_of_both_file_layouts_fold_into_their_parent(tmp_path: Path) -> None:
    _layout_tree(tmp_path)
    groups = group_sessions(scan_files(tmp_path), subagent_parent)
    group = groups["aaaaaaaa-0000-0000-0000-000000000001"]
    session, _ = build_session(group.session_id, [f.path for f in group.main],
                               [(f.path, f.role, read_meta(f)) for f in group.subagents], identity)
    runs = {run.agent_id: run for run in session.subagents}
    assert set(runs) == {"1234abcd", "a77"}  # the Warmup stub is ignored
    assert runs["a77"].agent_type == "code-reviewer" and runs["a77"].description == "Review diff"
    assert runs["1234abcd"].answer == "SQLite WAL"


def test_subagent_whose_parent_is_missing_is_kept_as_an_orphan(tmp_path: Path) -> None:
    _layout_tree(tmp_path)
    groups = group_sessions(scan_files(tmp_path), subagent_parent)
    group = groups["ffffffff-dead"]
    session, _ = build_session(group.session_id, [], [(f.path, f.role, {}) for f in group.subagents], identity)
    assert session.orphan and is_transcript(session)
    assert session.subagents[0].prompt == "Summarise the logs"
    assert session.cwd == "/home/ana/src/eywa"


def test_ide_context_is_not_taken_for_what_the_user_asked(tmp_path: Path) -> None:
    session, _ = build(tmp_path, [
        rec("user", "u1", [
            {"type": "text", "text": "<ide_opened_file>The user opened the file /w/app/next.config.js in the IDE. "
                                     "This may or may not be related to the current task.</ide_opened_file>"},
            {"type": "text", "text": "Why does the Vercel build miss the submodule?"}]),
        rec("user", "u2", "<ide_selection>The user selected the lines 5 to 9 from /w/app/a.py:\nimport os"
                          "</ide_selection>"),
    ])
    assert session.user_texts == ["Why does the Vercel build miss the submodule?"]
