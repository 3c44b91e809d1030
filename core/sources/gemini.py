"""Gemini CLI chats (`tmp/<project>/chats/session-*.jsonl`, older single-object `.json`) -> the normalized
`Session`, redacting every text on the way in.

Since v0.39 a chat is JSONL (packages/core/src/services/chatRecordingTypes.ts): a metadata line (sessionId,
projectHash, startTime, kind), then one message record a line (`user`, `gemini` with its `toolCalls`, `info`,
`warning`, `error`); a record with an id seen before replaces that message (a gemini message is written again
once its tool calls are done); `{"$set": {...}}` updates the metadata, and with `messages` replaces the
history (a resumed chat rewrites it; messages already read keep their richer first form); `{"$rewindTo": id}`
drops that message and all after it. A resumed chat appends a second metadata line to the same file. The
working folder is the project's `.project_root` beside `chats/`. Subagents write `chats/<parent-id>/*.jsonl`.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import orjson

from eywa.core.session import Event, Session, SubagentRun, ToolCall
from eywa.core.sources import GEMINI
from eywa.core.sources.comments import written
from eywa.core.sources.common import Clock, fail, keep_output, keep_todos, parse_time, read_files, todo_list, tool_call
from eywa.core.sources.jsonl import ReadStats, first_record, peek_fields, read_records
from eywa.core.sources.plugin import AgentSource, Redact, SourceFile
from eywa.core.sources.sessions import as_run

_MESSAGE_TYPES = {"user", "gemini", "info", "warning", "error"}
_LEGACY_MAX_BYTES = 64 * 1024 * 1024  # an older single-object chat is read whole: past this it is not read
# Gemini CLI's tools in the names the rest of Eywa reads (Qwen Code, its fork, keeps them: core/sources/qwen.py).
TOOLS = {"run_shell_command": "Bash", "write_file": "Write", "replace": "Edit", "read_file": "Read",
          "read_many_files": "Read", "list_directory": "LS", "glob": "Glob", "grep_search": "Grep",
          "search_file_content": "Grep", "google_web_search": "WebSearch", "web_fetch": "WebFetch"}
EXIT_RE = re.compile(r"Exit Code: (-?\d+)")
# What the shell tool adds around a command's output (Gemini CLI's and Qwen Code's): its verdict is the line before.
_SHELL_FRAME_RE = re.compile(r"^(?:Command|Directory|Error|Exit Code|Signal|Background PIDs|Process Group PGID): .*$|"
                             r"</?untrusted_context>", re.MULTILINE)


def shell_output(output: str) -> str:
    """A shell tool's output without the frame around it."""
    return _SHELL_FRAME_RE.sub("", output.split("Output: ", 1)[-1]).strip()

_WORKSPACE_RE = re.compile(r"\*\*Workspace Directories:\*\*\s*\n\s*- (/[^\n]*)")  # in the <session_context>
_CONTEXT_PREFIXES = ("<session_context>", "<state_snapshot>")
_OBJECTIVE_RE = re.compile(r"<objective>\s*(.*?)\s*</objective>", re.DOTALL)  # how it briefs a subagent


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return ""
    return "\n".join(part["text"] for part in content if isinstance(part, dict) and isinstance(part.get("text"), str)
                     and not part.get("thought"))


def _messages(path: Path, stats: ReadStats, meta: dict) -> list[dict]:
    """The chat's messages as Gemini CLI itself would load them, in order (see the module docstring)."""
    if path.suffix == ".json":
        return _legacy(path, stats, meta)
    messages: dict[str, dict] = {}
    seen: dict[str, dict] = {}  # every message in the last form it was written in, dropped or not
    for record in read_records(path, stats):
        if isinstance(record.get("$rewindTo"), str):
            ids = list(messages)
            if record["$rewindTo"] in messages:
                for gone in ids[ids.index(record["$rewindTo"]):]:
                    del messages[gone]
            else:
                messages.clear()
        elif isinstance(record.get("id"), str):
            messages[record["id"]] = seen[record["id"]] = record
        elif isinstance(record.get("$set"), dict):
            update = record["$set"]
            if isinstance(update.get("messages"), list):
                given = [m for m in update["messages"] if isinstance(m, dict) and isinstance(m.get("id"), str)]
                messages = {m["id"]: seen.get(m["id"], m) for m in given}
            meta.update({k: v for k, v in update.items() if k != "messages"})
        elif isinstance(record.get("sessionId"), str):
            meta.setdefault("startTime", record.get("startTime"))
            meta.update({k: v for k, v in record.items() if k not in ("messages", "startTime")})
        else:
            kind = str(record.get("type") or "?")[:40]
            stats.unknown_types[kind] = stats.unknown_types.get(kind, 0) + 1
    return list(messages.values())


