"""What the session wrote and took back later: a value a decision names (`"false"`, `Hidden: true`, "Claude Code")
whose line, written in the decision's own turn, a later edit rewrote without it, or whose file a later command
deleted. Such a decision was superseded in the session ("off" -> "false", then real booleans): a handoff that
still says it states a choice the code no longer holds.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from eywa.core.session import WRITE_TOOLS, Session

# "`"false"`", "`Hidden: true`", '"Claude Code"': the values a line names, in code spans or double quotes
_VALUE_RE = re.compile(r"`([^`\n]{3,80})`|(\"[^\"\n]{3,40}\")")
_REMOVE_RE = re.compile(r"(?:^|[;&|]\s*)(?:git\s+)?rm\s", re.MULTILINE)  # "rm a.go b.go", "git rm -f a.go"


@dataclass(frozen=True)
class _Write:
    at: int  # the event's index
    path: str
    old: str
    new: str


def _writes(session: Session) -> list[_Write]:
    """Every edit that went through, in order: one per replacement (a MultiEdit's each), a whole file's new text."""
    found: list[_Write] = []
    for at, event in enumerate(session.events):
        tool = event.tool
        if tool is None or tool.name not in WRITE_TOOLS or tool.is_error or tool.rejected:
            continue
        path = str(tool.input.get("file_path", ""))
        edits = tool.input.get("edits")
        pairs = [(str(e.get("old_string", "")), str(e.get("new_string", ""))) for e in edits if isinstance(e, dict)] \
            if isinstance(edits, list) else [(str(tool.input.get("old_string", "")),
                                              str(tool.input.get("new_string", tool.input.get("content", ""))))]
        found += [_Write(at, path, old, new) for old, new in pairs]
    return found


def _removed(session: Session) -> list[tuple[int, str]]:
    """The files a shell command deleted (`rm`, `git rm`), each with the command's event index."""
    found: list[tuple[int, str]] = []
    for at, event in enumerate(session.events):
        tool = event.tool
        if tool is None or tool.name != "Bash" or tool.is_error or tool.rejected:
            continue
        command = str(tool.input.get("command", ""))
        if not _REMOVE_RE.search(command):
            continue
        try:
            words = shlex.split(command)
        except ValueError:
            continue
        found += [(at, word) for word in words if not word.startswith("-") and "." in word.rsplit("/", 1)[-1]]
    return found


class Undone:
    """Which lines of a session name a value it wrote and later took back (`superseded`)."""

    def __init__(self, session: Session) -> None:
        self._writes = _writes(session)
        self._removed = _removed(session)
        self._prompts = [at for at, event in enumerate(session.events) if event.kind == "user" and event.text]

    def superseded(self, at: int, text: str) -> bool:
        """Whether `text`, said at event `at`, names a value the session had written by the end of that turn (in a
        line of an edit's new text) that an edit of a later turn rewrote without it (that line in its old text, the
        value nowhere in its new text, nor written again after) or whose file a command of a later turn deleted. (A
        value the same turn replaces is the one a "Replaced `x` with `y`" names as set aside.)"""
        end = min((p for p in self._prompts if p > at), default=None)
        if end is None:
            return False
        for match in _VALUE_RE.finditer(text):
            value = match.group(1) or match.group(2)
            written = [(w.path, line.strip()) for w in self._writes if w.at < end and value in w.new
                       for line in w.new.splitlines() if value in line]
            if not written:
                continue
            for place, later in enumerate(self._writes):
                if later.at < end or value in later.new:
                    continue
                if any(path == later.path and line in later.old for path, line in written) \
                        and not any(value in w.new for w in self._writes[place + 1:]):
                    return True
            paths = {path for path, _ in written}
            if any(removed_at > end and any(path == word or path.endswith("/" + word.lstrip("./")) for path in paths)
                   for removed_at, word in self._removed):
                return True
        return False
