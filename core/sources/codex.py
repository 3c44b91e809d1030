"""Codex CLI rollouts (`rollout-*.jsonl[.zst]`) -> the normalized `Session`, redacting every text on the way in.

Each line is `{"timestamp", "type", "payload"}` (codex-rs/protocol's RolloutItem): `session_meta` (id, cwd,
cli_version, originator, git), `turn_context` (the turn's model), `response_item` (messages, reasoning,
function and custom tool calls and their outputs), `event_msg` (the UI's mirror of the same), `compacted`
(the summary that replaced the history), and bookkeeping (`world_state`, `token_usage_record`). A resumed
session appends to its file. Tool calls take the names the rest of Eywa reads (exec_command -> Bash,
apply_patch -> one Write or Edit per file); reasoning and tool outputs are not kept, but a command's end.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import orjson

from eywa.core.session import Event, Session, ToolCall
from eywa.core.sources import CODEX
from eywa.core.sources.comments import patch_texts
from eywa.core.sources.common import (
    Clock,
    cut,
    fail,
    keep_output,
    keep_todos,
    parse_time,
    read_files,
    todo_list,
    tool_call,
)
from eywa.core.sources.jsonl import ReadStats, first_record, read_records
from eywa.core.sources.plugin import AgentSource, Redact, SourceFile

KNOWN_TYPES = {"session_meta", "turn_context", "response_item", "event_msg", "compacted", "world_state",
               "token_usage_record"}
_SHELL_TOOLS = {"exec_command", "shell", "shell_command", "container.exec", "local_shell"}
_SHELLS = {"bash", "sh", "zsh"}
# Context the CLI puts in user messages (the environment, AGENTS.md, skills), not what the user typed.
_CONTEXT_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md", "<skills_instructions>",
                     "<user_shell_command>", "<turn_aborted>", "<permissions instructions>", "<collaboration_mode>",
                     "<subagent_notification>")
_EXIT_RE = re.compile(r"(?:Process exited with code|Exit code:) (-?\d+)")
_RUNNING_RE = re.compile(r"Process running with session ID (\d+)")
_SUMMARY_MARK = "use the information in this summary to assist with your own analysis:"
# A patch's files: added, updated, deleted, and the new name of an updated one it moves ("*** Move to: b.py").
_PATCH_FILE_RE = re.compile(r"^\*\*\* (?:(Add|Update|Delete) File|(Move) to): (.+)$", re.MULTILINE)
# apply_patch run through the shell (`["apply_patch", "*** Begin Patch ..."]`, `bash -lc "apply_patch <<'EOF' ..."`)
_SHELL_PATCH_RE = re.compile(r"^(?:\S*sh -l?c\s+['\"]?)?apply_patch\b.*?(\*\*\* Begin Patch\n.*)", re.DOTALL)
_SUFFIXES = (".jsonl", ".jsonl.zst")
_UUID_CHARS = 36


class _Builder:
    def __init__(self, session: Session, redact: Redact) -> None:
        self.s = session
        self.redact = redact
        self.clock = Clock(session)
        self.calls: dict[str, list[ToolCall]] = {}
        self.model = ""
        self.known = 0
        self.unknown: dict[str, int] = {}
        self.exec_mode = False
        self.running: dict[str, list[ToolCall]] = {}  # a process still running, by its session id -> its calls

    def add(self, record: dict) -> None:
        kind = record.get("type")
        payload = record.get("payload")
        if not isinstance(kind, str) or kind not in KNOWN_TYPES or not isinstance(payload, dict):
            name = kind if isinstance(kind, str) else str(kind)[:40]
            self.unknown[name] = self.unknown.get(name, 0) + 1
            return
        self.known += 1
        stamp = self.clock.tick(record.get("timestamp"))
        if kind == "session_meta":
            self._meta(payload)
        elif kind == "turn_context":
            model = payload.get("model")
            self.model = model if isinstance(model, str) else self.model
            cwd = payload.get("cwd")
            if isinstance(cwd, str) and cwd and not self.s.cwd:
                self.s.cwd = cwd
        elif kind == "response_item":
            self._item(payload, stamp)
        elif kind == "compacted":
            summary = payload.get("message")
            text = summary.split(_SUMMARY_MARK, 1)[-1].strip() if isinstance(summary, str) else ""
            last = self.s.events[-1] if self.s.events else None
            if last is not None and last.kind == "assistant" and text and last.text == self.redact(text):
                self.s.events.pop()  # the summary the model wrote, recorded as its message as well
            self.s.events.append(Event("compaction", stamp, text=cut(text, 4000, self.redact),
                                       meta={"trigger": "auto"}))
        elif kind == "event_msg" and payload.get("type") == "turn_aborted":
            self.s.events.append(Event("interrupt", stamp, text="Request interrupted by user"))

    def _meta(self, meta: dict) -> None:
        s = self.s
        for key, field in (("cwd", "cwd"), ("cli_version", "version")):
            value = meta.get(key)
            if isinstance(value, str) and value and not getattr(s, field):
                setattr(s, field, value)
        git = meta.get("git")
        if isinstance(git, dict):
            branch, url = git.get("branch"), git.get("repository_url")
            s.note_branch(branch)
            if isinstance(url, str) and url and not s.repository:
                s.repository = self.redact(url)
        self.exec_mode = self.exec_mode or meta.get("source") == "exec" or meta.get("originator") == "codex_exec"

    def _item(self, item: dict, stamp: object) -> None:
        kind = item.get("type")
        if kind == "message":
            role = item.get("role")
            text = _text(item.get("content"))
            if role == "user" and text and not text.lstrip().startswith(_CONTEXT_PREFIXES):
                self.s.events.append(Event("user", stamp, text=self.redact(text.strip())))  # type: ignore[arg-type]
            elif role == "assistant" and text.strip():
                if self.model:
                    self.s.models[self.model] = self.s.models.get(self.model, 0) + 1
                self.s.events.append(Event("assistant", stamp, text=self.redact(text.strip())))  # type: ignore[arg-type]
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            self._call(item, stamp)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            output = item.get("output")
            if isinstance(output, dict):  # {"content": ..., "success": bool} in some versions
                failed = output.get("success") is False
                output = output.get("content")
            else:
                failed = False
            text = output if isinstance(output, str) else ""
            if text.startswith('{"output"'):  # the older `shell` tool's: {"output": ..., "metadata": {"exit_code"}}
                text, failed = _shell_result(text, failed)
            code = _EXIT_RE.search(text[:400])
            calls = self.calls.get(str(item.get("call_id")), [])
            polled = self._polled(calls)
            output = text.split("Output:", 1)[-1]
            for call in polled or calls:  # a poll's output continues its process's
                keep_output(call, f"{call.output}\n{output}" if polled else output, self.redact)
            if failed or (code is not None and code.group(1) != "0"):
                for call in polled or calls:
                    fail(call, output, self.redact)
            running = _RUNNING_RE.search(text[:400])
            for call in polled or calls:  # until a poll gives its exit
                call.running = running is not None and code is None
            if running:
                self.running[running.group(1)] = polled or calls
        elif kind == "web_search_call":
            action = item.get("action")
            query = action.get("query") if isinstance(action, dict) else None
            self._add(tool_call(str(item.get("id") or ""), "WebSearch", {"query": str(query or "")}, self.redact),
                      stamp)

    def _polled(self, calls: list[ToolCall]) -> list[ToolCall]:
        """The shell calls whose process a `write_stdin` call polls: an `exec_command` that outlived its yield time
        ("Process running with session ID 44931") ends in the output of a later poll."""
        if len(calls) != 1 or calls[0].name != "write_stdin":
            return []
        return self.running.get(str(calls[0].input.get("session_id")), [])

    def _call(self, item: dict, stamp: object) -> None:
        call_id = str(item.get("call_id") or item.get("id") or "")
        name = str(item.get("name") or item.get("type"))
        if item.get("type") == "custom_tool_call":
            raw = item.get("input")
            arguments: object = {"input": raw} if isinstance(raw, str) else {}
        elif item.get("type") == "local_shell_call":
            action = item.get("action")
            arguments = {"command": action.get("command")} if isinstance(action, dict) else {}
        else:
            try:
                arguments = orjson.loads(item.get("arguments") or "{}")
            except (orjson.JSONDecodeError, TypeError):
                arguments = {}
        arguments = arguments if isinstance(arguments, dict) else {}
        if name == "apply_patch":
            patch = arguments.get("input") or arguments.get("patch") or ""
            calls = patch_calls(call_id, patch if isinstance(patch, str) else "", self.s.cwd, self.redact)
        elif name == "spawn_agent":  # a Codex subagent, as Claude Code's Agent tool names one
            calls = [tool_call(call_id, "Agent", {"subagent_type": str(arguments.get("agent_type") or "codex"),
                                                  "description": str(arguments.get("message") or "")}, self.redact)]
        elif name in _SHELL_TOOLS:
            command = arguments.get("cmd") or arguments.get("command") or ""
            if isinstance(command, list):  # the older `shell` tool's argv: `["bash", "-lc", script]` runs the script
                parts = [str(part) for part in command]
                wrapped = len(parts) == 3 and parts[0].rsplit("/", 1)[-1] in _SHELLS and parts[1] in ("-lc", "-c")
                command = parts[2] if wrapped else " ".join(parts)
            patch = _SHELL_PATCH_RE.match(str(command).strip())
            calls = patch_calls(call_id, patch.group(1), self.s.cwd, self.redact) if patch else \
                [tool_call(call_id, "Bash", {"command": str(command), **_workdir(arguments)}, self.redact)]
        else:
            calls = [tool_call(call_id, name, arguments, self.redact)]
            if name == "update_plan" and isinstance(steps := calls[0].input.get("plan"), list):
                keep_todos(self.s, todo_list(steps, "step"), calls[0])
        self.calls[call_id] = calls
        for call in calls:
            self._add(call, stamp)

    def _add(self, call: ToolCall, stamp: object) -> None:
        self.s.events.append(Event("tool", stamp, tool=call))  # type: ignore[arg-type]


def _workdir(arguments: dict) -> dict[str, str]:
    """The folder a shell call runs in when it names one (`workdir`), as the session facts read it."""
    folder = arguments.get("workdir")
    return {"workdir": folder} if isinstance(folder, str) and folder else {}


def _shell_result(text: str, failed: bool) -> tuple[str, bool]:
    """(output, failed) of the older `shell` tool's JSON result."""
    try:
        result = orjson.loads(text)
    except orjson.JSONDecodeError:
        return text, failed
    meta = result.get("metadata") if isinstance(result, dict) else None
    code = meta.get("exit_code") if isinstance(meta, dict) else None
    output = result.get("output") if isinstance(result, dict) else None
    return (output if isinstance(output, str) else text), failed or (isinstance(code, int) and code != 0)