def _legacy(path: Path, stats: ReadStats, meta: dict) -> list[dict]:
    """An older chat: one JSON object holding the metadata and every message."""
    size = path.stat().st_size
    stats.lines, stats.bytes_read = 1, size
    try:
        value = orjson.loads(path.read_bytes()) if size <= _LEGACY_MAX_BYTES else None
    except orjson.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        stats.not_json += 1
        return []
    stats.records = 1
    meta.update({k: v for k, v in value.items() if k != "messages"})
    messages = value.get("messages")
    return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []


def _tool(raw: dict, redact: Redact) -> ToolCall:
    name = str(raw.get("name") or "?")
    args = got if isinstance(got := raw.get("args"), dict) else {}
    wrote: list[tuple[str, str]] = []
    if name == "run_shell_command":
        folder = args.get("dir_path")  # the folder it runs in, named `workdir` as Codex's
        args = {"command": str(args.get("command") or ""), "description": str(args.get("description") or ""),
                **({"workdir": folder} if isinstance(folder, str) and folder else {})}
    elif name == "invoke_agent":  # a subagent's run, as Claude Code's Agent tool names one
        name, args = "Agent", {"subagent_type": str(args.get("agent_name") or ""),
                               "description": str(args.get("prompt") or "")}
    elif isinstance(args.get("file_path"), str):  # file contents and patches are not kept, as for Claude Code,
        content = args.get("content")  # but a plan's, which its `exit_plan_mode` approves, and the comments they add
        wrote = written(args) if name in ("write_file", "replace") else []
        args = {"file_path": args["file_path"], **({"content": content} if name == "write_file" and isinstance(
            content, str) and "/plans/" in args["file_path"] else {})}
    call = tool_call(str(raw.get("id") or ""), TOOLS.get(name, name), args, redact, wrote)
    output = result_text(raw.get("result"))
    keep_output(call, shell_output(output), redact)
    code = EXIT_RE.search(output)
    if raw.get("status") in ("error", "cancelled") or (code is not None and code.group(1) != "0"):
        fail(call, output.replace("<untrusted_context>", "").replace("</untrusted_context>", "").replace(
            "Output: ", "", 1), redact)
        call.rejected = raw.get("status") == "cancelled"
    return call


def result_text(result: object) -> str:
    """The text of a tool's `functionResponse` parts (its output, else its error)."""
    if not isinstance(result, list):
        return ""
    texts = []
    for part in result:
        call = part.get("functionResponse") if isinstance(part, dict) else None
        response = call.get("response") if isinstance(call, dict) else None
        if isinstance(response, dict):
            value = response.get("output", response.get("error"))
            if isinstance(value, str):
                texts.append(value)
    return "\n".join(texts)


def _project_root(path: Path) -> str:
    """The working folder Gemini CLI recorded for the chat's project (`tmp/<project>/.project_root`)."""
    chats = next((parent for parent in path.parents if parent.name == "chats"), None)
    return _read_root(chats.parent / ".project_root") if chats else ""


def _read_root(marker: Path) -> str:
    try:
        return marker.read_text(encoding="utf-8").strip()[:4096]
    except (OSError, UnicodeDecodeError):
        return ""


def read_chat(session: Session, path: Path, stats: ReadStats, redact: Redact) -> None:
    """Add one chat file's messages to `session` (events, models, cwd, clock)."""
    meta: dict = {}
    messages = _messages(path, stats, meta)
    clock = Clock(session)
    clock.tick(meta.get("startTime"))
    if not session.cwd:
        directories = meta.get("directories")
        session.cwd = _project_root(path) or (directories[0] if isinstance(directories, list) and directories
                                              and isinstance(directories[0], str) else "")
    if not session.cwd and messages:  # no project root file beside the chat (a copied chat): its own context
        workspace = _WORKSPACE_RE.search(_text(messages[0].get("content"))[:20_000])
        session.cwd = workspace.group(1).strip() if workspace else ""
    for message in messages:
        kind = message.get("type")
        if not isinstance(kind, str) or kind not in _MESSAGE_TYPES:
            name = str(kind)[:40]
            stats.unknown_types[name] = stats.unknown_types.get(name, 0) + 1
            continue
        session.known_records += 1
        stamp = clock.tick(message.get("timestamp")) or parse_time(message.get("timestamp"))
        text = _text(message.get("content")).strip()
        if kind == "user":
            if text and not text.startswith(_CONTEXT_PREFIXES):
                session.events.append(Event("user", stamp, text=redact(text)))
        elif kind == "gemini":
            model = message.get("model")
            if isinstance(model, str) and model:
                session.models[model] = session.models.get(model, 0) + 1
            if text:
                session.events.append(Event("assistant", stamp, text=redact(text)))
            calls = message.get("toolCalls")
            for raw in calls if isinstance(calls, list) else []:
                if isinstance(raw, dict):
                    session.events.append(Event("tool", stamp, tool=(call := _tool(raw, redact))))
                    if call.name == "exit_plan_mode" and not call.is_error:
                        _approved_plan(session, call)
                    if call.name == "write_todos" and not call.is_error and isinstance(
                            todos := call.input.get("todos"), list):
                        keep_todos(session, todo_list(todos, "description"), call)
        elif kind == "error" and text:
            session.events.append(Event("api_error", stamp, text=redact(text[:400])))


