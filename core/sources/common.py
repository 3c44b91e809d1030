"""What every agent's reader shares: times, the session clock, redacting and cutting text, and tool calls in
the names the rest of Eywa reads (Claude Code's: Bash, Edit, Write, Read, ...), their inputs trimmed."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Protocol, cast

from eywa.core.retrieval.query_tokens import content_words
from eywa.core.session import Session, ToolCall
from eywa.core.sources.comments import comment_blocks
from eywa.core.sources.declared_tests import changed_tests
from eywa.core.sources.jsonl import ReadStats, read_records
from eywa.core.sources.plugin import Redact

ERROR_KEEP = 400  # characters of a failed tool call's output kept
OUTPUT_KEEP = 1500  # characters of a shell command's output kept, from its end: where runners put the verdict
INPUT_KEEP = 600  # characters of each string in a tool input
COMMENTS_KEEP = 10  # comments kept of one write, read from its whole new text (sources/comments.py)
COMMENT_KEEP = 600  # characters of each (a run of comment lines: a few sentences)
TEST_NAME_KEEP = 120  # characters of each test's name a write declares
INPUT_DEPTH = 10  # levels of a tool input kept (real ones have 3; a damaged line can nest a thousand)
_REDACT_MARGIN = 8000  # a secret straddling a cut is redacted whole before the cut is made
_MAX_IDLE_GAP = 15 * 60  # seconds: longer pauses do not count as working time
# A terminal's colour and cursor codes (terraform colours its output even into a pipe): no text of the output
_ANSI_RE = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")


def parse_time(value: object) -> dt.datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        stamp = dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=dt.UTC)


def cut(text: str, limit: int, redact: Redact) -> str:
    """Redact, then cut to `limit` characters (redacting first so a cut never leaves half a secret)."""
    if len(text) > limit + _REDACT_MARGIN:
        text = text[: limit + _REDACT_MARGIN]
    text = redact(_ANSI_RE.sub("", text))
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def trim_input(value: object, redact: Redact, depth: int = 0) -> object:
    """A tool input with each string redacted and cut, and its depth and lists bounded."""
    if isinstance(value, str):
        return cut(value, INPUT_KEEP, redact)
    if isinstance(value, dict):
        if depth >= INPUT_DEPTH:
            return "…"
        # Most values are strings: cut here, without a call per value (JSON keys are strings already).
        return {k if type(k) is str else str(k):
                cut(v, INPUT_KEEP, redact) if type(v) is str else trim_input(v, redact, depth + 1)
                for k, v in value.items()}
    if isinstance(value, list):
        return "…" if depth >= INPUT_DEPTH else [trim_input(v, redact, depth + 1) for v in value[:50]]
    return value


class Clock:
    """First and last timestamps and active time of a session, from each record's time as it is read."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.previous: dt.datetime | None = None

    def tick(self, value: object) -> dt.datetime | None:
        stamp = parse_time(value)
        if stamp is None:
            return None
        s = self.session
        s.first_ts = stamp if s.first_ts is None or stamp < s.first_ts else s.first_ts
        s.last_ts = stamp if s.last_ts is None or stamp > s.last_ts else s.last_ts
        if self.previous is not None and stamp > self.previous:
            s.active_seconds += min(int((stamp - self.previous).total_seconds()), _MAX_IDLE_GAP)
        if self.previous is None or stamp > self.previous:
            self.previous = stamp
        return stamp


def tool_call(call_id: str, name: str, arguments: dict, redact: Redact,
              written: Iterable[tuple[str, str]] = ()) -> ToolCall:
    """A tool call with its input trimmed and redacted, as the Claude Code builder keeps them; for a write, the
    (old, new) texts it `written`, of which the comments the new text adds are kept, redacted and cut, and the tests
    it adds and takes out, by name."""
    texts = list(written)
    added, gone = changed_tests(texts)
    return ToolCall(id=call_id, name=name, input=cast(dict, trim_input(arguments, redact)),  # a dict stays one
                    comments=[cut(block, COMMENT_KEEP, redact) for block in comment_blocks(texts, COMMENTS_KEEP)],
                    tests_added=[cut(test, TEST_NAME_KEEP, redact) for test in added],
                    tests_gone=[cut(test, TEST_NAME_KEEP, redact) for test in gone])


