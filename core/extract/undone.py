"""What the session wrote and took back later: a value a decision names (`"false"`, `Hidden: true`, "Claude Code")
whose line, written in the decision's own turn, a later edit rewrote without it, or whose file a later command
deleted. Such a decision was superseded in the session ("off" -> "false", then real booleans): a handoff that
still says it states a choice the code no longer holds.
"""

from __future__ import annotations

import bisect
import re
import shlex
from dataclasses import dataclass

from eywa.core.extract.commands import checks, verdicts
from eywa.core.session import WRITE_TOOLS, Session

# "`"false"`", "`Hidden: true`", '"Claude Code"': the values a line names, in code spans or double quotes
_VALUE_RE = re.compile(r"`([^`\n]{3,80})`|(\"[^\"\n]{3,40}\")")
# "`.gitignore`", "`/dev/null`", "`cli/setup.go`": a place, no value ("`exec.CommandContext`", a name in its package, is
# one: a file's extension is lower case)
_PATH_RE = re.compile(r"^(?:[\w.@~-]*/[\w./@~-]*|[\w./@~-]*\.[a-z0-9@~-]+/?)$")
# "replace the complex `x` function with ...", "from `"off"` to ...", "instead of `x`": the value set aside
_SET_ASIDE_RE = re.compile(r"\b(?:replac(?:e[sd]?|ing)|from|instead of|rather than)(?: the| a| an)?(?: \w+)?\s*$",
                           re.IGNORECASE)
_REPLACED_BY_RE = re.compile(r"\s*(?:→|->|=>)|\s+(?:with|by)\b")  # "`x` → `y`", "`x` with `y`": x set aside
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


def _tested(session: Session) -> list[int]:
    """The event indices of the test runs that passed."""
    return [at for at, event in enumerate(session.events) if (tool := event.tool) is not None and tool.name == "Bash"
            and not (tool.is_error or tool.rejected)
            and any(check.kind == "tests" for check in checks(str(tool.input.get("command", ""))))]


def _check_runs(session: Session) -> list[tuple[int, str, bool]]:
    """(event index, kind, whether it passed) of each check run whose output or exit status tells its verdict."""
    found: list[tuple[int, str, bool]] = []
    for at, event in enumerate(session.events):
        tool = event.tool
        if tool is None or tool.name != "Bash" or tool.rejected or tool.running:
            continue
        ran = checks(str(tool.input.get("command", "")))
        found += [(at, check.kind, passed) for check, passed in verdicts(ran, tool.output or tool.error, tool.is_error)]
    return found


_NO_LATER_PROMPT = 1 << 62  # where the turn of the session's last prompt ends: past every event


