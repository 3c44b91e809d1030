"""Whether the session's own actions back a change a message of it says was made: a review of someone's commit, a
fix proposed, an answer's "if the migration restructured ..." or a plan's "✅ DONE" step say changes in Claude's words
that this session never made (03a1382e, 9667a07f, cfd57c28, 38917d7d)."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from eywa.core.archive.renderer import relative_path
from eywa.core.extract.claude_words import OUTCOME_VERBS
from eywa.core.extract.commands import file_ops
from eywa.core.session import WRITE_TOOLS, Session

_SPAN_RE = re.compile(r"`([^`\n]+)`")
_HASH_RE = re.compile(r"[0-9a-f]{7,40}")  # "Committed as `5fddc49c`": git names it, the session never types it
# "Found the issue", "Traced it to ...": a finding, not a change the session claims
_CHANGE_VERBS = OUTCOME_VERBS - {"found", "identified", "traced", "tracked"}
_VERB_RE = re.compile(r"^([A-Za-z-]+)\b")
_PATH_KEYS = {"file_path", "notebook_path", "replace_all"}  # an edit's input that says where, not what


class Backing:
    """What the session did, event by event: the text of its edits and commands, the files they changed; `turns`: the
    events of each request's turn (a prompt's, up to the next), in which a claim is judged."""

    def __init__(self, session: Session, turns: Sequence[range]) -> None:
        self.turns = list(turns)
        self._turn_of = {i: turn.start for turn in turns for i in turn}
        self._acts: list[tuple[int, str, list[str]]] = []  # (event index, lower-cased text, relative paths changed)
        self._edits: list[int] = []  # the event indexes of its edits that went through
        self._before: dict[int, str] = {}  # event index -> the text of the acts before it, joined once
        # a subagent's writes are known only by their paths, as is an edit recorded without its text (a source
        # keeping only the path): what either wrote is unknown, no line of its session is judged
        self._unknown = any(run.files_written for run in session.subagents)
        for index, event in enumerate(session.events):
            tool = event.tool
            if tool is None or tool.is_error or tool.rejected:
                continue
            if tool.name in WRITE_TOOLS:
                path = tool.input.get("file_path") or tool.input.get("notebook_path") or ""
                self._edits.append(index)
                self._unknown = self._unknown or not set(tool.input) - _PATH_KEYS
                self._acts.append((index, "\n".join(map(str, tool.input.values())).lower(),
                                   [relative_path(str(path), session.cwd)] if path else []))
            elif tool.name == "Bash":
                command = str(tool.input.get("command", ""))
                self._acts.append((index, command.lower(),
                                   [relative_path(path, session.cwd) for path, _ in file_ops(command)]))

    def _text_before(self, at: int) -> str:
        if at not in self._before:
            self._before[at] = "\n".join(text for index, text, _ in self._acts if index < at)
        return self._before[at]

    def _edited_between(self, start: int, at: int) -> bool:
        return any(start <= index < at for index in self._edits)

    def unbacked_claim(self, at: int, line: str) -> bool:
        """Whether a change line said at event `at` ("Renamed function `EnsureMetadataGitignore` → ...") names code
        that none of the session's edits and commands before it named, in a turn that had edited nothing yet (before
        the first request's: from the session's start): a change it read of (a review, a rebased commit), proposed or
        imagined, not one it made."""
        verb = _VERB_RE.match(line)
        spans = [span.strip().rstrip("().,:;").lower() for span in _SPAN_RE.findall(line)]
        if self._unknown or verb is None or verb.group(1).lower() not in _CHANGE_VERBS or not spans \
                or self._edited_between(self._turn_of.get(at, 0), at):
            return False
        done = self._text_before(at)
        return not any(_HASH_RE.fullmatch(span) or span in done
                       or "/" in span.rstrip("/") and span.rstrip("/").rsplit("/", 1)[0] in done for span in spans)

    def unbacked_files(self, at: int, named: Collection[str], changed: Collection[str]) -> bool:
        """Whether a report's list item at event `at` that says a change of the files it is led by (`named`:
        "`telemetry.go` - Changed condition ...") changed none of them before it: the file changed only later
        (`changed`: the session's changed files) or, named with its folder, never; a plan's step another session did."""
        if self._unknown or not named:
            return False
        before = [path for index, _, paths in self._acts if index < at for path in paths]
        return not any(_names(name, before) for name in named) and all(
            _names(name, changed) or "/" in name for name in named)


def _names(name: str, paths: Collection[str]) -> bool:
    """Whether `name` ("telemetry.go", "cli/telemetry/telemetry.go") is one of `paths`, by its end."""
    return any(path == name or path.endswith(f"/{name}") for path in paths)
