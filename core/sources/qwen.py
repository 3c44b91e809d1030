"""Qwen Code chats (`projects/<encoded cwd>/chats/<session id>.jsonl`) -> the normalized `Session`, redacting every
text on the way in.

Qwen Code is a fork of Gemini CLI that records like Claude Code: one record a line `{uuid, parentUuid, sessionId,
timestamp, type, cwd, version, gitBranch, ...}` of type `user`, `assistant` (Gemini-style `message.parts`: text
and `functionCall`s), `tool_result` (the `functionResponse` and `toolCallResult`: status, error) and `system`
(`subtype`: `chat_compression` holds the summary that replaced the history, `custom_title`, `rewind`, telemetry
and bookkeeping). A resumed session appends to its file; a rewind re-roots the `parentUuid` chain, so a record
whose parent is not the record before it drops what came after that parent. Subagents (the `agent` tool) write
`projects/<encoded cwd>/subagents/<parent id>/agent-<id>.jsonl` in the same format, with `agent-<id>.meta.json`.
Tools keep Gemini CLI's names (core/sources/gemini.py), mapped to the ones the rest of Eywa reads.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path

import orjson

from eywa.core.session import Event, Session, SubagentRun, ToolCall
from eywa.core.sources.comments import written
from eywa.core.sources.common import Clock, cut, fail, keep_output, keep_todos, parse_time, read_jsonl, tool_call
from eywa.core.sources.gemini import EXIT_RE, TOOLS, result_text, shell_output
from eywa.core.sources.jsonl import ReadStats, first_record, peek_fields
from eywa.core.sources.plugin import AgentSource, Redact, SourceFile
from eywa.core.sources.sessions import as_run

QWEN = "qwen"
KNOWN_TYPES = frozenset({"user", "assistant", "tool_result", "system"})
# The subtypes its ChatRecordingService writes (0.24.4); others are counted as drift.
KNOWN_SUBTYPES = frozenset({
    "at_command", "attribution_snapshot", "background_task_completed", "branch_checkpoint", "chat_compression",
    "custom_title", "file_history_snapshot", "goal_runtime", "goal_state", "goal_turn_end", "mid_turn_user_message",
    "notification", "omni_recall", "parent_session", "realtime_message", "rewind", "session_artifact_event",
    "session_artifact_snapshot", "session_model", "session_source", "session_sources_snapshot", "slash_command",
    "turn_result", "ui_telemetry", "user_text_elements"})
KNOWN_FIELDS = frozenset({
    "uuid", "parentUuid", "sessionId", "timestamp", "type", "subtype", "provenance", "cwd", "version", "gitBranch",
    "backgroundTurn", "daemonPromptId", "goalContext", "message", "model", "usageMetadata", "contextWindowSize",
    "toolCallResult", "systemPayload", "agentId", "agentName", "isSidechain", "agentRunId", "agentRound"})
_TYPED_SUBTYPES = (None, "mid_turn_user_message")  # a user record's text the user typed (the rest: the CLI's)
_TOOLS = {**TOOLS, "edit": "Edit", "agent": "Agent", "todo_write": "TodoWrite", "web_search": "WebSearch",
          "notebook_edit": "NotebookEdit"}
_RESUME_NOTE = "\n\nResume the prior task"  # what follows the summary in the compressed history
_TAG_RE = re.compile(r"</?[a-z_]+>")


class _Builder:
    def __init__(self, session: Session, redact: Redact) -> None:
        self.s = session
        self.redact = redact
        self.clock = Clock(session)
        self.calls: dict[str, ToolCall] = {}
        self.after: dict[str, int] = {}  # a record's uuid -> the events there were once it was read
        self.last = ""
        self.known = 0
        self.version = ""

    def add(self, record: dict, stats: ReadStats) -> None:
        kind, subtype = record.get("type"), record.get("subtype")
        name = kind if isinstance(kind, str) else str(kind)[:40]
        if name not in KNOWN_TYPES or (subtype is not None and not (isinstance(subtype, str)
                                                                    and subtype in KNOWN_SUBTYPES)):
            name = name if name not in KNOWN_TYPES else f"{name}.{str(subtype)[:40]}"
            stats.unknown_types[name] = stats.unknown_types.get(name, 0) + 1
            return
        self.known += 1
        for field in record.keys() - KNOWN_FIELDS:
            key = f"{name}.{str(field)[:60]}"
            stats.unknown_fields[key] = stats.unknown_fields.get(key, 0) + 1
        parent = record.get("parentUuid")
        if self.last and parent != self.last and (parent is None or isinstance(parent, str) and parent in self.after):
            # Rewound: what followed that record (the start, for none) is a dead branch.
            del self.s.events[self.after[parent] if parent is not None else 0:]
        stamp = self.clock.tick(record.get("timestamp"))
        self._context(record)
        message = record.get("message")
        parts = message.get("parts") if isinstance(message, dict) else None
        parts = [part for part in parts if isinstance(part, dict)] if isinstance(parts, list) else []
        if name == "user" and subtype in _TYPED_SUBTYPES:
            text = _text(parts)
            if text:
                self.s.events.append(Event("user", stamp, text=self.redact(text)))
        elif name == "assistant":
            self._assistant(record, parts, stamp)
        elif name == "tool_result":
            self._outcome(record, parts)
        elif subtype == "chat_compression":
            self._compaction(record.get("systemPayload"), stamp)
        elif subtype == "custom_title":
            payload = record.get("systemPayload")
            title = payload.get("customTitle") if isinstance(payload, dict) else None
            if isinstance(title, str) and title.strip():
                self.s.titles.append(self.redact(title.strip()))
        uuid = record.get("uuid")
        if isinstance(uuid, str):
            self.after[uuid], self.last = len(self.s.events), uuid

    def _context(self, record: dict) -> None:
        s = self.s
        cwd, branch, version = record.get("cwd"), record.get("gitBranch"), record.get("version")
        if isinstance(cwd, str) and cwd and not s.cwd:
            s.cwd = cwd
        s.note_branch(branch)
        if isinstance(version, str) and version and version != "unknown":
            s.version = self.version = version[:40]

    def _assistant(self, record: dict, parts: list[dict], stamp: dt.datetime | None) -> None:
        text = _text(parts)
        if text:
            model = record.get("model")
            if isinstance(model, str) and model:
                self.s.models[model] = self.s.models.get(model, 0) + 1
            self.s.events.append(Event("assistant", stamp, text=self.redact(text)))
        for part in parts:
            call = part.get("functionCall")
            if isinstance(call, dict):
                tool = _tool(call, self.redact)
                if tool.name == "TodoWrite" and isinstance(tool.input.get("todos"), list):
                    keep_todos(self.s, [todo for todo in tool.input["todos"] if isinstance(todo, dict)], tool)
                self.calls[tool.id] = tool
                self.s.events.append(Event("tool", stamp, tool=tool))

    def _outcome(self, record: dict, parts: list[dict]) -> None:
        result = record.get("toolCallResult")
        result = result if isinstance(result, dict) else {}
        response: dict = next((part["functionResponse"] for part in parts
                               if isinstance(part.get("functionResponse"), dict)), {})
        call = self.calls.get(str(result.get("callId") or response.get("id")))
        if call is None:
            return
        output = result_text(parts)
        keep_output(call, shell_output(output), self.redact)
        code = EXIT_RE.search(output)
        if result.get("status") in ("error", "cancelled") or (code is not None and code.group(1) != "0"):
            fail(call, output.split("Output: ", 1)[-1], self.redact)
            call.rejected = result.get("status") == "cancelled"

    def _compaction(self, payload: object, stamp: dt.datetime | None) -> None:
        history = payload.get("compressedHistory") if isinstance(payload, dict) else None
        first = history[0] if isinstance(history, list) and history and isinstance(history[0], dict) else {}
        parts = got if isinstance(got := first.get("parts"), list) else []
        summary = _TAG_RE.sub("", _text([p for p in parts if isinstance(p, dict)]).split(_RESUME_NOTE, 1)[0]).strip()
        self.s.events.append(Event("compaction", stamp, text=cut(summary, 4000, self.redact), meta={"trigger": "auto"}))


def _text(parts: list[dict]) -> str:
    return "\n".join(part["text"] for part in parts if isinstance(part.get("text"), str) and not part.get("thought")
                     ).strip()


def _tool(call: dict, redact: Redact) -> ToolCall:
    name = str(call.get("name") or "?")
    args = got if isinstance(got := call.get("args"), dict) else {}
    wrote = written(args) if _TOOLS.get(name) in ("Write", "Edit") else []  # the comments they add are kept
    if name == "run_shell_command":
        args = {"command": str(args.get("command") or ""), "description": str(args.get("description") or "")}
    elif name == "agent":  # a subagent's run, as Claude Code's Agent tool names one
        args = {"subagent_type": str(args.get("subagent_type") or ""),
                "description": str(args.get("prompt") or args.get("description") or "")}
    elif isinstance(args.get("file_path"), str):
        args = {"file_path": args["file_path"]}  # file contents and edits are not kept, as for Claude Code
    return tool_call(str(call.get("id") or ""), _TOOLS.get(name, name), args, redact, wrote)


def build_qwen_session(session_id: str, paths: list[Path], redact: Redact) -> tuple[Session, dict[str, ReadStats]]:
    """Read a Qwen Code chat (or a subagent's file) into a Session; a file that vanishes is skipped."""
    session = Session(session_id=session_id, agent=QWEN)
    return session, read_jsonl(session, _Builder(session, redact), paths)


class Qwen(AgentSource):
    """`$QWEN_RUNTIME_DIR`, else `$QWEN_HOME`, else ~/.qwen: `projects/<encoded cwd>/chats/<session id>.jsonl`;
    subagents in `projects/<encoded cwd>/subagents/<parent id>/agent-<id>.jsonl`."""

    kind = QWEN
    folders = ("projects",)
    headless = re.compile(r"(?:^|[\s;&|(])qwen\s+(?:.*\s)?(?:-p|--prompt)\b")

    def layout(self, relative: tuple[str, ...]) -> str | None:
        if len(relative) == 3 and relative[1] == "chats":
            return "main"
        if len(relative) == 4 and relative[1] == "subagents" and relative[3].startswith("agent-"):
            return "subagents-dir"
        return None

    def companions(self, transcript: Path) -> tuple[Path, ...]:
        return (transcript.with_suffix(".meta.json"),)  # a subagent's type and task

    def session_of(self, file: SourceFile) -> str | None:
        return file.path.stem if file.role == "main" else file.path.parent.name

    def named_session(self, file: SourceFile) -> str | None:
        return file.path.stem

    def read(self, session_id: str, files: list[SourceFile], redact: Redact) -> tuple[Session, dict[str, ReadStats]]:
        return build_qwen_session(session_id, [f.path for f in files], redact)

    def fold(self, session: Session, redact: Redact) -> SubagentRun:
        """A subagent's file, named by the `.meta.json` beside it (its type and the task's description)."""
        run = as_run(session)
        try:
            meta = orjson.loads(Path(session.source_files[0]).with_suffix(".meta.json").read_bytes())
        except (OSError, ValueError, IndexError):
            meta = {}
        if isinstance(meta, dict):
            run.agent_type = str(meta.get("agentType") or run.agent_type)[:80]
            run.description = cut(str(meta.get("description") or ""), 200, redact)
        return run

    def working_directories(self, folder: Path) -> set[str]:
        """The working folder of each project: its newest chat's records carry it."""
        found = set()
        for project in (folder / "projects").glob("*/chats"):
            try:
                chats = sorted(os.scandir(project), key=lambda entry: entry.stat().st_mtime_ns, reverse=True)
            except OSError:
                continue
            cwd = next((cwd for entry in chats[:3] if entry.name.endswith(".jsonl")
                        and (cwd := peek_fields(Path(entry.path), ("cwd",)).get("cwd"))), "")
            if cwd.startswith("/"):
                found.add(cwd)
        return found

    def run_start(self, file: SourceFile) -> tuple[dt.datetime | None, str]:
        """Its first record: when, and in which folder."""
        first = first_record(file.path)
        if not isinstance(first, dict):
            return None, ""
        cwd = first.get("cwd")
        return parse_time(first.get("timestamp")), cwd if isinstance(cwd, str) else ""


AGENT = Qwen()
