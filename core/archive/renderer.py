"""Renders a session to deterministic markdown: the same session gives the same bytes on every run,
machine and TZ setting (only the configured display zone changes the clock shown).

The output is kept as the session's archive and indexed for full-text search, so it carries the
conversation and one line per tool call, not tool outputs.
"""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from eywa.core.handoffs.model import format_duration
from eywa.core.session import SUBAGENT_TOOLS, Event, Session, SubagentRun, ToolCall
from eywa.core.sources import AGENT_NAMES, CLAUDE_CODE

LINE_KEEP = 160


def one_line(text: str, limit: int = LINE_KEEP) -> str:
    """First non-empty line, cut to `limit` characters."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def relative_path(path: str, cwd: str) -> str:
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path


def tool_target(call: ToolCall, cwd: str) -> str:
    """What a tool call acted on, in a few words: a path, a command, a pattern, a URL."""
    data, path = call.input, call.path
    if call.name in SUBAGENT_TOOLS:
        kind = data.get("subagent_type") or "agent"
        return f"[{kind}] {one_line(str(data.get('description') or data.get('prompt') or ''), 100)}"
    if call.name == "Bash" and isinstance(data.get("command"), str):
        return one_line(data["command"])
    if call.name in ("Grep", "Glob") and isinstance(data.get("pattern"), str):
        where = f" in {relative_path(path, cwd)}" if isinstance(path, str) else ""
        return one_line(data["pattern"], 80) + where
    if call.name == "TaskUpdate" and isinstance(data.get("taskId"), str):
        return f"#{data['taskId']} {data.get('status') or 'updated'}"
    if call.name == "TaskCreate" and isinstance(data.get("subject"), str):
        return one_line(data["subject"])
    if call.name == "TodoWrite" and isinstance(data.get("todos"), list):
        todos = [t for t in data["todos"] if isinstance(t, dict)]
        done = sum(1 for t in todos if t.get("status") == "completed")
        return f"{len(todos)} todos, {done} done"
    if isinstance(path, str):
        return relative_path(path, cwd)
    for key in ("url", "query", "command", "pattern", "prompt", "description"):
        if isinstance(data.get(key), str):
            return one_line(data[key])
    first = next((v for v in data.values() if isinstance(v, str) and v.strip()), "")
    return one_line(first)


def tool_line(call: ToolCall, cwd: str) -> str:
    target = tool_target(call, cwd).replace("`", "'")
    line = f"- {call.name} `{target}`" if target else f"- {call.name}"
    if call.rejected:
        return line + " (rejected by the user)"
    if call.denied:
        return line + f" -> denied by the permission rules: {one_line(call.error, 200)}"
    if call.is_error:
        return line + f" -> error: {one_line(call.error, 200)}"
    stats = call.subagent_stats
    if stats:
        seconds = int(stats.get("totalDurationMs", 0) or 0) // 1000
        line += f" ({stats.get('totalToolUseCount', 0)} tools, {seconds}s)"
        if call.result:
            line += f" -> {one_line(call.result, 200)}"
    return line


_CWD_FACT = "- cwd: "


def recorded_cwd(markdown: str) -> str | None:
    """The working directory a rendered session names in its facts (the archive's header), None without."""
    for line in markdown.splitlines()[1:20]:
        if line.startswith(_CWD_FACT):
            return line[len(_CWD_FACT):].strip() or None
        if line.startswith("## "):  # the facts are over
            break
    return None


class Renderer:
    def __init__(self, zone: ZoneInfo | None = None) -> None:
        self.zone = zone or ZoneInfo("UTC")

    def _local(self, stamp: dt.datetime | None) -> dt.datetime | None:
        return stamp.astimezone(self.zone) if stamp is not None else None

    def stamp(self, stamp: dt.datetime | None) -> str:
        local = self._local(stamp)
        return local.strftime("%Y-%m-%d %H:%M") if local else "?"

    def render(self, session: Session) -> str:
        out: list[str] = [f"# Session {session.session_id}", ""]
        speaker = AGENT_NAMES.get(session.agent, session.agent)
        # Claude Code's renders name no agent: every archive written before other agents were read is one.
        agent = f"{session.agent} {session.version}".strip() if session.agent != CLAUDE_CODE else ""
        facts = [
            ("agent", agent),
            ("cwd", session.cwd),
            ("repository", session.repository),
            ("branch", ", ".join(session.git_branches)),
            ("model", session.model),
            ("started", self.stamp(session.first_ts) + f" {self.zone.key}" if session.first_ts else ""),
            ("ended", self.stamp(session.last_ts) + f" {self.zone.key}" if session.last_ts else ""),
            ("active", format_duration(session.active_seconds // 60) if session.first_ts else ""),
            ("title", " / ".join(session.titles)),
            ("summary", " / ".join(session.summaries)),
            ("pull requests", ", ".join(session.pr_links)),
            ("permission mode", ", ".join(session.permission_modes)),
            ("subagent runs", str(len(session.subagents)) if session.subagents else ""),
            ("bad lines skipped", str(session.bad_lines) if session.bad_lines else ""),
            ("note", "main transcript missing; only subagent runs were found" if session.orphan else ""),
        ]
        out.extend(f"- {name}: {value}" for name, value in facts if value)  # recorded_cwd reads the cwd
        day: dt.date | None = None
        previous: str | None = None
        for event in session.events:
            local = self._local(event.timestamp)
            # strftime only for a new day: it is slow, and an event's clock needs none
            if local is not None and local.date() != day:
                day = local.date()
                out.extend(["", f"## {local.strftime('%Y-%m-%d')}"])
                previous = None
            clock = f"{local.hour:02d}:{local.minute:02d}" if local else "--:--"
            if event.kind == "tool" and event.tool is not None:
                if previous not in ("assistant", "tool"):
                    out.extend(["", f"### {clock} {speaker}", ""])
                elif previous == "assistant":
                    out.append("")
                out.append(tool_line(event.tool, session.cwd))
            else:
                out.extend(["", *self._event(event, clock, speaker)])
            previous = event.kind
        if session.subagents:
            out.extend(["", "## Subagent runs", ""])
            out.extend(self._subagent(run, session.cwd) for run in session.subagents)
        return "\n".join(out).rstrip() + "\n"

    def _event(self, event: Event, clock: str, speaker: str) -> list[str]:
        if event.kind == "user":
            lines = [f"### {clock} User", ""]
            if event.images:
                lines.append(f"[{event.images} image{'s' if event.images > 1 else ''} attached]")
            if event.text:
                lines.append(event.text)
            return lines
        if event.kind == "assistant":
            return [f"### {clock} {speaker}", "", event.text]
        if event.kind == "command":
            args = event.meta.get("args", "")
            return [f"### {clock} Command `{event.text}{' ' + args if args else ''}`"]
        if event.kind == "subagent":
            status, summary = event.meta.get("status", ""), event.meta.get("summary", "")
            head = f"### {clock} Background run {status or 'finished'}" + (f": {summary}" if summary else "")
            return [head, "", event.text] if event.text else [head]
        if event.kind == "interrupt":
            return [f"### {clock} Interrupted by the user"]
        if event.kind == "api_error":
            return [f"### {clock} API error", "", one_line(event.text, 300)]
        if event.kind == "compaction":
            trigger = event.meta.get("trigger", "auto")
            tokens = event.meta.get("pre_tokens")
            size = f", {tokens:,} tokens before" if isinstance(tokens, int) else ""
            lines = [f"### {clock} Context compacted ({trigger}{size})"]
            if event.text:
                lines.extend(["", *("> " + line if line else ">" for line in event.text.splitlines())])
            return lines
        return [f"### {clock} {event.kind}", "", event.text]

    def _subagent(self, run: SubagentRun, cwd: str) -> str:
        label = run.agent_type or "agent"
        what = run.description or one_line(run.prompt, 120)
        tools = ", ".join(f"{name} x{count}" for name, count in sorted(run.tool_counts.items()))
        parts = [f"- {label} {run.agent_id}: {what}"]
        if tools:
            parts.append(f"({tools})")
        if run.files_written:
            parts.append("wrote " + ", ".join(relative_path(p, cwd) for p in run.files_written[:5]))
        if run.answer:
            parts.append("-> " + one_line(run.answer, 200))
        return " ".join(parts)