class Undone:
    """Which lines of a session name a value it wrote and later took back (`superseded`), or a fault its turn then
    fixed (`fixed_after`)."""

    def __init__(self, session: Session) -> None:
        self._writes = _writes(session)
        self._removed = _removed(session)
        self._tested = _tested(session)
        self._checks = _check_runs(session)
        self._prompts = [at for at, event in enumerate(session.events) if event.kind == "user" and event.text]

    def fixed_after(self, at: int) -> bool:
        """Whether an edit went through after event `at` and then a test run passed, before the next prompt: what was
        said at `at` of a fault, the turn then fixed."""
        _, end = self._turn(at)
        edited = min((w.at for w in self._writes if at < w.at < end), default=None)
        return edited is not None and any(edited < run < end for run in self._tested)

    def passed_after_edit(self, at: int) -> bool:
        """Whether an edit went through after event `at` and a check of any kind passed after it, in any turn: what
        was said at `at` of a fault in code, a later edit and check answered."""
        edited = min((w.at for w in self._writes if w.at > at), default=None)
        return edited is not None and any(run > edited and passed for run, _, passed in self._checks)

    def passed_next(self, at: int, kinds: set[str]) -> bool:
        """Whether the first check of one of `kinds` run after event `at` passed: what was said at `at` of how such a
        check would fare, that run answered."""
        return next((passed for run, kind, passed in self._checks if run > at and kind in kinds), False)

    def _turn(self, at: int) -> tuple[int, int]:
        """The event indices of the prompts around event `at`: its turn lies between them."""
        later = bisect.bisect_right(self._prompts, at)
        return (self._prompts[later - 1] if later else -1,
                self._prompts[later] if later < len(self._prompts) else _NO_LATER_PROMPT)

    def _deleted(self, path: str, after: int) -> list[int]:
        """The event indices, after `after`, of the commands that deleted `path` (`rm x`, `git rm ./x`)."""
        return [at for at, word in self._removed
                if at > after and (path == word or path.endswith("/" + word.lstrip("./")))]

    def turn_deleted(self, at: int) -> bool:
        """Whether the turn of event `at` wrote files, each of which a command of a later turn that wrote other work
        deleted: what the turn did was replaced whole ("make the command hidden", then "let's completely remove the
        start command", `rm` and the edits to what used it). (A file deleted alone, "delete that file", was undone, not
        replaced: its creation is the story.)"""
        start, end = self._turn(at)
        paths = {w.path for w in self._writes if start < w.at < end}

        def replaced(path: str) -> bool:
            return any(any(after < w.at < until for w in self._writes)
                       for after, until in map(self._turn, self._deleted(path, end)))
        return bool(paths) and all(map(replaced, paths))

    def touched_after(self, at: int, code: set[str], files: set[str]) -> bool:
        """Whether one edit that went through after event `at` wrote the code a line names: into a file of `files`, at
        least half of `code` ("`x` but should say `y`": `x` goes); with no file named, all of it. A name is written when
        its new text holds it, or, `pkg.Name`, when its file lies in a `pkg` folder. (An edit's text cut where it was
        stored hides what it wrote past the cut: no match there.)"""
        def written(name: str, write: _Write) -> bool:
            package, _, last = name.rpartition(".")
            in_text = re.search(rf"\b{re.escape(last)}\b", write.new) is not None
            return in_text or bool(package) and f"/{package}/" in write.path

        for write in self._writes:
            if write.at <= at or files and not any(write.path == f or write.path.endswith("/" + f) for f in files):
                continue
            found = sum(written(name, write) for name in code)
            if found == len(code) or files and 2 * found >= len(code):
                return True
        return False

    def superseded(self, at: int, text: str) -> bool:
        """Whether `text`, said at event `at`, names a value (not one it sets aside: "replace `x`", "from `x`") the
        session had brought in by the end of that turn (in an edit's new text, not in its old) and took back in a later
        turn: gone again from each file it was brought into (each edit's new text counted in, its old counted out),
        or the file deleted by a command. (A value the same turn replaces is the one a "Replaced `x`" sets aside; an
        edit cut where it was stored, after the value's last take-back, may bring it back.)"""
        _, end = self._turn(at)
        if end == _NO_LATER_PROMPT:
            return False
        for match in _VALUE_RE.finditer(text):
            value = match.group(1) or match.group(2)
            if _PATH_RE.match(value) or _SET_ASIDE_RE.search(text[:match.start()]) \
                    or _REPLACED_BY_RE.match(text[match.end():]):
                continue
            paths = {w.path for w in self._writes if w.at < end and value in w.new and value not in w.old}
            if not paths:
                continue
            deleted = {path for path in paths if self._deleted(path, end)}
            later = [w for w in self._writes if w.at > end and w.path in paths]
            cut = [w.at for w in later if w.new.endswith("…")]  # a text cut where it was stored: what it kept, unknown
            last_taken = max((w.at for w in later if value in w.old and value not in w.new and w.at not in cut),
                             default=None)
            if any(last_taken is None or at > last_taken for at in cut):  # it may have brought the value back
                continue
            if deleted == paths or last_taken is not None and all(
                    path in deleted or sum(w.new.count(value) - w.old.count(value) for w in self._writes
                                           if w.path == path) <= 0 for path in paths):
                return True
        return False
