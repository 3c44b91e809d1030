"""What the hooks note for others: the sessions the SessionEnd hook marks for extraction
(`<data_dir>/pending/<session_id>.json`), and the session each Claude Code process runs now
(`<data_dir>/live/<claude pid>.json`, noted by the SessionStart hook: after `/clear` the process's MCP
server still has the first session's id in its environment).

The hook only writes the mark (its own stdin, Claude Code's hook JSON) and returns; the next ingest
(the bot's scheduled run or `eywa ingest`) forces those sessions and deletes each mark once its session
is ingested. A SessionEnd whose transcript does not exist (`claude mcp list` fires one) leaves no mark, and a
mark whose transcript is gone is dropped by the next ingest; one whose transcript never shows up (it
named none) is dropped after `MAX_MARK_AGE_DAYS`.
Imports stay light: the hook that writes marks must start in milliseconds.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from eywa.core.config.clock import timestamp
from eywa.core.config.private_files import private_dir
from eywa.core.errors import EywaError

SESSION_ID_RE = re.compile(r"^[0-9A-Za-z][0-9A-Za-z-]{0,63}$")
MAX_MARK_AGE_DAYS = 7  # Claude Code keeps transcripts 30 days; one not found in a week lives elsewhere


class BadMark(EywaError, ValueError):
    """The hook JSON has no usable session id."""


def write_mark(pending_dir: Path, hook: dict, name: str | None = None) -> Path:
    """Write the mark for `hook["session_id"]` (as `<name or session id>.json`) atomically (temp file +
    rename); its path."""
    session_id = hook.get("session_id")
    if not isinstance(session_id, str) or not SESSION_ID_RE.match(session_id):
        raise BadMark(f"not a session id: {str(session_id)[:80]!r}")
    private_dir(pending_dir)
    name = name or session_id
    final = pending_dir / f"{name}.json"
    temp = pending_dir / f".{name}.{os.getpid()}.tmp"
    data = json.dumps(hook, ensure_ascii=False).encode("utf-8")
    # No fsync (slow on some disks): the rename alone means no reader sees half a mark, and a mark
    # lost to a power cut costs little, since ingest re-reads every changed transcript anyway.
    try:
        with open(temp, "wb", opener=lambda name, flags: os.open(name, flags, 0o600)) as handle:
            handle.write(data)
        os.replace(temp, final)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return final


def live_session(live_dir: Path, claude_pid: int) -> str | None:
    """The session the Claude Code process `claude_pid` runs now, if its SessionStart hook noted one since
    that process started (a note left by an earlier process of the same pid is not its)."""
    note = live_dir / f"{claude_pid}.json"
    try:
        noted = note.stat().st_mtime
        session_id = json.loads(note.read_bytes()).get("session_id")
    except (OSError, ValueError, AttributeError):
        return None
    # The boot time is in whole seconds: a second's slack (a pid is not reused that fast).
    if noted + 1 < _started(claude_pid) or not isinstance(session_id, str) or not SESSION_ID_RE.match(session_id):
        return None
    return session_id


def _started(pid: int) -> float:
    """When process `pid` started (epoch seconds), from /proc; 0 where there is none (macOS)."""
    try:
        after_name = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        boot = next(int(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                    if line.startswith("btime "))
        return boot + int(after_name[19]) / os.sysconf("SC_CLK_TCK")  # field 22: start time in clock ticks
    except (OSError, IndexError, ValueError, StopIteration):
        return 0.0


def read_marks(pending_dir: Path) -> dict[str, Path]:
    """session id -> mark file, for every mark in the folder (none when it does not exist)."""
    marks: dict[str, Path] = {}
    try:
        entries = list(os.scandir(pending_dir))
    except (FileNotFoundError, NotADirectoryError):
        return marks
    for entry in entries:
        stem, dot, ext = entry.name.rpartition(".")
        if dot and ext == "json" and SESSION_ID_RE.match(stem) and entry.is_file():
            marks[stem] = Path(entry.path)
    return marks


def names_no_transcript(hook: dict) -> bool:
    """The hook JSON names a transcript file that does not exist."""
    path = hook.get("transcript_path")
    return isinstance(path, str) and bool(path) and not os.path.exists(path)


def _names_no_transcript(mark: Path) -> bool:
    try:
        hook = json.loads(mark.read_bytes())
    except ValueError:
        return True  # no mark a hook wrote
    return isinstance(hook, dict) and names_no_transcript(hook)


def clear_mark(path: Path) -> None:
    path.unlink(missing_ok=True)


def expire_marks(marks: dict[str, Path], found: set[str], *, max_age_days: float = MAX_MARK_AGE_DAYS,
                 now: float | None = None) -> list[str]:
    """Delete the marks of sessions not in `found` whose transcript is gone or that are older than
    `max_age_days`; their ids."""
    limit = (timestamp() if now is None else now) - max_age_days * 86400
    expired = []
    for session_id, path in marks.items():
        if session_id in found:
            continue
        try:
            if path.stat().st_mtime < limit or _names_no_transcript(path):
                path.unlink(missing_ok=True)
                expired.append(session_id)
        except FileNotFoundError:
            continue
    return expired
