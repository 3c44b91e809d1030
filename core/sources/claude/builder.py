"""Turns transcript records into a normalized `Session`, redacting every text on the way in.

Knows the record types and fields of core/sources/claude/catalogue.py; anything else passes through harmlessly,
counted by type, and by field in each file's first FIELD_SAMPLE records of a type, per CLI version.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from eywa.core.session import WRITE_TOOLS, Event, Session, SubagentRun, ToolCall
from eywa.core.sources.claude.catalogue import KNOWN_FIELDS, KNOWN_TYPES
from eywa.core.sources.claude.records import decode_parts, part_value, top_level
from eywa.core.sources.comments import written
from eywa.core.sources.common import (
    ERROR_KEEP,
    Clock,
    cut,
    drop_todos,
    keep_output,
    keep_todos,
    parse_time,
    tool_call,
)
from eywa.core.sources.jsonl import ReadStats, read_records
from eywa.core.sources.plugin import Redact

RESULT_KEEP = 1500  # characters of a subagent run's answer kept
# Records of each type whose field names are checked, per file: new versions add fields to every record of a type.
FIELD_SAMPLE = 5

INTERRUPT_PREFIX = "[Request interrupted by user"
REJECTED_PREFIX = "The user doesn't want to proceed with this tool use"
CONTINUATION_PREFIX = "This session is being continued from a previous conversation"
# 2.1.332 ends a compaction summary with instructions to the model (where the old transcript is, how to go on).
_SUMMARY_TAIL = "\nIf you need specific details from before compaction"
_BLANK_LINES_RE = re.compile(r"\n\s*\n")
_NOTIFICATION_RE = re.compile(r"^\s*<task-notification>(.*)</task-notification>\s*$", re.DOTALL)
# The run's answer is free text (it may hold tags of its own): the fields are read around it.
_NOTIFICATION_RESULT_RE = re.compile(r"<result>(.*)</result>", re.DOTALL)
_NOTIFICATION_FIELD_RE = re.compile(r"<(task-id|tool-use-id|status|summary|subagent_tokens|tool_uses|"
                                    r"duration_ms)>(.*?)</\1>", re.DOTALL)
_ASYNC_LAUNCH = "async_launched"  # a background Agent call's status until its notification arrives
_TASK_TOOLS = {"TaskCreate", "TaskUpdate"}
_TAG_RE = re.compile(r"<(command-name|command-message|command-args|local-command-stdout|local-command-stderr|"
                     r"bash-input|bash-stdout|bash-stderr)>(.*?)</\1>", re.DOTALL)
# Context the CLI or an IDE adds to a prompt ("The user opened the file ... in the IDE"), not what the
# user wrote: kept, it became the "Asked:" step of a handoff.
_DROP_TAGS_RE = re.compile(r"<(system-reminder|local-command-caveat|ide_opened_file|ide_selection)>.*?</\1>",
                           re.DOTALL)
_WRITE_TOOLS = {"Edit", "Write", "MultiEdit", "NotebookEdit", "str_replace_based_edit_tool", "create_file"}


def block_text(content: object) -> str:
    """Plain text of a message or tool-result content (string or list of blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif isinstance(block, str):
                parts.append(block)
        return "\n".join(parts)
    return ""


def _kind(record: dict) -> str:
    """The record's type; a type that is not a string (a damaged line) becomes a short unknown name."""
    kind = record.get("type")
    return kind if isinstance(kind, str) else str(kind)[:40]


class _Builder:
    def __init__(self, session: Session, redact: Redact) -> None:
        self.s = session
        self.redact = redact
        self.tools: dict[str, ToolCall] = {}
        self.seen_blocks: set[tuple[str, str]] = set()
        self.counted_messages: set[str] = set()
        self.last_assistant_id: str | None = None
        self.uuids: set[str] = set()
        self.pending_summaries: list[tuple[str, str]] = []
        self.sidechains: dict[str, list[dict]] = {}
        self.clock = Clock(session)
        self.unknown: dict[str, int] = {}
        self.known = 0
        self.tasks: dict[str, dict] = {}  # TaskCreate id -> {content, status}
        self.tasks_last = False  # the task tools wrote the last list, not TodoWrite

    # -- bookkeeping ---------------------------------------------------------------------------------
    def _clock(self, record: dict) -> dt.datetime | None:
        return self.clock.tick(record.get("timestamp"))

    def _context(self, record: dict) -> None:
        s = self.s
        cwd = record.get("cwd")
        if isinstance(cwd, str) and cwd and not s.cwd:
            s.cwd = cwd
        s.note_branch(record.get("gitBranch"))
        version = record.get("version")
        if isinstance(version, str) and version:
            s.version = version

    def note_context(self, record: dict) -> None:
        if _kind(record) in KNOWN_TYPES:
            self.known += 1
        self._context(record)
        self._clock(record)

    def add(self, record: dict) -> None:
        kind = _kind(record)
        if kind in KNOWN_TYPES:
            self.known += 1
        uuid = record.get("uuid")
        if isinstance(uuid, str):
            self.uuids.add(uuid)
        if kind in ("user", "assistant") and record.get("isSidechain"):
            # 1.0.x writes subagent turns inline; they are folded as a run, not read as the main talk.
            key = str(record.get("agentId") or "inline")
            self.sidechains.setdefault(key, []).append(record)
            self._clock(record)
            return
        if kind == "user":
            self._context(record)
            mode = record.get("permissionMode")
            if isinstance(mode, str) and mode not in ("default", "acceptEdits") and mode not in self.s.permission_modes:
                self.s.permission_modes.append(mode)
            self._user(record, self._clock(record))
        elif kind == "assistant":
            self._context(record)
            self._assistant(record, self._clock(record))
        elif kind == "system":
            self._system(record, self._clock(record))
        elif kind == "summary":
            text, leaf = record.get("summary"), record.get("leafUuid")
            if isinstance(text, str) and isinstance(leaf, str):
                self.pending_summaries.append((text, leaf))
        elif kind in ("custom-title", "ai-title"):
            title = record.get("customTitle") or record.get("aiTitle") or record.get("title")
            if isinstance(title, str) and title.strip():
                self.s.titles.append(self.redact(title.strip()))
        elif kind == "pr-link":
            url = record.get("prUrl")
            if isinstance(url, str) and url not in self.s.pr_links:
                self.s.pr_links.append(self.redact(url))
        elif kind in KNOWN_TYPES:
            # progress mirrors subagent turns that the Task result already summarises; snapshots, queue
            # operations, attachments and metadata lines carry nothing a handoff needs.
            if kind in ("progress", "attachment"):
                self._clock(record)
        else:
            self.unknown[str(kind)] = self.unknown.get(str(kind), 0) + 1

    # -- record types --------------------------------------------------------------------------------
    def _user(self, record: dict, stamp: dt.datetime | None) -> None:
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if record.get("isCompactSummary") or (
            isinstance(content, str) and content.startswith(CONTINUATION_PREFIX)
        ):
            summary = _BLANK_LINES_RE.sub("\n\n", _DROP_TAGS_RE.sub("", block_text(content)).split(_SUMMARY_TAIL, 1)[0])
            text = cut(summary.strip(), 4000, self.redact)
            self._compaction_summary(text, stamp)
            return
        if record.get("isMeta"):
            return
        only_text = isinstance(content, list) and all(isinstance(b, dict) and b.get("type") == "text" for b in content)
        if (isinstance(content, str) or only_text) and (notice := _NOTIFICATION_RE.match(block_text(content))):
            self._task_notification(notice.group(1), stamp)
            return
        if isinstance(content, str):
            self._user_text(content, stamp, images=0)
            return
        if not isinstance(content, list):
            return
        texts, images = [], 0
        for block in content:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "tool_result":
                self._tool_result(block, record.get("toolUseResult"), record.get("permissionDecision"))
            elif btype == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif btype in ("image", "document"):
                images += 1
        if texts or images:
            self._user_text("\n".join(texts), stamp, images=images)

    def _user_text(self, text: str, stamp: dt.datetime | None, images: int) -> None:
        text = _DROP_TAGS_RE.sub("", text).strip()
        if text.startswith(INTERRUPT_PREFIX):
            self.s.events.append(Event("interrupt", stamp, text=text.split("]")[0].lstrip("[")))
            return
        tags = dict((name, value.strip()) for name, value in _TAG_RE.findall(text))
        if "command-name" in tags:
            args = cut(tags.get("command-args", ""), 300, self.redact)
            self.s.events.append(Event("command", stamp, text=tags["command-name"], meta={"args": args}))
            return
        if "bash-input" in tags:
            self.s.events.append(Event("command", stamp, text="!" + cut(tags["bash-input"], 300, self.redact)))
            return
        if tags.keys() & {"local-command-stdout", "local-command-stderr", "bash-stdout", "bash-stderr"}:
            return  # output of a local command: noise for a handoff
        if not text and not images:
            return
        self.s.events.append(Event("user", stamp, text=self.redact(text), images=images))

    def _tool_result(self, block: dict, structured: object, decision: object = None) -> None:
        call = self.tools.get(str(block.get("tool_use_id")))
        if call is None:
            return
        if call.name == "Bash":
            keep_output(call, block_text(part_value(block.get("content"))), self.redact)
        if block.get("is_error"):
            text = block_text(part_value(block.get("content")))
            call.is_error = True
            call.rejected = text.startswith(REJECTED_PREFIX)
            call.denied = isinstance(decision, dict) and decision.get("decision") == "reject" \
                and decision.get("source") not in (None, "user")
            call.error = cut(text.strip(), ERROR_KEEP, self.redact)
            return
        answers = part_value(structured.get("answers")) if isinstance(structured, dict) else None
        if call.name == "AskUserQuestion" and isinstance(answers, dict):
            # the person's answers, a line each ("question answer"): choices core/extract/user_choices.py reads
            call.result = cut("\n".join(f"{question} {answer}" for question, answer in answers.items()
                                        if isinstance(question, str) and isinstance(answer, str)),
                              RESULT_KEEP, self.redact)
        if call.name in _TASK_TOOLS and isinstance(structured, dict):
            self._task_result(call, part_value(structured.get("task")))
            self.tasks_last = True
        if isinstance(structured, dict) and "agentId" in structured:
            # Names as strings, counts as whole numbers: a damaged line may hold any type in either.
            call.subagent_stats = {key: structured[key] for key in ("agentId", "status")
                                   if isinstance(structured.get(key), str)}
            for key in ("totalDurationMs", "totalTokens", "totalToolUseCount"):
                value = structured.get(key)
                if isinstance(value, int | float) and math.isfinite(value):
                    call.subagent_stats[key] = int(value)
        if call.subagent_stats and call.name in ("Task", "Agent", "Bash"):
            # Only a subagent run's output is shown (`renderer.tool_line`): the others (Bash's are long)
            # are neither decoded nor redacted. Bash stays listed because these three kept their output
            # before, so a damaged line giving a Bash call subagent stats renders as it did. A background
            # run's launch says only that it started: its outcome comes by <task-notification>.
            report = part_value(structured.get("content")) if isinstance(structured, dict) else None
            text = block_text(report) or block_text(part_value(block.get("content")))
            launched = call.subagent_stats.get("status") == _ASYNC_LAUNCH
            call.result = "" if launched else cut(text.strip(), RESULT_KEEP, self.redact)

    def _task_notification(self, body: str, stamp: dt.datetime | None) -> None:
        """A background run's outcome (2.1.332): its Agent call gets the result and stats, once however
        often the run notifies; a run whose call is not in this transcript becomes a `subagent` event."""
        answer = _NOTIFICATION_RESULT_RE.search(body)
        around = body[:answer.start()] + body[answer.end():] if answer else body
        fields = {name: value.strip() for name, value in reversed(_NOTIFICATION_FIELD_RE.findall(around))}
        result = cut(answer.group(1).strip() if answer else "", RESULT_KEEP, self.redact)
        call = self.tools.get(fields.get("tool-use-id", ""))
        if call is None:
            self.s.events.append(Event("subagent", stamp, text=result, meta={
                "status": cut(fields.get("status", ""), 40, self.redact),
                "summary": cut(fields.get("summary", ""), 200, self.redact)}))
            return
        stats = call.subagent_stats
        if fields.get("task-id"):
            stats["agentId"] = cut(fields["task-id"], 80, self.redact)
        if fields.get("status"):
            stats["status"] = cut(fields["status"], 40, self.redact)
        for key, name in (("totalTokens", "subagent_tokens"), ("totalToolUseCount", "tool_uses"),
                          ("totalDurationMs", "duration_ms")):
            if fields.get(name, "").isdigit():
                stats[key] = int(fields[name])
        call.result = result or call.result

    def _task_result(self, call: ToolCall, task: object) -> None:
        """TaskCreate's result names the new task's id; TaskUpdate changes a task's status."""
        if call.name == "TaskCreate" and isinstance(task, dict) and isinstance(task.get("id"), str):
            subject = call.input.get("subject")
            if isinstance(subject, str) and subject.strip():
                self.tasks[task["id"]] = {"content": subject.strip(), "status": "pending"}
        elif call.name == "TaskUpdate":
            known = self.tasks.get(str(call.input.get("taskId")))
            status = call.input.get("status")
            if known is not None and status == "deleted":  # an unfinished task deleted is a step dropped
                old = list(self.tasks.values())
                del self.tasks[str(call.input.get("taskId"))]
                drop_todos(self.s, old, list(self.tasks.values()), call)
            elif known is not None and isinstance(status, str):
                known["status"] = status

    def _assistant(self, record: dict, stamp: dt.datetime | None) -> None:
        message = record.get("message")
        if not isinstance(message, dict):
            return
        content = message.get("content")
        msg_id = str(message.get("id") or record.get("uuid") or "")
        model = message.get("model")
        if model == "<synthetic>" or record.get("isApiErrorMessage"):
            text = block_text(content).strip()
            if text:
                self.s.events.append(Event("api_error", stamp, text=cut(text, ERROR_KEEP, self.redact)))
            return
        if isinstance(model, str) and model and msg_id not in self.counted_messages:
            self.counted_messages.add(msg_id)
            self.s.models[model] = self.s.models.get(model, 0) + 1
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            return
        for block in content:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "text" and isinstance(block.get("text"), str) and block["text"].strip():
                key = (msg_id, "t:" + block["text"])
                if key in self.seen_blocks:
                    continue
                self.seen_blocks.add(key)
                text = self.redact(block["text"].strip())
                last = self.s.events[-1] if self.s.events else None
                if last is not None and last.kind == "assistant" and last.meta.get("id") == msg_id:
                    last.text += "\n\n" + text
                else:
                    self.s.events.append(Event("assistant", stamp, text=text, meta={"id": msg_id}))
            elif btype == "tool_use":
                tool_id = str(block.get("id") or "")
                if (msg_id, "u:" + tool_id) in self.seen_blocks:
                    continue
                self.seen_blocks.add((msg_id, "u:" + tool_id))
                given = part_value(block.get("input"))
                raw_input = given if isinstance(given, dict) else {}
                name = str(block.get("name") or "?")
                call = tool_call(tool_id, name, raw_input, self.redact,
                                 written(raw_input) if name in WRITE_TOOLS else ())
                if call.name == "TodoWrite" and isinstance(call.input.get("todos"), list):
                    keep_todos(self.s, [t for t in call.input["todos"] if isinstance(t, dict)], call)
                    self.tasks_last = False
                self.tools[tool_id] = call
                self.s.events.append(Event("tool", stamp, tool=call))

    def _system(self, record: dict, stamp: dt.datetime | None) -> None:
        subtype = record.get("subtype")
        if subtype == "compact_boundary":
            meta = part_value(record.get("compactMetadata"))
            meta = meta if isinstance(meta, dict) else {}
            self.s.events.append(Event("compaction", stamp, meta={
                "trigger": str(meta.get("trigger") or "auto"), "pre_tokens": meta.get("preTokens")}))
        elif subtype == "api_error":
            error = part_value(record.get("error")) or part_value(record.get("content")) or "API error"
            text = error if isinstance(error, str) else str(error.get("message", "API error")) \
                if isinstance(error, dict) else "API error"
            self.s.events.append(Event("api_error", stamp, text=cut(text, ERROR_KEEP, self.redact)))
        elif subtype == "local_command" and isinstance(content := part_value(record.get("content")), str):
            self._user_text(content, stamp, images=0)

    def _compaction_summary(self, text: str, stamp: dt.datetime | None) -> None:
        last = next((e for e in reversed(self.s.events) if e.kind == "compaction"), None)
        if last is not None and not last.text:
            last.text = text
        else:
            self.s.events.append(Event("compaction", stamp, text=text, meta={"trigger": "unknown"}))

    def finish(self) -> None:
        if self.tasks and self.tasks_last:
            self.s.todos = list(self.tasks.values())
        for text, leaf in self.pending_summaries:
            if leaf in self.uuids and text not in self.s.summaries:
                self.s.summaries.append(self.redact(text))
        for key, records in self.sidechains.items():
            run = build_subagent(records, self.redact, agent_id=key, source="inline")
            if run is not None:
                self.s.subagents.append(run)


class _FieldCensus:
    """Reads one file's records, noting its CLI version and the fields it does not know of each record as the
    reader keeps it, so that both decoders note the same: a line `decode_parts` reads by its parts, a line the
    reader decodes whole by the records it gives (none for junk, U+FFFD for invalid UTF-8 or a lone surrogate)."""

    def __init__(self, stats: ReadStats) -> None:
        self.stats = stats
        self.sampled: dict[str, int] = {}
        self._whole = False  # the current line went to the reader's whole decoding

    def records(self, path: Path) -> Iterator[dict]:
        # The reader decodes the next line only once the current line's records are taken: `_whole` is theirs.
        for record in read_records(path, self.stats, self._decode):
            if self._whole:
                self._note(record.get("type"), record.get("version"), record.keys)
            yield record

    def _decode(self, line: bytes) -> dict:
        self._whole = False
        try:
            parts = decode_parts(line)
        except (ValueError, RecursionError):
            self._whole = True
            raise
        if isinstance(parts, dict):  # a line that is not one JSON object is the reader's to count
            self._note(parts.get("type"), parts.get("version"), lambda: top_level(line))
        return parts

    def _note(self, kind: object, version: object, fields: Callable[[], Iterable[str]]) -> None:
        if isinstance(version, str) and version:
            self.stats.version = version[:40]
        if not isinstance(kind, str) or (known := KNOWN_FIELDS.get(kind)) is None \
                or self.sampled.get(kind, 0) >= FIELD_SAMPLE:
            return
        self.sampled[kind] = self.sampled.get(kind, 0) + 1
        for name in fields():
            if name not in known:
                key = f"{kind}.{name[:60]}"
                self.stats.unknown_fields[key] = self.stats.unknown_fields.get(key, 0) + 1


def build_subagent(records: Iterable[dict], redact: Redact, *, agent_id: str, source: str,
                   meta: dict | None = None,
                   on_record: Callable[[dict], None] | None = None) -> SubagentRun | None:
    """A subagent run from its records; None for a "Warmup" stub or a run with no prompt."""
    run = SubagentRun(agent_id=agent_id, source=source)
    if meta:
        run.agent_type = str(meta.get("agentType") or "")
        run.description = redact(str(meta.get("description") or ""))
    last_answer = ""
    for record in records:
        if on_record is not None:
            on_record(record)
        stamp = parse_time(record.get("timestamp"))
        if stamp is not None:
            run.started = stamp if run.started is None or stamp < run.started else run.started
            run.ended = stamp if run.ended is None or stamp > run.ended else run.ended
        message = record.get("message")
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if record.get("type") == "user" and not run.prompt:
            text = block_text(content).strip()
            if text:
                run.prompt = cut(text, 500, redact)
        elif record.get("type") == "assistant" and isinstance(content, list):
            for block in content:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use":
                    name = str(block.get("name") or "?")
                    run.tool_counts[name] = run.tool_counts.get(name, 0) + 1
                    tool_input = part_value(block.get("input"))
                    tool_input = tool_input if isinstance(tool_input, dict) else {}
                    path = tool_input.get("file_path") or tool_input.get("notebook_path")
                    if name in _WRITE_TOOLS and isinstance(path, str) and path not in run.files_written:
                        run.files_written.append(redact(path))
                elif block.get("type") == "text" and isinstance(block.get("text"), str) and block["text"].strip():
                    last_answer = block["text"]
    if not run.prompt or run.prompt.strip().lower() == "warmup":
        return None
    run.answer = cut(last_answer.strip(), 600, redact)
    return run


def build_session(session_id: str, main_files: list[Path], subagent_files: list[tuple[Path, str, dict]],
                  redact: Redact) -> tuple[Session, dict[str, ReadStats]]:
    """Read a session's main transcript(s) and subagent files (path, layout, meta.json) into a Session.

    Returns the session and the read statistics of each file read. Files that vanish are skipped.
    """
    session = Session(session_id=session_id, orphan=not main_files)
    stats: dict[str, ReadStats] = {}
    builder = _Builder(session, redact)
    for path in main_files:
        file_stats = ReadStats()
        stats[str(path)] = file_stats
        try:
            for record in _FieldCensus(file_stats).records(path):
                builder.add(record)
        except OSError:
            del stats[str(path)]  # vanished: no statistics, so ingest looks at it again next time
            continue
        session.source_files.append(str(path))
    builder.finish()
    for path, layout, meta in subagent_files:
        file_stats = ReadStats()
        stats[str(path)] = file_stats
        agent_id = path.stem.removeprefix("agent-")
        # An orphan has no main file: its subagents are all that tells where and when it ran.
        on_record = builder.note_context if session.orphan else None
        try:
            run = build_subagent(_FieldCensus(file_stats).records(path), redact,
                                 agent_id=agent_id, source=layout, meta=meta, on_record=on_record)
        except OSError:
            del stats[str(path)]
            continue
        session.source_files.append(str(path))
        if run is not None:
            session.subagents.append(run)
    session.known_records = builder.known
    session.bad_lines = sum(s.bad_lines for s in stats.values())
    session.records = sum(s.records for s in stats.values())
    for name, count in builder.unknown.items():
        first = next(iter(stats.values()), None)
        if first is not None:
            first.unknown_types[name] = first.unknown_types.get(name, 0) + count
    session.subagents.sort(key=lambda run: (run.started or dt.datetime.min.replace(tzinfo=dt.UTC), run.agent_id))
    return session, stats
