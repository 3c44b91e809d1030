"""Handoffs, digests and status as Telegram HTML: pure functions, no network.

Every piece of text passes `html.escape` before it meets a tag, and each block (the header, one
section) opens and closes its own tags, so any split on block or line boundaries is still valid HTML
and Telegram never answers "can't parse entities".
"""

from __future__ import annotations

import datetime as dt
import html
import re
from collections.abc import Iterable
from zoneinfo import ZoneInfo

from eywa.core.api import Digest, HandoffRecord, Results, Stats, drift_lines
from eywa.core.handoffs.continue_prompt import continue_prompt as core_continue_prompt
from eywa.core.handoffs.model import format_duration
from eywa.core.launcher import BackgroundSession, attach_command
from eywa.core.sources import AGENT_NAMES, CLAUDE_CODE

MAX_MESSAGE = 4096  # Telegram's limit on a message's text
BUDGET = 3900  # what one chunk may hold, in UTF-16 units of the HTML source (always >= the parsed text)
MAX_MESSAGES = 3  # more chunks than this and the whole goes as one .md document
CAPTION_BUDGET = 1000  # captions stop at 1024

_CODE_RE = re.compile(r"`([^`\n]+)`")
_BOLD_RE = re.compile(r"\*\*(.+?)\*\*")
_TAG_RE = re.compile(r"<[^>]*>")


def utf16_len(text: str) -> int:
    """Telegram counts message length in UTF-16 code units (an emoji can count two)."""
    return len(text.encode("utf-16-le")) // 2


def esc(text: object) -> str:
    return html.escape(str(text), quote=False)


def inline(text: str) -> str:
    """One line of handoff markdown as HTML: `code` and **bold**; everything else escaped."""
    out = []
    for index, part in enumerate(_CODE_RE.split(text)):
        if index % 2:
            out.append(f"<code>{esc(part)}</code>")
            continue
        for sub, piece in enumerate(_BOLD_RE.split(part)):
            out.append(f"<b>{esc(piece)}</b>" if sub % 2 else esc(piece))
    return "".join(out)


def to_plain(html_text: str) -> str:
    """The text a reader sees, for the plain-text fallback and for documents."""
    return html.unescape(_TAG_RE.sub("", html_text))


def date_label(day: dt.date) -> str:
    return f"{day:%a %d %b %Y}"


def projects_label(record: HandoffRecord) -> str:
    return ", ".join(record.projects) or "no project"


def agent_label(record: HandoffRecord) -> list[str]:
    """The agent's name, for a session of another agent than Claude Code (the one every handoff was before)."""
    return [AGENT_NAMES.get(record.agent, record.agent)] if record.agent != CLAUDE_CODE else []


def machine_label(record: HandoffRecord) -> list[str]:
    """"on laptop": the machine the session ran on, when the index knows it (core/machines/spokes.py)."""
    return [f"on {record.machine}"] if record.machine else []


def header(record: HandoffRecord) -> str:
    status = record.status
    meta = " · ".join([date_label(record.date), projects_label(record), format_duration(record.duration_min),
                       *([status] if status else []), *agent_label(record), *machine_label(record)])
    return f"<b>{inline(record.headline)}</b>\n{esc(meta)} · <code>{esc(record.short_id)}</code>"


def body_blocks(body: str) -> list[str]:
    """The body's `## ` sections as HTML blocks, in order; the `# ` headline is left to the header."""
    blocks: list[list[str]] = []
    for line in body.splitlines():
        stripped = line.strip()
        if not stripped or (line.startswith("# ") and not blocks):
            continue
        if line.startswith("## "):
            blocks.append([f"<b>{esc(line[3:].strip())}</b>"])
            continue
        if not blocks:
            blocks.append([])
        if stripped.startswith(("- ", "* ")):
            blocks[-1].append("• " + inline(stripped[2:].strip()))
        else:
            blocks[-1].append(inline(stripped))
    return ["\n".join(lines) for lines in blocks if lines]


