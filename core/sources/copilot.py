"""GitHub Copilot CLI sessions (`session-state/<id>/events.jsonl`) -> the normalized `Session`, redacting every text
on the way in.

Each line is one event `{id, timestamp, parentId, type, data}` (the CLI's package ships its schema:
schemas/session-events.schema.json); `session.start` and `session.resume` (a resumed session appends to its file)
carry the CLI version and the context (cwd, git root, repository, branch). `user.message`, `assistant.message`
(its text and its `toolRequests`), `tool.execution_complete` (success, the shell's exit code, the result),
`session.compaction_complete` (the summary that replaced the history), `abort`, `session.error`,
`session.title_changed`. A subagent's events (the `task` tool) are written into the same file with a top-level
`agentId`, opened by `subagent.started`: they are folded into one subagent run each, never read as the
session's own turns. Tool calls take the names the rest of Eywa reads (bash -> Bash, create -> Write, edit ->
Edit, view -> Read, task -> Agent); outputs are not kept, but a failed call's and a command's end.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from eywa.core.session import Event, Session, SubagentRun, ToolCall
from eywa.core.sources.common import Clock, cut, fail, keep_output, parse_time, read_jsonl, tool_call
from eywa.core.sources.jsonl import ReadStats, first_record
from eywa.core.sources.plugin import AgentSource, Redact, SourceFile

# The event types of the pinned CLI's schema (tests/test_more_agents.py checks them against it); others are drift.
KNOWN_TYPES = frozenset("""
abort agent.interrupted assistant.fusion_phase_activity assistant.fusion_phase_completed
assistant.fusion_phase_failed assistant.fusion_phase_started assistant.idle assistant.intent assistant.message
assistant.message_delta assistant.message_start assistant.reasoning assistant.reasoning_delta
assistant.server_tool_progress assistant.streaming_delta assistant.tool_call_delta assistant.turn_end
assistant.turn_retry assistant.turn_start assistant.usage auto_mode_switch.completed auto_mode_switch.requested
capabilities.changed command.completed command.execute command.queued commands.changed elicitation.completed
elicitation.requested exit_plan_mode.completed exit_plan_mode.requested external_tool.completed
external_tool.requested hook.end hook.progress hook.start human_response.recorded mcp.headers_refresh_completed
mcp.headers_refresh_required mcp.oauth_completed mcp.oauth_recovery_completed mcp.oauth_required
mcp.prompts.list_changed mcp.resources.list_changed mcp.tools.list_changed mcp_app.tool_call_complete
model.call_failure model.call_final_result model.call_finished model.call_start pending_messages.modified
permission.assentDetected permission.carriedForward permission.completed permission.contextualAuthorization
permission.messageAuthorization permission.messageAuthorizationDegraded permission.messageAuthorizationRead
permission.requested prompt_cache_break sampling.completed sampling.requested sandbox.decision
session.auto_mode_resolved session.auto_tier_recommendation session.auto_tier_switch_failed
session.autopilot_objective_changed session.autopilot_stopped session.background_tasks_changed
session.binary_asset session.canvas.closed session.canvas.opened session.canvas.recorded
session.canvas.registry_changed session.canvas.removed session.canvas.unavailable session.compaction_complete
session.compaction_start session.completion_receipt session.context_changed session.context_cleared
session.custom_agents_updated session.custom_notification session.error session.extensions.attachments_pushed
session.extensions_loaded session.fusion_change_checkpoint session.fusion_commit_started
session.fusion_completed session.fusion_handoff session.fusion_resolved session.fusion_route_failed
session.fusion_route_started session.handoff session.idle session.indexed_search session.info
session.managed_plugin_progress session.managed_settings_enforced session.managed_settings_resolved
session.mcp_server_needs_reconnect session.mcp_server_removed session.mcp_server_status_changed
session.mcp_server_tools_loaded session.mcp_servers_loaded session.memory_changed session.mode_changed
session.mode_notice_delivered session.model_change session.model_deselected session.permission_recovery
session.permissions_changed session.plan_changed session.quota_observation session.remote_steerable_changed
session.request_body_compression_disabled session.resume session.schedule_cancelled session.schedule_created
session.schedule_rearmed session.session_limits_changed session.shutdown session.skills_loaded
session.snapshot_rewind session.start session.task_complete session.title_changed session.todos_changed
session.tools_updated session.truncation session.usage_checkpoint session.usage_info session.usage_record
session.warning session.workspace_file_changed session_limits_exhausted.completed
session_limits_exhausted.requested skill.context_delivered skill.context_delivered_ref skill.invoked
skill.invoked_ref subagent.completed subagent.configured subagent.deselected subagent.failed subagent.selected
subagent.started system.message system.notification tool.execution_complete tool.execution_partial_result
tool.execution_progress tool.execution_start tool.shell_output tool.user_requested tool_search.activated
ui.ephemeral_query user.message user_input.completed user_input.requested workflow.run_settled
workflow.run_started workflow.run_updated
""".split())
KNOWN_FIELDS = frozenset({"id", "timestamp", "parentId", "ephemeral", "agentId", "type", "data"})
_TOOLS = {"bash": "Bash", "powershell": "Bash", "create": "Write", "edit": "Edit", "view": "Read", "grep": "Grep",
          "glob": "Glob", "task": "Agent", "web_fetch": "WebFetch", "fetch": "WebFetch"}
_FILE_TOOLS = {"create", "edit", "view"}  # their `path`, kept as the file_path the rest of Eywa reads
_SHELL_TRAILER_RE = re.compile(r"\n?<shellId: [^>]*>\s*$")
_TAG_RE = re.compile(r"</?[a-z_]+>")  # the sections of a compaction summary (<overview>, <history>, ...)
_WRITE_TOOLS = ("Edit", "Write")
COPILOT = "copilot"


class _Builder:
    def __init__(self, session: Session, redact: Redact) -> None:
        self.s = session
        self.redact = redact
        self.clock = Clock(session)
        self.calls: dict[str, ToolCall] = {}
        self.runs: dict[str, SubagentRun] = {}  # agentId -> the subagent's run, folded as it is read
        self.known = 0
        self.version = ""

    def add(self, event: dict, stats: ReadStats) -> None:
        kind = event.get("type")
        data = event.get("data")
        name = kind if isinstance(kind, str) else str(kind)[:40]
        if name not in KNOWN_TYPES or not isinstance(data, dict):
            stats.unknown_types[name] = stats.unknown_types.get(name, 0) + 1
            return
        self.known += 1
        for field in event.keys() - KNOWN_FIELDS:
            key = f"{name}.{str(field)[:60]}"
            stats.unknown_fields[key] = stats.unknown_fields.get(key, 0) + 1
        stamp = self.clock.tick(event.get("timestamp"))
        agent_id = event.get("agentId")
        if isinstance(agent_id, str) and agent_id:
            self._subagent(agent_id, name, data, stamp)
        elif name in ("session.start", "session.resume"):
            self._context(data)
        elif name == "user.message":
            text = data.get("content")
            if isinstance(text, str) and text.strip():
                self.s.events.append(Event("user", stamp, text=self.redact(text.strip())))
        elif name == "assistant.message":
            self._assistant(data, stamp)
        elif name == "tool.execution_complete":
            self._outcome(data)
        elif name == "session.compaction_complete" and data.get("success"):
            summary = data.get("summaryContent")
            text = _TAG_RE.sub("", summary).strip() if isinstance(summary, str) else ""
            trigger = "manual" if data.get("trigger") == "manual" else "auto"
            self.s.events.append(Event("compaction", stamp, text=cut(text, 4000, self.redact),
                                       meta={"trigger": trigger}))
        elif name == "abort":
            self.s.events.append(Event("interrupt", stamp, text="Request interrupted by user"))
        elif name == "session.error" and isinstance(data.get("message"), str):
            self.s.events.append(Event("api_error", stamp, text=cut(data["message"], 400, self.redact)))
        elif name == "session.title_changed" and isinstance(data.get("title"), str) and data["title"].strip():
            self.s.titles.append(self.redact(data["title"].strip()))

    def _context(self, data: dict) -> None:
        s = self.s
        version = data.get("copilotVersion")
        if isinstance(version, str) and version:
            s.version = self.version = version[:40]
        context = data.get("context")
        context = context if isinstance(context, dict) else {}
        cwd, branch = context.get("cwd"), context.get("branch")
        if isinstance(cwd, str) and cwd and not s.cwd:
            s.cwd = cwd
        s.note_branch(branch)
        repository, host = context.get("repository"), context.get("repositoryHost")
        if isinstance(repository, str) and repository and not s.repository:
            s.repository = self.redact(f"https://{host}/{repository}" if isinstance(host, str) and host else repository)

    def _assistant(self, data: dict, stamp: dt.datetime | None) -> None:
        model = data.get("model")
        text = data.get("content")
        if isinstance(text, str) and text.strip():
            if isinstance(model, str) and model:
                self.s.models[model] = self.s.models.get(model, 0) + 1
            self.s.events.append(Event("assistant", stamp, text=self.redact(text.strip())))
        for call in _calls(data, self.redact):
            self.calls[call.id] = call
            self.s.events.append(Event("tool", stamp, tool=call))

    def _outcome(self, data: dict) -> None:
        call = self.calls.get(str(data.get("toolCallId")))
        if call is None:
            return
        shell = data.get("shellExecution")
        code = shell.get("exitCode") if isinstance(shell, dict) else None
        result = data.get("result")
        content = result.get("content") if isinstance(result, dict) else None
        keep_output(call, _SHELL_TRAILER_RE.sub("", content) if isinstance(content, str) else "", self.redact)
        if data.get("success") is False or (isinstance(code, int) and code != 0):
            error, result = data.get("error"), data.get("result")
            message = error.get("message") if isinstance(error, dict) else None
            content = result.get("content") if isinstance(result, dict) else None
            output = message if isinstance(message, str) else content if isinstance(content, str) else ""
            fail(call, _SHELL_TRAILER_RE.sub("", output), self.redact)
            call.denied = isinstance(error, dict) and error.get("code") == "denied"

    def _subagent(self, agent_id: str, name: str, data: dict, stamp: dt.datetime | None) -> None:
        """A subagent's event: its run gets the prompt, the last answer, the tool calls and the files written."""
        run = self.runs.get(agent_id)
        if run is None:
            run = self.runs[agent_id] = SubagentRun(agent_id=agent_id, source="inline", started=stamp)
            self.s.subagents.append(run)
        run.ended = stamp or run.ended
        if name == "subagent.started":
            run.agent_type = str(data.get("agentName") or "")[:80]
            run.description = self.redact(str(data.get("agentDescription") or ""))
        elif name == "user.message" and not run.prompt and isinstance(data.get("content"), str):
            run.prompt = cut(data["content"].strip(), 500, self.redact)
        elif name == "assistant.message":
            text = data.get("content")
            if isinstance(text, str) and text.strip():
                run.answer = cut(text.strip(), 600, self.redact)
            for call in _calls(data, self.redact):
                run.tool_counts[call.name] = run.tool_counts.get(call.name, 0) + 1
                path = call.input.get("file_path")
                if call.name in _WRITE_TOOLS and isinstance(path, str) and path not in run.files_written:
                    run.files_written.append(path)


