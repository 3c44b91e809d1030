"""Claude Code: `~/.claude/projects/<encoded cwd>/<session>.jsonl` (the `projects_dir` setting).

Subagents: `<project>/agent-<id>.jsonl` (2.0.x, the parent named by the `sessionId` inside),
`<project>/<session>/subagents/[workflows/<name>/]agent-<id>.jsonl` with `agent-<id>.meta.json` (2.1.x), and
inline sidechain records (1.0.x) in the main file itself. The reader: builder.py (records -> Session), records.py
(only the parts of a line a session is built from), catalogue.py (the record types and fields it knows).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from eywa.core.session import Session
from eywa.core.sources import CLAUDE_CODE
from eywa.core.sources.claude.builder import build_session
from eywa.core.sources.jsonl import ReadStats, peek_fields
from eywa.core.sources.plugin import AgentSource, Redact, SourceFile


def encode_cwd(cwd: str) -> str:
    """Claude Code's folder name for a working directory: every character but [A-Za-z0-9] becomes '-'."""
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def subagent_parent(source: SourceFile) -> str | None:
    """The parent session id of a Claude Code subagent file; None when it cannot be told."""
    if source.role == "subagents-dir":
        parts = source.path.parts
        index = len(parts) - 1 - parts[::-1].index("subagents")
        return parts[index - 1] if index >= 1 else None
    return peek_fields(source.path, ("sessionId",)).get("sessionId")


def read_meta(source: SourceFile) -> dict:
    """The `.meta.json` beside a 2.1.x subagent file (agentType, description), or {}."""
    meta_path = source.path.with_suffix(".meta.json")
    try:
        import orjson

        value = orjson.loads(meta_path.read_bytes())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


class ClaudeCode(AgentSource):
    kind = CLAUDE_CODE
    subagents_are_sessions = False  # sidechain records, read by build_subagent
    shell_keeps_folder = True  # its Bash tool's one shell

    def layout(self, relative: tuple[str, ...]) -> str | None:
        if "subagents" in relative[:-1]:
            return "subagents-dir"
        return "agent-file" if relative[-1].startswith("agent-") else "main"

    def session_of(self, file: SourceFile) -> str | None:
        return file.path.stem if file.role == "main" else subagent_parent(file)

    def companions(self, transcript: Path) -> tuple[Path, ...]:
        return (transcript.with_suffix(".meta.json"),)  # a subagent's type and task (read_meta)

    def named_session(self, file: SourceFile) -> str | None:
        return file.path.stem

    def read(self, session_id: str, files: list[SourceFile], redact: Redact) -> tuple[Session, dict[str, ReadStats]]:
        subagents = [(f.path, f.role, read_meta(f) if f.role == "subagents-dir" else {})
                     for f in files if f.role != "main"]
        session, stats = build_session(session_id, [f.path for f in files if f.role == "main"], subagents, redact)
        session.agent = self.kind
        return session, stats

    def working_directories(self, folder: Path) -> set[str]:
        """The cwd of each project folder: every session in one folder started in the same one, so one
        transcript a folder tells it (the newest, whose first lines carry the cwd)."""
        found: set[str] = set()
        try:
            folders = [entry for entry in os.scandir(folder) if entry.is_dir() and not entry.name.startswith(".")]
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            return found
        for project in folders:
            try:
                transcripts = sorted((entry for entry in os.scandir(project.path)
                                      if entry.name.endswith(".jsonl") and not entry.name.startswith(("agent-", "."))),
                                     key=lambda entry: entry.stat().st_mtime_ns, reverse=True)
            except OSError:
                continue
            for entry in transcripts[:3]:  # a summary-only file has no cwd: the next one does
                cwd = peek_fields(Path(entry.path), ("cwd",)).get("cwd")
                if isinstance(cwd, str) and cwd:
                    found.add(cwd)
                    break
        return found


AGENT = ClaudeCode()
