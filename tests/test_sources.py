"""Discovery walks every enabled source folder (core/sources): Claude Code's, Codex CLI's and Gemini CLI's
layouts, a folder that is missing or turned off skipped quietly."""

from __future__ import annotations

from pathlib import Path

from eywa.core.sources import CLAUDE_CODE, CODEX, GEMINI, Source
from eywa.core.sources.discovery import file_session, group_sessions, scan_sources

from .conftest import write_jsonl

CODEX_ID = "01a230ff-c672-7a73-8844-ec200075be7f"
GEMINI_ID = "0d050323-d46b-4323-a222-2eae671484ac"


def _tree(root: Path) -> dict[str, Path]:
    claude = root / "claude"
    write_jsonl(claude / "-home-me-x" / "abcdef12-0000-0000-0000-000000000000.jsonl", [{"type": "user"}])
    codex = root / "codex"
    write_jsonl(codex / "sessions/2026/12/01" / f"rollout-2026-12-01T09-46-38-{CODEX_ID}.jsonl", [{"type": "x"}])
    write_jsonl(codex / "archived_sessions" / "rollout-2026-11-02T10-00-00-11111111-2222-3333-4444-555555555555.jsonl",
                [{"type": "x"}])
    write_jsonl(codex / "sessions" / "history.jsonl", [{"not": "a rollout"}])
    write_jsonl(codex / "log" / "rollout-like.jsonl", [{"not": "in sessions/"}])
    gemini = root / "gemini"
    chats = gemini / "tmp" / "proj" / "chats"
    write_jsonl(chats / "session-2026-12-01T09-47-0d050323.jsonl", [{"sessionId": GEMINI_ID, "projectHash": "h"}])
    write_jsonl(chats / GEMINI_ID / "helper-7.jsonl", [{"sessionId": "helper-7", "kind": "subagent"}])
    write_jsonl(gemini / "tmp" / "proj" / "logs" / "session-x.jsonl", [{"a": 1}])
    (gemini / "tmp" / "proj" / "chats" / "notes.txt").write_text("not a session")
    return {"claude": claude, "codex": codex, "gemini": gemini}


def test_every_enabled_source_is_walked_and_grouped_by_its_own_layout(tmp_path: Path) -> None:
    folders = _tree(tmp_path)
    sources = (Source(CLAUDE_CODE, folders["claude"]), Source(CODEX, folders["codex"]),
               Source(GEMINI, folders["gemini"]))
    files = scan_sources(sources)
    groups = group_sessions(files, file_session)
    assert {(sid, g.agent, len(g.main), len(g.subagents)) for sid, g in groups.items()} == {
        ("abcdef12-0000-0000-0000-000000000000", CLAUDE_CODE, 1, 0),
        (CODEX_ID, CODEX, 1, 0),
        ("11111111-2222-3333-4444-555555555555", CODEX, 1, 0),
        (GEMINI_ID, GEMINI, 1, 1),  # the subagent's file is folded into the session that ran it
    }


def test_missing_and_disabled_folders_are_skipped_quietly(tmp_path: Path) -> None:
    folders = _tree(tmp_path)
    sources = (Source(CLAUDE_CODE, tmp_path / "nowhere"), Source(CODEX, folders["codex"], enabled=False),
               Source(GEMINI, folders["gemini"]), Source(CODEX, tmp_path / "spokes" / "laptop" / "codex"))
    agents = {f.agent for f in scan_sources(sources)}
    assert agents == {GEMINI}
