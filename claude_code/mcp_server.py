"""`eywa mcp`: the MCP server (stdio) that gives Claude Code itself the memory, like the original eywa-mcp.

Tools:
- `eywa_get(query?, days_back?, max_handoffs, project?, agent?, machine?)`: the same text as `eywa get`.
- `eywa_extract(session_id?)`: (re-)extract one session now and return its handoff; without an id, the
  calling session: the one the SessionStart hook noted for this server's Claude Code process (its parent:
  right after `/clear` too), else the one Claude Code named in the server's environment when it started
  it (CLAUDE_CODE_SESSION_ID, 2.1.332), else the one transcript of the server's working directory that is
  still being written.

Both return plain text content (no structured output): Claude Code hands the model a structured result as
its JSON text.

The SDK runs sync tools on worker threads, and a SQLite connection belongs to the thread that opened it,
so each worker thread gets its own `Eywa` (core/api.py is one-per-thread).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field, ValidationError

from eywa.core.api import Eywa, HandoffRecord, format_handoffs
from eywa.core.config.clock import timestamp
from eywa.core.config.settings import Settings
from eywa.core.errors import EywaError, NotFound
from eywa.core.ingest.pending import live_session
from eywa.core.redaction.scrubber import Redactor
from eywa.core.sources.claude import encode_cwd
from eywa.core.sources.claude.builder import block_text
from eywa.core.sources.jsonl import read_records

ACTIVE_SECONDS = 300  # a transcript written this recently belongs to a session that is still running
CLAIM_WAIT_SECONDS = 3.0
_ENCODED_NAME_MAX = 200  # Claude Code shortens longer folder names (and appends a hash)

INSTRUCTIONS = (
    "Eywa is the memory of past Claude Code sessions: a short handoff per session (what happened, "
    "insights, key files, open threads). Call eywa_get to recall earlier work before re-investigating "
    "something that earlier sessions may have solved, and eywa_extract to save the current session's handoff."
)

# Claude Code defers MCP tools: the model sees only their names until ToolSearch finds them by these words,
# so each description opens with what the tool is for in the words a user would use.
GET_DESCRIPTION = """Memory of past Claude Code sessions: search earlier sessions and recall what was done
before (previous work, history, decisions, fixes). Returns the handoffs (what happened, insights, key
files, open threads) of the past sessions that best match `query`, best first, as markdown.

Call it when the user refers to earlier work ("like last time", "the rewind bug", "continue where we left
off"), at the start of a task that continues earlier work, or before re-investigating a problem an earlier
session may already have solved. Use specific words: project names, components, error messages, file
names; time words ("last week", "in March") rank those days first. Without a query it returns the most
recent sessions. `days_back` (at least 1) keeps the last N days (default: any age), `max_handoffs` 1-5,
`project` only projects whose name contains it, `agent` only the sessions of one agent (claude-code, codex or
gemini), `machine` only the sessions of one machine."""

EXTRACT_DESCRIPTION = """Save this Claude Code session to memory now: write its handoff (headline, what
happened, insights, key files, open threads) from its transcript so the next session can continue from
it, and return it as markdown.

Call it when the user asks to save, remember, note or hand off this session, or after finishing a
substantial piece of work. Without `session_id` it saves the calling session (the one transcript of this
working directory still being written); if several sessions are running in the same directory it lists
them instead of guessing: call again with the right id. With `session_id` (a full id or a unique prefix)
it saves (or re-extracts) that session."""


class AmbiguousSession(EywaError, LookupError):
    """Several sessions of the working directory are being written."""


@dataclass(frozen=True)
class Transcript:
    session_id: str
    path: Path
    mtime: float


def _first_prompt(path: Path, redact: Callable[[str], str], max_records: int = 400) -> str:
    """The first thing the user typed, to tell sessions apart (best effort, redacted: it goes to Claude)."""
    try:
        for number, record in enumerate(read_records(path)):
            if number >= max_records:
                break
            message = record.get("message")
            if record.get("type") != "user" or record.get("isMeta") or not isinstance(message, dict):
                continue
            content = block_text(message.get("content"))
            if content.strip() and not content.lstrip().startswith("<"):
                # Redacted whole, then cut: a key cut at the edge would no longer look like one.
                return redact(" ".join(content.split()))[:100]
    except OSError:
        pass
    return ""


def cwd_transcripts(projects_dir: Path, cwd: str) -> list[Transcript]:
    """The main transcripts of sessions started in `cwd`, newest write first."""
    name = encode_cwd(cwd.rstrip("/") or "/")
    folders = [projects_dir / name]
    if len(name) > _ENCODED_NAME_MAX and projects_dir.is_dir():
        folders += [p for p in projects_dir.iterdir() if p.is_dir() and p.name.startswith(name[:_ENCODED_NAME_MAX])]
    found = []
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            continue
        for entry in entries:
            if entry.name.endswith(".jsonl") and not entry.name.startswith("agent-") and entry.is_file():
                path = Path(entry.path)
                found.append(Transcript(path.stem, path, entry.stat().st_mtime))
    found.sort(key=lambda t: t.mtime, reverse=True)
    return found


def calling_session(projects_dir: Path, cwd: str, *, redact: Callable[[str], str], now: float | None = None,
                    active_seconds: float = ACTIVE_SECONDS, claimed: str | None = None) -> str:
    """The id of the calling session: `claimed` (the CLAUDE_CODE_SESSION_ID Claude Code gives its MCP
    servers) when a transcript of `cwd` has it, else the one session of `cwd` whose transcript is still
    being written; never a guess."""
    transcripts = cwd_transcripts(projects_dir, cwd)
    # The CLI writes its transcript a moment after the turn that calls us: give the claimed one that moment.
    deadline = time.monotonic() + CLAIM_WAIT_SECONDS
    while claimed and time.monotonic() < deadline and not any(t.session_id == claimed for t in transcripts):
        time.sleep(0.05)
        transcripts = cwd_transcripts(projects_dir, cwd)
    if claimed and any(t.session_id == claimed for t in transcripts):
        return claimed
    now = timestamp() if now is None else now
    active = [t for t in transcripts if now - t.mtime <= active_seconds]
    if len(active) == 1:
        return active[0].session_id

    def listed(items: list[Transcript]) -> str:
        lines = []
        for t in items[:10]:
            prompt = _first_prompt(t.path, redact)
            lines.append(f"  {t.session_id}  written {max(0, now - t.mtime):.0f}s ago"
                         + (f'  first prompt: "{prompt}"' if prompt else ""))
        return "\n".join(lines)

    if active:
        raise AmbiguousSession(
            f"{len(active)} sessions in {cwd} are being written right now; call eywa_extract again with the "
            f"session_id of this one:\n{listed(active)}"
        )
    if not transcripts:
        raise NotFound(f"no Claude Code transcript of {cwd} under {projects_dir}; pass session_id")
    raise NotFound(
        f"no session in {cwd} was written in the last {active_seconds / 60:.0f} minutes, so the calling session "
        f"is unknown; pass session_id. The newest ones:\n{listed(transcripts[:5])}"
    )


def _handoff_text(record: HandoffRecord) -> str:
    about = f"{record.date} · {record.duration_min} min · projects: {', '.join(record.projects) or '-'}" \
            f" · keywords: {', '.join(record.keywords) or '-'}"
    return (f"## Eywa: handoff of session {record.session_id}\n{about}\nSaved to {record.path}\n\n"
            f"{record.body.strip()}\n")


ARGUMENT_RULES = {
    "eywa_get": "query, project and machine are text, days_back an integer of at least 1, max_handoffs an "
                "integer 1-5, agent one of claude-code, codex, gemini",
    "eywa_extract": "session_id is text: a full session id or a unique prefix",
}


class _Server(MCPServer):
    """Argument errors in plain words (the SDK passes pydantic's report through, links and all)."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc'])} = {err.get('input')!r}: {err['msg'].lower()}"
                for err in exc.__cause__.errors(include_url=False)
            )
            rules = ARGUMENT_RULES.get(name, "")
            raise ToolError(f"invalid arguments for {name}: {problems}" + (f" ({rules})" if rules else "")) from None