TODO_TOOLS = frozenset({"TodoWrite", "update_plan", "write_todos", "TaskCreate", "TaskUpdate"})


def keep_todos(session: Session, todos: list[dict], call: ToolCall) -> None:
    """`todos`, written by `call`, as the session's todo list. An unfinished item of the list before that the new
    one leaves out, in the same turn, while it keeps others of the old list and names the item no other way (a
    rewrite, not a new task or a renamed step), the agent took off its own list: `session.todos_dropped`."""
    old, session.todos = session.todos, todos
    drop_todos(session, old, todos, call)


def drop_todos(session: Session, old: list[dict], todos: list[dict], call: ToolCall) -> None:
    """The unfinished items of `old` that `todos`, written by `call`, took off the list, as `keep_todos` tells them:
    into `session.todos_dropped`."""
    kept = {str(todo.get("content", "")) for todo in todos}
    session.todos_dropped = [item for item in session.todos_dropped if item not in kept]
    turn = next((event.kind == "tool" for event in reversed(session.events)
                 if event.kind == "user" or (event.tool is not None and event.tool is not call
                                             and event.tool.name in TODO_TOOLS)), False)
    before = {str(todo.get("content", "")) for todo in old}
    if not turn or not kept & before:
        return
    for todo in old:
        item = str(todo.get("content", ""))
        words = content_words(item)  # "Update the docs" and "Update the tests" share no more than "update"
        renamed = any(len(words & content_words(new)) * 2 >= len(words) for new in kept - before)
        if item not in kept and todo.get("status") in ("pending", "in_progress") and not renamed:
            session.todos_dropped.append(item)


def todo_list(items: list, text: str) -> list[dict]:
    """An agent's todo list as `Session.todos` holds it ({content, status}): Codex's `update_plan` names an item's
    text `step`, Gemini CLI's `write_todos` `description`."""
    return [{"content": str(item.get(text, "")), "status": item.get("status")} for item in items
            if isinstance(item, dict)]


def keep_output(call: ToolCall, output: str, redact: Redact) -> None:
    """The end of a shell command's output (other tools' outputs are not kept)."""
    if call.name == "Bash" and output.strip():
        tail = output.strip()[-(OUTPUT_KEEP + _REDACT_MARGIN):]
        tail = redact(_ANSI_RE.sub("", tail).strip())[-OUTPUT_KEEP:]
        call.output = tail if len(tail) < OUTPUT_KEEP else "…" + tail[1:]


def fail(call: ToolCall, output: str, redact: Redact) -> None:
    call.is_error = True
    call.error = cut(output.strip(), ERROR_KEEP, redact)


def read_files(session: Session, paths: list[Path], read: Callable[[Path, ReadStats], None]) -> dict[str, ReadStats]:
    """Each file read into `session` by `read`, with its statistics; a file that vanishes is skipped, with none
    (ingest looks at it again next time). The session's bad lines and records are the files' sums."""
    stats: dict[str, ReadStats] = {}
    for path in paths:
        file_stats = ReadStats()
        try:
            read(path, file_stats)
        except OSError:
            continue
        stats[str(path)] = file_stats
        session.source_files.append(str(path))
    session.bad_lines = sum(s.bad_lines for s in stats.values())
    session.records = sum(s.records for s in stats.values())
    return stats


class RecordBuilder(Protocol):
    """A reader's state across a session's files: the records it knew, the CLI version it read."""

    known: int
    version: str

    def add(self, record: dict, stats: ReadStats) -> None: ...


def read_jsonl(session: Session, builder: RecordBuilder, paths: list[Path]) -> dict[str, ReadStats]:
    """Every record of each JSONL file given to `builder` in order; a file's drift counted under
    `<agent> <version>` (`eywa stats`)."""

    def read(path: Path, file_stats: ReadStats) -> None:
        for record in read_records(path, file_stats):
            builder.add(record, file_stats)
        file_stats.version = f"{session.agent} {builder.version}".strip()

    stats = read_files(session, paths, read)
    session.known_records = builder.known
    return stats