def _calls(data: dict, redact: Redact) -> list[ToolCall]:
    """An assistant message's tool requests in the names the rest of Eywa reads."""
    calls = []
    requests = data.get("toolRequests")
    for request in requests if isinstance(requests, list) else []:
        if not isinstance(request, dict):
            continue
        name = str(request.get("name") or "?")
        args = got if isinstance(got := request.get("arguments"), dict) else {}
        wrote: list[tuple[str, str]] = []
        if name in ("bash", "powershell"):
            args = {"command": str(args.get("command") or ""), "description": str(args.get("description") or "")}
        elif name == "task":  # a subagent's run, as Claude Code's Agent tool names one
            args = {"subagent_type": str(args.get("agent_type") or args.get("name") or ""),
                    "description": str(args.get("prompt") or args.get("description") or "")}
        elif name in _FILE_TOOLS and isinstance(args.get("path"), str):  # file contents and edits are not kept, as
            # for Claude Code, but the comments they add
            wrote = [(str(args.get("old_str") or ""), str(args.get("new_str") or args.get("file_text") or ""))]
            args = {"file_path": args["path"]}
        calls.append(tool_call(str(request.get("toolCallId") or ""), _TOOLS.get(name, name), args, redact, wrote))
    return calls


def build_copilot_session(session_id: str, paths: list[Path], redact: Redact) -> tuple[Session, dict[str, ReadStats]]:
    """Read a Copilot CLI session's events file into a Session; a file that vanishes is skipped."""
    session = Session(session_id=session_id, agent=COPILOT)
    return session, read_jsonl(session, _Builder(session, redact), paths)