def build_server(settings: Settings, *, cwd: str | None = None) -> MCPServer:
    """The server with both tools; `cwd` is the caller's working directory (default: this process's)."""
    local = threading.local()
    # Claude Code starts stdio servers in the directory it was launched in: the one its transcripts are named by.
    caller_cwd = cwd or os.getcwd()

    def eywa() -> Eywa:
        if getattr(local, "eywa", None) is None:
            local.eywa = Eywa(settings)
        return local.eywa

    def failing(exc: Exception) -> ToolError:
        return ToolError(str(exc))

    server = _Server("eywa", instructions=INSTRUCTIONS, log_level="WARNING")
    retrieval = settings.retrieval

    # structured_output=False: a `str` return would be sent as {"result": ...}, which Claude Code hands the
    # model as that JSON text (escaped newlines) instead of the markdown.
    @server.tool(name="eywa_get", description=GET_DESCRIPTION, structured_output=False)
    def eywa_get(
        query: Annotated[str | None, Field(description="words to look for; empty: the most recent sessions")] = None,
        days_back: Annotated[int | None, Field(ge=1, description="only the sessions of the last N days, at least 1; "
                                                "empty: any age")] = retrieval.days_back,
        max_handoffs: Annotated[int, Field(ge=1, le=5, description="how many handoffs, 1-5")] = retrieval.max_handoffs,
        project: Annotated[str | None, Field(description="only projects whose name contains this")] = None,
        agent: Annotated[Literal["claude-code", "codex", "gemini"] | None,
                         Field(description="only sessions of this agent")] = None,
        machine: Annotated[str | None, Field(description="only sessions that ran on this machine")] = None,
    ) -> str:
        try:
            records = eywa().recall(query or None, days_back=days_back, max_results=max_handoffs,
                                    project=project or None, agent=agent, machine=machine or None)
        except (EywaError, OSError) as exc:
            raise failing(exc) from exc
        return format_handoffs(records)

    @server.tool(name="eywa_extract", description=EXTRACT_DESCRIPTION, structured_output=False)
    def eywa_extract(
        session_id: Annotated[str | None, Field(description="full id or unique prefix; empty: this session")] = None,
    ) -> str:
        try:
            target = session_id.strip() if session_id and session_id.strip() else \
                calling_session(settings.projects_dir, caller_cwd,
                                redact=Redactor(settings.redaction.extra_patterns).redact,
                                claimed=live_session(settings.live_dir, os.getppid())
                                or os.environ.get("CLAUDE_CODE_SESSION_ID"))
            record = eywa().extract(target)
            return _handoff_text(record)
        except (EywaError, OSError) as exc:
            raise failing(exc) from exc

    return server


def serve(settings: Settings) -> None:
    """Run over stdio until the client closes the connection."""
    build_server(settings).run("stdio")