def _approved_plan(session: Session, call: ToolCall) -> None:
    """Plan mode's `exit_plan_mode` as Claude Code's ExitPlanMode: the plan it approves (the file of its plans
    folder the session wrote), for the session facts."""
    name = "/plans/" + str(call.input.get("plan_filename", ""))
    written = [e.tool for e in session.events if e.tool is not None and e.tool.name == "Write"
               and str(e.tool.input.get("file_path", "")).endswith(name)]
    call.name, call.input = "ExitPlanMode", {"plan": str(written[-1].input.get("content", "")) if written else ""}


def build_gemini_session(session_id: str, paths: list[Path], redact: Redact) -> tuple[Session, dict[str, ReadStats]]:
    """Read a Gemini CLI chat file(s) into a Session; a file that vanishes is skipped."""
    session = Session(session_id=session_id, agent=GEMINI)

    def read(path: Path, file_stats: ReadStats) -> None:
        read_chat(session, path, file_stats, redact)
        file_stats.version = GEMINI  # its drift (`eywa stats`): a chat does not name the CLI's version

    return session, read_files(session, paths, read)


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


class Gemini(AgentSource):
    """`tmp/<project>/chats/session-<date>-<id8>.jsonl` (or the older `.json`), the full id in its first line;
    its subagents' chats in `chats/<parent-id>/`; the working folder in `tmp/<project>/.project_root`."""

    kind = GEMINI
    folders = ("tmp",)
    headless = re.compile(r"(?:^|[\s;&|(])gemini\s+(?:.*\s)?(?:-p|--prompt)\b")

    def wanted(self, name: str) -> bool:
        return name.endswith((".jsonl", ".json"))

    def layout(self, relative: tuple[str, ...]) -> str | None:
        """<project>/chats/session-*.jsonl; <project>/chats/<parent-id>/<agent-id>.jsonl"""
        if len(relative) == 3 and relative[1] == "chats" and relative[2].startswith("session-"):
            return "main"
        if len(relative) == 4 and relative[1] == "chats" and relative[3].endswith(".jsonl"):
            return "subagents-dir"
        return None

    def companions(self, transcript: Path) -> tuple[Path, ...]:
        chats = next((folder for folder in transcript.parents if folder.name == "chats"), None)
        return (chats.parent / ".project_root",) if chats is not None else ()  # the project's working folder

    def session_of(self, file: SourceFile) -> str | None:
        if file.role == "subagents-dir":
            return file.path.parent.name
        return peek_fields(file.path, ("sessionId",), max_lines=1).get("sessionId")

    def own_id(self, file: SourceFile) -> str:
        return peek_fields(file.path, ("sessionId",), max_lines=1).get("sessionId") or file.path.stem

    def read(self, session_id: str, files: list[SourceFile], redact: Redact) -> tuple[Session, dict[str, ReadStats]]:
        return build_gemini_session(session_id, [f.path for f in files], redact)

    def fold(self, session: Session, redact: Redact) -> SubagentRun:
        """A subagent is briefed inside <objective> and may answer by its `complete_task` call alone."""
        prompts = session.user_texts
        objective = _OBJECTIVE_RE.search(prompts[0]) if prompts else None
        calls = session.tool_calls
        answered = any(e.kind == "assistant" and e.text for e in session.events)
        report = [text for text in _strings(calls[-1].input) if text.strip()][:1] \
            if not answered and calls and calls[-1].name == "complete_task" else []
        return as_run(session, prompt=objective.group(1) if objective else None, answer=report[0] if report else None)

    def working_directories(self, folder: Path) -> set[str]:
        """The working folder it recorded for each of its projects (`tmp/<project>/.project_root`)."""
        found = set()
        for marker in (folder / "tmp").glob("*/.project_root"):
            try:
                cwd = marker.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError):
                continue
            if cwd.startswith("/"):
                found.add(cwd)
        return found

    def run_start(self, file: SourceFile) -> tuple[dt.datetime | None, str]:
        """A chat's metadata line: when it started; its project's `.project_root`: where."""
        first = first_record(file.path)
        if not isinstance(first, dict):
            return None, ""
        return parse_time(first.get("startTime")), _read_root(file.path.parent.parent / ".project_root")


AGENT = Gemini()
