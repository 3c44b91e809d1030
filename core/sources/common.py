"""What the Codex CLI and Gemini CLI readers share: the session clock, tool calls in the names the rest of
Eywa reads (Claude Code's: Bash, Edit, Write, Read, ...), and a whole session folded as a subagent run."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable

from eywa.core.session import Session, SubagentRun, ToolCall
from eywa.core.sources.claude_code.builder import _cut, _trim_input, parse_time

Redact = Callable[[str], str]

ERROR_KEEP = 400
_MAX_IDLE_GAP = 15 * 60  # seconds: longer pauses do not count as working time (as for Claude Code)
_PATCH_FILE_RE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$", re.MULTILINE)
_WRITE_TOOLS = ("Edit", "Write")
_OBJECTIVE_RE = re.compile(r"<objective>\s*(.*?)\s*</objective>", re.DOTALL)  # how Gemini CLI briefs a subagent


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


def tool_call(call_id: str, name: str, arguments: dict, redact: Redact) -> ToolCall:
    """A tool call with its input trimmed and redacted, as the Claude Code builder keeps them."""
    return ToolCall(id=call_id, name=name, input=_trim_input(arguments, redact))  # type: ignore[arg-type]


def patch_calls(call_id: str, patch: str, cwd: str, redact: Redact) -> list[ToolCall]:
    """Codex's apply_patch as one Write (a new file) or Edit per file it touches."""
    calls = []
    for number, (action, name) in enumerate(_PATCH_FILE_RE.findall(patch)):
        path = name.strip()
        if cwd and not path.startswith("/"):
            path = cwd.rstrip("/") + "/" + path
        calls.append(tool_call(f"{call_id}#{number}", "Write" if action == "Add" else "Edit",
                               {"file_path": path, "change": action.lower()}, redact))
    return calls or [tool_call(call_id, "Edit", {"patch": patch}, redact)]


def fail(call: ToolCall, output: str, redact: Redact) -> None:
    call.is_error = True
    call.error = _cut(output.strip(), ERROR_KEEP, redact)


def as_run(session: Session, agent_id: str) -> SubagentRun:
    """A whole session of another agent, run from a parent's tool call, folded into that parent."""
    run = SubagentRun(agent_id=agent_id, agent_type=session.agent, source="agent-run",
                      started=session.first_ts, ended=session.last_ts)
    prompts = [e.text for e in session.events if e.kind == "user" and e.text]
    answers = [e.text for e in session.events if e.kind == "assistant" and e.text]
    objective = _OBJECTIVE_RE.search(prompts[0]) if prompts else None
    run.prompt = (objective.group(1) if objective else prompts[0] if prompts else "")[:500]
    calls = session.tool_calls
    if not answers and calls and calls[-1].name == "complete_task":  # a subagent that answered by its report
        answers = [text for text in _strings(calls[-1].input) if text.strip()][:1]
    run.answer = answers[-1][:600] if answers else ""
    for call in session.tool_calls:
        run.tool_counts[call.name] = run.tool_counts.get(call.name, 0) + 1
        path = call.input.get("file_path")
        if call.name in _WRITE_TOOLS and isinstance(path, str) and path not in run.files_written:
            run.files_written.append(path)
    return run


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []
