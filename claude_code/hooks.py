"""Claude Code hooks: `eywa hook session-start` and `eywa hook session-end`.

Each runs as a new process on every session start or end, so it imports only the standard library,
`eywa.core.config.light`, `eywa.core.sources.projects` and `eywa.core.ingest.pending` (no pydantic, no
network), reads the index through the engine's light read-only queries (core/index/readonly.py), and
fails open: whatever goes wrong, it prints nothing and exits 0, because a memory tool must never block the
user's session.

- session-start: Claude Code's hook JSON on stdin (session_id, transcript_path, cwd, source); prints
  `{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": ...}}` with the newest
  substantial handoffs of the working directory's project, however old (its last `PROJECT_SPAN_DAYS` of
  work, those with open threads first; only the last `retrieval.days_back` days when that is set), at most
  `CONTEXT_LIMIT` bytes; prints nothing when there are none.
- session-end: writes the mark `<data_dir>/pending/<session_id>.json` and returns; ingest does the work.
"""

from __future__ import annotations

import json
import os
import sys
from io import BufferedIOBase, TextIOBase
from pathlib import Path

from eywa.core.config.clock import now
from eywa.core.config.light import LightSettings, light_settings
from eywa.core.handoffs.durations import format_duration

# sqlite3 and datetime are imported by session-start only: session-end must return at once.
TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing, a cost on every hook
if TYPE_CHECKING:
    from eywa.core.index.readonly import RecentHandoff

# Claude Code cuts hook context beyond 10,000 characters; bytes >= characters, so this bound is safe.
CONTEXT_LIMIT = 10_000
MAX_STDIN_BYTES = 1_000_000
DEBUG_ENV = "EYWA_HOOK_DEBUG"  # set to 1 to see a failing hook's traceback on stderr
SEPARATOR = "\n\n---\n\n"
# The project's last stretch of work, counted back from its newest session (not from today: a project
# left for months still has its last work to pick up): those with open threads first.
PROJECT_SPAN_DAYS = 14


def _with_meta(short_id: str, date: str, minutes: int, body: str) -> str:
    """The body with a date/duration/id line under its headline."""
    meta = f"_{date} · {format_duration(minutes)} · session {short_id}_"
    body = body.strip()
    first, newline, rest = body.partition("\n")
    if first.startswith("# "):
        return f"{first}\n{meta}{newline}{rest}"
    return f"{meta}\n\n{body}"


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _cut(text: str, budget: int, note: str) -> str:
    """`text` cut at a line end so that it and `note` fit in `budget` bytes."""
    room = max(0, budget - _size(note))
    head = text.encode("utf-8")[:room].decode("utf-8", errors="ignore")
    if "\n" in head:
        head = head[: head.rindex("\n")]
    return head.rstrip() + note


def render_context(project: str, handoffs: list[RecentHandoff], limit: int = CONTEXT_LIMIT) -> str:
    """Header plus as many whole handoffs as fit in `limit` bytes (the first one cut if it alone does not)."""
    pieces = [_with_meta(h.short_id, h.date, h.duration_min, h.body) for h in handoffs]
    return _packed(project, pieces, f"`eywa show {handoffs[0].short_id}`" if handoffs else "", limit)


def _packed(project: str, pieces: list[str], whole: str, limit: int = CONTEXT_LIMIT) -> str:
    header = (f"## Eywa: recent sessions in project {project}\n\n"
              "Handoffs of earlier Claude Code sessions in this project, newest first. For others, call the "
              "eywa_get tool or run `eywa get WORDS`.\n\n")
    budget = limit - _size(header)
    kept: list[str] = []
    used = 0
    for piece in pieces:
        cost = _size(piece) + (_size(SEPARATOR) if kept else 0)
        if used + cost > budget:
            break
        kept.append(piece)
        used += cost
    if not kept and pieces:
        kept = [_cut(pieces[0], budget, f"\n\n[cut to fit; {whole} prints it whole]")]
    return header + SEPARATOR.join(kept) + "\n"


def _from_hub(projects: tuple[str, ...], settings: LightSettings) -> str | None:
    """The context from the hub's HTTP MCP endpoint (a spoke has no index of its own); None when the hub
    cannot be asked in `mcp.hub_timeout_seconds`, so the local index is read instead."""
    from eywa.claude_code.hub_client import HubError, call_tool

    pieces: list[str] = []
    try:
        for project in projects:
            arguments = {"project": project, "max_handoffs": settings.max_handoffs}
            if settings.days_back is not None:
                arguments["days_back"] = settings.days_back
            text = call_tool(settings.hub_url, settings.hub_token, "eywa_get", arguments, timeout=settings.hub_timeout)
            header, _, bodies = text.partition("\n\n")  # after the "## Eywa: N past sessions" line
            if bodies.strip() and not header.startswith("## Eywa: 0 "):
                pieces += [piece.strip() for piece in bodies.split(SEPARATOR) if piece.strip()]
    except HubError:
        return None
    return _packed(", ".join(projects), pieces[:settings.max_handoffs], "the eywa_get tool") if pieces else ""


