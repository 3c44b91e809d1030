"""Other agents' CLIs run headless by a Claude Code session (its Bash tool running `codex exec`, `gemini -p`, ...:
each agent's `headless` command, core/sources) belong to that session: folded into it as subagent runs, never
ranked as sessions of their own.

A run is linked when the transcripts tell: its start (its agent's `run_start`: Codex's session_meta says it was
`codex exec`; a Gemini chat's metadata) falls inside the window of exactly one such Bash call (from the tool_use to its
tool_result) of a Claude Code session in the same working folder. A linked file is recorded under its
parent's id with the kind `agent-run` (the sources table), so later runs regroup it without reading anything;
one not linked is tried again only when it changes, or when a Claude Code transcript changes within minutes
after it was last written (the parent's tool_result lands after the run ends).
"""

from __future__ import annotations

import bisect
import dataclasses
import datetime as dt
from collections.abc import Container, MutableMapping
from pathlib import Path

from eywa.core.sources import CLAUDE_CODE, KINDS, agent
from eywa.core.sources.claude import encode_cwd
from eywa.core.sources.common import parse_time
from eywa.core.sources.jsonl import peek_fields, read_records
from eywa.core.sources.plugin import AGENT_RUN, SessionFiles, SourceFile

_SLACK = dt.timedelta(seconds=2)  # clocks of two processes writing their own files
_RETRY_NS = 10 * 60 * 10**9  # a Claude Code transcript written this soon after a run may be its parent's


@dataclasses.dataclass(frozen=True)
class _Window:
    agent: str
    started: dt.datetime
    ended: dt.datetime


def _windows(path: Path) -> list[_Window]:
    """The Bash calls of a Claude Code transcript that ran another agent's CLI, with when each ran."""
    started: dict[str, tuple[str, dt.datetime]] = {}
    windows = []
    try:
        for record in read_records(path):
            message = record.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            stamp = parse_time(record.get("timestamp"))
            if not isinstance(content, list) or stamp is None:
                continue
            for block in content:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use" and block.get("name") == "Bash":
                    tool_input = block.get("input")
                    command = tool_input.get("command") if isinstance(tool_input, dict) else None
                    agent = _program(command) if isinstance(command, str) else None
                    if agent is not None:
                        started[str(block.get("id"))] = (agent, stamp)
                elif block.get("type") == "tool_result" and str(block.get("tool_use_id")) in started:
                    agent, began = started.pop(str(block.get("tool_use_id")))
                    windows.append(_Window(agent, began, stamp))
    except OSError:
        return []
    return windows


def may_link(files: list[SourceFile], changed: Container[str]) -> bool:
    """`link_runs` may link a run now: a main file of another agent changed, or a changed Claude Code transcript
    was written within `_RETRY_NS` after one (its parent's tool_result lands after the run ends)."""
    fresh = sorted(f.mtime_ns for f in files if f.agent == CLAUDE_CODE and f.role == "main" and f.location in changed)
    for file in files:
        if file.agent == CLAUDE_CODE or file.role != "main":
            continue
        if file.location in changed:
            return True
        after = bisect.bisect_left(fresh, file.mtime_ns)
        if after < len(fresh) and fresh[after] - file.mtime_ns <= _RETRY_NS:
            return True
    return False


def link_runs(groups: MutableMapping[str, SessionFiles], claude_roots: list[Path], changed: Container[str],
              ) -> dict[str, str]:
    """Move each run of another agent's CLI started by a Claude Code session's Bash call into that session's group
    (as an `agent-run` file). Runs already linked (kind `agent-run`) are regrouped by the caller; these are
    the others. Returns {run's own session id: parent session id} for the runs linked now."""
    linked: dict[str, str] = {}
    runs = [(run_id, group) for run_id, group in groups.items()
            if group.agent != CLAUDE_CODE and len(group.main) == 1 and not group.subagents]
    if not runs:
        return linked  # no map of every Claude Code file: a large disk of them alone is planned in less memory
    parent_of_file = {f.location: g.session_id for g in groups.values() if g.agent == CLAUDE_CODE for f in g.main}
    fresh = [f.mtime_ns for g in groups.values() if g.agent == CLAUDE_CODE for f in g.main if f.location in changed]
    windows: dict[str, list[_Window]] = {}
    for run_id, group in runs:
        source = group.main[0]
        if source.location not in changed and not any(0 <= t - source.mtime_ns <= _RETRY_NS for t in fresh):
            continue  # tried when it was last written, and no parent of it can have changed since
        began, cwd = agent(group.agent).run_start(source)
        if began is None or not cwd:
            continue
        matches = set()
        for root in claude_roots:
            for path in _listing(root / encode_cwd(cwd.rstrip("/") or "/")):
                if str(path) not in parent_of_file or groups[parent_of_file[str(path)]].machine != group.machine:
                    continue  # not a Claude Code session, or one of another machine (a spoke's)
                first = parse_time(peek_fields(path, ("timestamp",)).get("timestamp"))
                if first is None or began < first - _SLACK:
                    continue
                for window in windows.setdefault(str(path), _windows(path)):
                    if window.agent == group.agent and window.started - _SLACK <= began <= window.ended + _SLACK:
                        matches.add(parent_of_file[str(path)])
        if len(matches) == 1:
            parent = matches.pop()
            del groups[run_id]
            group = groups[parent]
            group.subagents.append(dataclasses.replace(source, role=AGENT_RUN))
            groups[parent] = group  # a plan's groups are made when asked for: set, it is kept
            linked[run_id] = parent
    return linked


def _program(command: str) -> str | None:
    """The agent whose headless CLI a shell command runs, if any."""
    return next((kind for kind in KINDS if (rule := agent(kind).headless) is not None and rule.search(command)), None)


def _listing(folder: Path) -> list[Path]:
    try:
        return [p for p in folder.iterdir() if p.suffix == ".jsonl"]
    except OSError:
        return []
