"""The normalized session: what the renderer and the extractors read, whatever the transcript version."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

# The tools that change a file, by the names every source reads its agent's edits as (core/sources)
WRITE_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")
SUBAGENT_TOOLS = ("Task", "Agent")  # the tools that run a subagent: its answer is the call's `result`


@dataclass
class ToolCall:
    id: str
    name: str
    input: dict
    is_error: bool = False
    error: str = ""  # first part of the error output, redacted
    result: str = ""  # first part of a subagent run's output, or the answers to AskUserQuestion, redacted (no others)
    output: str = ""  # last part of a shell command's output, redacted: its verdict (tests passed, branch ahead)
    rejected: bool = False
    running: bool = False  # no end recorded: its outcome is unknown (Codex: a process never polled to its exit)
    denied: bool = False  # refused by the permission rules (settings, --allowedTools), not by the user
    subagent_stats: dict = field(default_factory=dict)  # agentId, totalDurationMs, totalToolUseCount, ...
    comments: list[str] = field(default_factory=list)  # the first comments a write adds to code, redacted and cut
    tests_added: list[str] = field(default_factory=list)  # the tests a write declares that its old text did not
    tests_gone: list[str] = field(default_factory=list)  # those its old text declared that it takes out

    @property
    def path(self) -> str | None:
        """The file a call acted on, under whichever key its tool names it: `file_path`, `notebook_path`, `path`."""
        found = self.input.get("file_path") or self.input.get("notebook_path") or self.input.get("path")
        return found if isinstance(found, str) else None


@dataclass
class Event:
    """One thing that happened, in transcript order.

    kind: user | assistant | tool | command | interrupt | compaction | api_error | subagent (a background
    run's outcome whose Agent call is not in the transcript; meta: status, summary)
    """

    kind: str
    timestamp: dt.datetime | None
    text: str = ""
    tool: ToolCall | None = None
    images: int = 0
    meta: dict = field(default_factory=dict)


@dataclass
class SubagentRun:
    """A subagent's side-run, folded into its parent session."""

    agent_id: str
    agent_type: str = ""
    description: str = ""
    prompt: str = ""
    answer: str = ""
    tool_counts: dict[str, int] = field(default_factory=dict)
    files_written: list[str] = field(default_factory=list)
    started: dt.datetime | None = None
    ended: dt.datetime | None = None
    source: str = ""  # inline | agent-file | subagents-dir | agent-run (another agent's CLI run by a tool call)


@dataclass
class Session:
    session_id: str
    events: list[Event] = field(default_factory=list)
    agent: str = "claude-code"  # the source kind that wrote it (core/sources)
    repository: str = ""  # the git remote the agent recorded (Codex's session_meta), redacted
    subagents: list[SubagentRun] = field(default_factory=list)
    cwd: str = ""
    git_branches: list[str] = field(default_factory=list)
    # (the index of the first event recorded on it, branch) each time the branch the records name changes
    branches: list[tuple[int, str]] = field(default_factory=list)
    models: dict[str, int] = field(default_factory=dict)  # model id -> assistant messages
    version: str = ""
    first_ts: dt.datetime | None = None
    last_ts: dt.datetime | None = None
    active_seconds: int = 0
    titles: list[str] = field(default_factory=list)  # custom-title / ai-title, newest last
    summaries: list[str] = field(default_factory=list)  # trusted `summary` records
    pr_links: list[str] = field(default_factory=list)
    # the agent's last todo list ({content, status}): TodoWrite's, the TaskCreate/TaskUpdate tasks, Codex's
    # `update_plan`, Gemini CLI's `write_todos`
    todos: list[dict] = field(default_factory=list)
    todos_dropped: list[str] = field(default_factory=list)  # unfinished items the agent took off its own list
    permission_modes: list[str] = field(default_factory=list)  # modes other than "default", in order seen (plan, ...)
    bad_lines: int = 0
    records: int = 0
    known_records: int = 0
    source_files: list[str] = field(default_factory=list)
    orphan: bool = False  # only subagent files were found; the main transcript is missing
    machine: str = ""  # the machine it ran on (core/machines/spokes.py)

    @property
    def model(self) -> str:
        if not self.models:
            return ""
        return sorted(self.models.items(), key=lambda item: (-item[1], item[0]))[0][0]

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [event.tool for event in self.events if event.tool is not None]

    @property
    def delegated_runs(self) -> set[str]:
        """The distinct subagent runs: a run's file and its Agent call's result name the same agent once."""
        runs = {run.agent_id for run in self.subagents}
        return runs | {str(c.subagent_stats.get("agentId") or c.id) for c in self.tool_calls if c.subagent_stats}

    def note_branch(self, branch: object) -> None:
        """A record's git branch (none, "HEAD": detached), kept in `git_branches` once and in `branches` when it
        changes: the branch of each part of the session."""
        if not isinstance(branch, str) or not branch or branch == "HEAD":
            return
        if branch not in self.git_branches:
            self.git_branches.append(branch)
        if not self.branches or self.branches[-1][1] != branch:
            self.branches.append((len(self.events), branch))

    @property
    def user_texts(self) -> list[str]:
        return [event.text for event in self.events if event.kind == "user" and event.text]