class Copilot(AgentSource):
    """`$COPILOT_HOME` (else ~/.copilot): `session-state/<session id>/events.jsonl`, one folder a session."""

    kind = COPILOT
    folders = ("session-state",)
    headless = re.compile(r"(?:^|[\s;&|(])copilot\s+(?:.*\s)?(?:-p|--prompt)\b")
    shell_keeps_folder = True  # its bash tool runs in a shell session that lasts (the `<shellId: ...>` of each output)

    def wanted(self, name: str) -> bool:
        return name == "events.jsonl"

    def layout(self, relative: tuple[str, ...]) -> str | None:
        return "main" if len(relative) == 2 else None

    def own_id(self, file: SourceFile) -> str:
        return file.path.parent.name

    def named_session(self, file: SourceFile) -> str | None:
        return file.path.parent.name

    def read(self, session_id: str, files: list[SourceFile], redact: Redact) -> tuple[Session, dict[str, ReadStats]]:
        return build_copilot_session(session_id, [f.path for f in files], redact)

    def working_directories(self, folder: Path) -> set[str]:
        """The working folder in each session's `session.start` (its first line)."""
        found = set()
        for events in (folder / "session-state").glob("*/events.jsonl"):
            cwd = self.run_start(SourceFile(str(events), 0, 0, "main", self.kind))[1]
            if cwd.startswith("/"):
                found.add(cwd)
        return found

    def run_start(self, file: SourceFile) -> tuple[dt.datetime | None, str]:
        """Its `session.start` event: when, and the working folder of its context."""
        first = first_record(file.path) or {}
        data = first.get("data") if isinstance(first, dict) and first.get("type") == "session.start" else None
        if not isinstance(data, dict):
            return None, ""
        context = data.get("context")
        cwd = context.get("cwd") if isinstance(context, dict) else None
        return parse_time(data.get("startTime") or first.get("timestamp")), cwd if isinstance(cwd, str) else ""


AGENT = Copilot()