def patch_calls(call_id: str, patch: str, cwd: str, redact: Redact) -> list[ToolCall]:
    """apply_patch as one Write (a new file, a moved file's new name) or Edit per file it touches."""
    calls = []
    headers = list(_PATCH_FILE_RE.finditer(patch))
    for number, header in enumerate(headers):
        change, move, name = header.groups()
        action, path = change or move, name.strip()
        if cwd and not path.startswith("/"):
            path = cwd.rstrip("/") + "/" + path
        end = headers[number + 1].start() if number + 1 < len(headers) else len(patch)
        calls.append(tool_call(f"{call_id}#{number}", "Write" if action in ("Add", "Move") else "Edit",
                               {"file_path": path, "change": action.lower()}, redact,
                               [patch_texts(patch[header.end():end])]))
    return calls or [tool_call(call_id, "Edit", {"patch": patch}, redact)]


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(part["text"] for part in content
                     if isinstance(part, dict) and part.get("type") in ("input_text", "output_text", "text")
                     and isinstance(part.get("text"), str))


def build_codex_session(session_id: str, paths: list[Path], redact: Redact) -> tuple[Session, dict[str, ReadStats]]:
    """Read a Codex session's rollout file(s) into a Session; a file that vanishes is skipped."""
    session = Session(session_id=session_id, agent=CODEX)
    builder = _Builder(session, redact)

    def read(path: Path, file_stats: ReadStats) -> None:
        for record in read_records(path, file_stats):
            builder.add(record)
        file_stats.version = f"{CODEX} {session.version}".strip()  # its drift, by version (`eywa stats`)
        for name, count in builder.unknown.items():
            file_stats.unknown_types[name] = file_stats.unknown_types.get(name, 0) + count
        builder.unknown.clear()

    stats = read_files(session, paths, read)
    session.known_records = builder.known
    return session, stats