def handoff_blocks(record: HandoffRecord) -> list[str]:
    return [header(record), *body_blocks(record.body)]


def _split_line(line: str, budget: int) -> list[str]:
    """A single line longer than the budget: cut its plain text (formatting is lost, validity is not)."""
    plain = to_plain(line)
    step = max(1, budget // 6)  # escaping can grow a character to 5 ("&amp;")
    return [esc(plain[i : i + step]) for i in range(0, len(plain), step)]


def pack(blocks: Iterable[str], budget: int = BUDGET) -> list[str]:
    """Blocks joined by blank lines into chunks under `budget`; a block too big is split by lines."""
    pieces: list[str] = []
    for block in blocks:
        if utf16_len(block) <= budget:
            pieces.append(block)
            continue
        current = ""
        for line in block.split("\n"):
            for part in [line] if utf16_len(line) <= budget else _split_line(line, budget):
                candidate = f"{current}\n{part}" if current else part
                if utf16_len(candidate) > budget:
                    pieces.append(current)
                    current = part
                else:
                    current = candidate
        if current:
            pieces.append(current)
    chunks: list[str] = []
    for piece in pieces:
        if chunks and utf16_len(chunks[-1]) + 2 + utf16_len(piece) <= budget:
            chunks[-1] += "\n\n" + piece
        else:
            chunks.append(piece)
    return chunks


def handoff_chunks(record: HandoffRecord) -> list[str]:
    return pack(handoff_blocks(record))


def handoff_markdown(record: HandoffRecord) -> str:
    """The handoff file as stored (front matter and all), or its body when the file is gone."""
    try:
        return record.path.read_text(encoding="utf-8")
    except OSError:
        return record.body


def handoff_filename(record: HandoffRecord) -> str:
    return f"{record.date.isoformat()}-{record.short_id}.md"


# --- what a recall found -------------------------------------------------------------------------

QUERY_SHOWN = 200  # characters of a query quoted back; a pasted page would not fit a message


def recall_note(results: Results) -> str | None:
    """The line above a recall's first results, as `eywa get` says it: nothing matched (the latest sessions
    follow), or which days the query's words were understood as (a filter the config sets, every answer
    would repeat: left out); None when there is nothing to say."""
    within = results.label(results.within) if results.asked else ""
    if results.no_match:
        words = results.words if len(results.words) <= QUERY_SHOWN else results.words[: QUERY_SHOWN - 1] + "…"
        where = f" {within}" if within else ""
        return f"No session matches “{esc(words)}”{esc(where)}. The latest sessions:"
    if results.missed is not None:
        return f"No sessions {esc(results.label(results.missed))}. The latest ones:"
    if results.first is not None:
        return "Sessions " + esc(f"{within}, those " if within else "") + f"{esc(results.label(results.first))} first:"
    return f"Sessions {esc(within)}:" if within else None


def nothing_found(results: Results) -> str:
    """A recall's answer when no session at all is in reach."""
    within = results.label(results.within)
    return f"No sessions {esc(within)}." if within else "No sessions indexed yet: /ingest reads them."


# --- continue prompt ---------------------------------------------------------------------------


def continue_prompt(record: HandoffRecord, budget: int = BUDGET - 40) -> str:
    """The Continue prompt (core/handoffs/continue_prompt.py) cut to fit one message (plain text)."""
    text = core_continue_prompt(record, lambda text: utf16_len(esc(text)) <= budget)
    return text if utf16_len(esc(text)) <= budget else to_plain(_split_line(esc(text), budget)[0])


def continue_html(record: HandoffRecord) -> str:
    """The prompt as one `pre` block: Telegram shows it with a copy button."""
    return f"<pre>{esc(continue_prompt(record))}</pre>"


# --- Claude Code sessions started from the phone -------------------------------------------------

NAME_SHOWN = 60  # characters of a session's name in a message
_FINISHED = {"done": "is done", "failed": "failed", "blocked": "is waiting for you", "stopped": "has exited"}


def session_started_html(session: BackgroundSession, record: HandoffRecord) -> str:
    return "\n".join([
        f"Started a Claude session <code>{esc(session.id)}</code> on <b>{inline(record.headline)}</b>",
        f"in <code>{esc(session.cwd)}</code>.",
        f"Attach from a terminal: <code>{esc(attach_command(session))}</code>",
        "I will tell you when its turn is over.",
    ])


def session_finished_html(session: BackgroundSession) -> str:
    # Claude names a job after its first turn; until then the name is the prompt's start
    label = session.name if len(session.name) <= NAME_SHOWN else session.name[:NAME_SHOWN - 1].rstrip() + "…"
    name = f" ({esc(label)})" if label else ""
    done = _FINISHED.get(session.state, "is no longer listed by <code>claude agents</code>")
    return (f"Claude session <code>{esc(session.id)}</code>{name} {done}.\n"
            f"Open it: <code>{esc(attach_command(session))}</code>")


# --- lists, digest, status ---------------------------------------------------------------------


def short_line(index: int, record: HandoffRecord) -> str:
    """One line a session: number, headline, date, projects, duration, id (for /show)."""
    meta = " · ".join([f"{record.date:%d %b}", projects_label(record), format_duration(record.duration_min),
                       *agent_label(record), *machine_label(record)])
    return f"{index}. <b>{inline(record.headline)}</b> · {esc(meta)} · <code>{esc(record.short_id)}</code>"


def last_list(records: list[HandoffRecord], title: str = "Latest sessions") -> str:
    lines = [f"<b>{esc(title)}</b>"] + [short_line(i, r) for i, r in enumerate(records, 1)]
    return "\n".join(lines)


def digest_blocks(digest: Digest, zone: ZoneInfo) -> list[str]:
    count = len(digest.handoffs)
    since = digest.since.astimezone(zone)
    blocks = [f"<b>Digest: {count} session{'s' if count != 1 else ''} since {since:%a %d %b %H:%M}</b>"]
    by_project: dict[str, list[HandoffRecord]] = {}
    for record in digest.handoffs:
        by_project.setdefault(record.projects[0] if record.projects else "no project", []).append(record)
    for project, records in sorted(by_project.items(), key=lambda item: (-len(item[1]), item[0])):
        lines = [f"<b>{esc(project)}</b> ({len(records)})"]
        lines += [f"• {esc(r.headline)} · {r.date:%d %b} · <code>{esc(r.short_id)}</code>" for r in records]
        blocks.append("\n".join(lines))
    if digest.open_threads:
        threads_by_project: dict[str, list[tuple[HandoffRecord, list[str]]]] = {}
        for record, threads in digest.open_threads:
            project = record.projects[0] if record.projects else "no project"
            threads_by_project.setdefault(project, []).append((record, threads))
        lines = ["<b>Open threads</b>"]
        for project, entries in sorted(threads_by_project.items()):
            lines.append(f"<b>{esc(project)}</b>")
            for record, threads in entries:
                lines += [f"• {inline(thread)} <i>({esc(record.short_id)})</i>" for thread in threads]
        blocks.append("\n".join(lines))
    return blocks


def ago(then: dt.datetime, now: dt.datetime) -> str:
    seconds = max(0, int((now - then).total_seconds()))
    if seconds < 90:
        return f"{seconds}s ago"
    if seconds < 90 * 60:
        return f"{seconds // 60} min ago"
    if seconds < 36 * 3600:
        return f"{seconds // 3600} h ago"
    return f"{seconds // 86400} days ago"


def status_html(stats: Stats, *, now: dt.datetime, zone: ZoneInfo, next_ingest: dt.datetime | None,
                ingest_every: int, last_scheduled: str | None, digest_time: str | None) -> str:
    lines = ["<b>Eywa status</b>",
             f"Sessions indexed: {stats.handoffs} ({stats.substantial} with work, {stats.imported} imported)",
             f"Source files: {stats.sources} ({stats.sessions_skipped} sessions skipped: empty or not transcripts)",
             f"Dates: {stats.first_date or '-'} .. {stats.last_date or '-'}"]
    if stats.last_ingest_at:
        when = dt.datetime.fromisoformat(stats.last_ingest_at)
        when = when if when.tzinfo else when.replace(tzinfo=dt.UTC)
        last = stats.last_ingest
        lines.append(f"Last ingest: {when.astimezone(zone):%d %b %H:%M} ({ago(when, now)}): "
                     f"{last.get('sessions_updated', 0)} sessions updated, {last.get('files_changed', 0)} files "
                     f"changed, in {last.get('seconds', 0):.1f}s")
    else:
        lines.append("Last ingest: never")
    if last_scheduled:
        lines.append(f"Last scheduled ingest: {esc(last_scheduled)}")
    if next_ingest is not None:
        lines.append(f"Next scheduled ingest: {next_ingest.astimezone(zone):%H:%M} (every {ingest_every} min)")
    else:
        lines.append("Scheduled ingest: off (only /ingest)")
    lines.append(f"Bad lines skipped: {stats.bad_lines}")
    drift = getattr(stats, "drift", None) or {}
    if drift:
        lines.append("Agent versions read (records and fields the reader does not know):")
        lines.extend(f"  {esc(line)}" for line in drift_lines(drift, clean_limit=3))
    if stats.agents:
        lines.append("Sessions by agent: " + esc(", ".join(f"{name} {n}" for name, n in stats.agents.items())))
    llm = getattr(stats, "llm", None) or {}  # LLM extraction's own figures, when core reports them
    in_use = describe_backend(llm)
    written = ", ".join(f"{name} {n}" for name, n in stats.extractors.items()) or "none yet"
    lines.append(f"Extractor in use: {esc(in_use)} (handoffs written by: {esc(written)})")
    if llm.get("backend_reason"):
        lines.append(f"LLM backend (llm.backend {esc(llm.get('wanted', 'auto'))}): {esc(llm['backend_reason'])}")
    lines.append(f"Daily digest here: {digest_time + ' ' + zone.key if digest_time else 'off'}")
    return "\n".join(lines)


def describe_backend(llm: dict) -> str:
    """Which extractor writes new handoffs: the LLM backend and its model, or deterministic and why."""
    names = {"anthropic": "the Anthropic API", "claude-code": "Claude Code"}
    backend = llm.get("backend", "deterministic")
    return f"{names[backend]}, {llm.get('model', '')}".rstrip(", ") if backend in names else "deterministic"


HELP = "\n".join([
    "<b>Eywa</b> finds your past Claude Code sessions.",
    "",
    "Type words, or send a voice note, to get the sessions that match. Under each: <b>More</b> (the next "
    "ones), <b>File</b> (the handoff as a .md file), <b>Continue</b> (a prompt that opens a new Claude "
    "session on it) and, when enabled, <b>Start</b> (a background Claude session on that prompt, in the "
    "session's directory).",
    "",
    "/recall <i>words</i>: the same as typing them",
    "/last: the latest sessions; /last <i>N</i> lists N; /last 1 shows the newest in full",
    "/show <i>id</i>: one handoff, by id or its first characters",
    "/status: what is indexed, the last and the next ingest",
    "/ingest: read new transcripts now",
    "/digest: the digest now; /digest <i>HH:MM</i> every day; /digest off",
    "/voice on: a short spoken answer after each voice note (for the road); /voice off",
    "In any chat, type @{username} <i>words</i> to paste a session's Continue prompt there.",
])


def forget_question_html(record: HandoffRecord) -> str:
    return (f"Forget <b>{inline(record.headline)}</b> ({esc(date_label(record.date))}, <code>{esc(record.short_id)}"
            "</code>)? Its handoff, archive and index entries are deleted, and the next ingest leaves its transcript "
            "out while it exists.")


def forgotten_html(record: HandoffRecord) -> str:
    return (f"Forgot <code>{esc(record.short_id)}</code>. On the hub, <code>eywa forget --undo "
            f"{esc(record.short_id)}</code> brings it back at the next ingest.")