def session_start(hook: dict, settings: LightSettings) -> str:
    """The hook's stdout: the SessionStart JSON with the project's recent handoffs, or "" for none. Notes
    the session as the one its Claude Code process (CLAUDE_PID) runs now, for the MCP server's eywa_extract.
    On a spoke (`mcp.hub_url` set) the handoffs come from the hub, else from this machine's index."""
    from eywa.core.sources.projects import ProjectNames

    claude_pid = os.environ.get("CLAUDE_PID", "")
    if claude_pid.isdigit():
        from eywa.core.ingest.pending import write_mark

        write_mark(settings.live_dir, {"session_id": hook.get("session_id")}, name=claude_pid)

    cwd = hook.get("cwd")
    projects = ProjectNames(settings.aliases).of(cwd) if isinstance(cwd, str) else ()
    if not projects:
        return ""
    context = _from_hub(projects, settings) if settings.hub_url and settings.hub_token else None
    if context is not None:
        return _output(context)
    import datetime as dt

    from eywa.core.index.readonly import open_index, recent_in_projects

    # Read-only: a hook never creates or migrates the index; a writer holding it only makes us wait briefly.
    conn = open_index(settings.db_path, timeout=0.5)
    if conn is None:
        return ""
    try:
        cutoff = ""
        if settings.days_back is not None:
            today = now().astimezone(settings.zone).date()
            cutoff = (today - dt.timedelta(days=min(settings.days_back, 36500) - 1)).isoformat()
        session_id = hook.get("session_id")
        # Those with open threads first (work a new session may pick up), each group newest first.
        handoffs = recent_in_projects(conn, projects, cutoff=cutoff, span_days=PROJECT_SPAN_DAYS,
                                      limit=settings.max_handoffs,
                                      exclude=session_id if isinstance(session_id, str) else "")
    finally:
        conn.close()
    if not handoffs:
        return ""
    return _output(render_context(", ".join(projects), handoffs))


def _output(context: str) -> str:
    if not context:
        return ""
    output = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}}
    return json.dumps(output) + "\n"  # ASCII: whatever the locale of the pipe


def session_end(hook: dict, settings: LightSettings) -> str:
    """Mark the session for the next ingest, and on a spoke that asks for it (`push.on_session_end`) start
    `eywa push` in the background, detached: the hook never waits for it. Prints nothing."""
    from eywa.core.ingest.pending import names_no_transcript, write_mark

    if names_no_transcript(hook):  # `claude mcp list` and the like end a "session" that never wrote one
        return ""
    write_mark(settings.pending_dir, hook)
    if settings.push_on_session_end and settings.push_hub:
        _push_in_background(settings)
    return ""


def _push_in_background(settings: LightSettings) -> None:
    import subprocess

    from eywa.core.config.private_files import private_dir

    log = settings.data_dir / "push" / "background.log"  # what a failed push said, for `eywa push` to fix
    private_dir(log.parent)
    config = ["--config", str(settings.config_path)] if settings.config_path is not None else []
    with open(log, "ab") as out:
        subprocess.Popen([sys.executable, "-m", "eywa.cli.main", *config, "push", "--quiet"], stdin=subprocess.DEVNULL,
                         stdout=out, stderr=out, start_new_session=True, close_fds=True)


HANDLERS = {"session-start": session_start, "session-end": session_end}


def run_hook(event: str, config_path: Path | None = None, stdin: BufferedIOBase | None = None,
             stdout: TextIOBase | None = None) -> int:
    """Run one hook; always exit code 0, and no output at all when anything fails."""
    try:
        raw = (stdin if stdin is not None else sys.stdin.buffer).read(MAX_STDIN_BYTES)
        hook = json.loads(raw or b"{}")
        if not isinstance(hook, dict):
            return 0
        output = HANDLERS[event](hook, light_settings(config_path))
        if output:
            out = stdout if stdout is not None else sys.stdout
            out.write(output)
            out.flush()
    except BaseException:
        if os.environ.get(DEBUG_ENV):
            import traceback

            traceback.print_exc()
    return 0