def codex_session_id(path: Path) -> str:
    """`rollout-2026-12-01T09-46-38-<uuid>.jsonl[.zst]` -> the uuid (the file's name when it holds none)."""
    stem = path.name.removesuffix(".zst").removesuffix(".jsonl")
    return stem[-_UUID_CHARS:] if len(stem) > _UUID_CHARS + len("rollout-") else stem


class Codex(AgentSource):
    """`sessions/YYYY/MM/DD/rollout-<timestamp>-<uuid>.jsonl[.zst]` and `archived_sessions/`, one file a session;
    a subagent's rollout names the session that spawned it (`parent_thread_id`)."""

    kind = CODEX
    folders = ("sessions", "archived_sessions")
    headless = re.compile(r"(?:^|[\s;&|(])codex\s+(?:\S+\s+)*?exec\b")

    def wanted(self, name: str) -> bool:
        return name.startswith("rollout-") and name.endswith(_SUFFIXES)

    def session_of(self, file: SourceFile) -> str | None:
        meta = first_record(file.path) if file.role == "main" else None
        payload = meta.get("payload") if isinstance(meta, dict) else None
        parent = payload.get("parent_thread_id") if isinstance(payload, dict) else None
        return parent if isinstance(parent, str) and parent else codex_session_id(file.path)

    def own_id(self, file: SourceFile) -> str:
        return codex_session_id(file.path)

    def spawned(self, file: SourceFile, session_id: str) -> bool:
        return session_id != codex_session_id(file.path)

    def short_id(self, session_id: str) -> str:
        return session_id[-8:]  # a uuid7: its first characters are its time, shared by sessions of one day

    def read(self, session_id: str, files: list[SourceFile], redact: Redact) -> tuple[Session, dict[str, ReadStats]]:
        return build_codex_session(session_id, [f.path for f in files], redact)

    def run_start(self, file: SourceFile) -> tuple[dt.datetime | None, str]:
        """`codex exec` says so in its session_meta (source, originator)."""
        first = first_record(file.path) or {}
        meta = first.get("payload") if isinstance(first, dict) and first.get("type") == "session_meta" else None
        if not isinstance(meta, dict) or not (meta.get("source") == "exec" or meta.get("originator") == "codex_exec"):
            return None, ""
        cwd = meta.get("cwd")
        return parse_time(meta.get("timestamp") or first.get("timestamp")), cwd if isinstance(cwd, str) else ""


AGENT = Codex()
