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

from core.api import Digest, HandoffRecord, Stats
from core.handoff import format_duration, parse_sections

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


def header(record: HandoffRecord) -> str:
    meta = " · ".join([date_label(record.date), projects_label(record), format_duration(record.duration_min)])
    return f"<b>{esc(record.headline)}</b>\n{esc(meta)} · <code>{esc(record.short_id)}</code>"


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


# --- continue prompt ---------------------------------------------------------------------------


def _plain_inline(text: str) -> str:
    return text.replace("**", "")


def continue_prompt(record: HandoffRecord, budget: int = BUDGET - 40) -> str:
    """A ready-to-paste prompt that opens a new Claude Code session on this handoff (plain text)."""
    sections = parse_sections(record.body)

    def build(limit: int) -> str:
        lines = [
            f"Continue from my earlier Claude Code session {record.session_uuid} "
            f"({record.date.isoformat()}, {projects_label(record)}): {record.headline}",
        ]
        for title, key, empty in (
            ("What happened", "what_happened", None),
            ("Open threads", "open_threads", "None recorded."),
            ("Key files", "key_files", None),
            ("Insights", "insights", None),
        ):
            items = sections[key][:limit]
            if items:
                lines += ["", f"{title}:"] + [f"- {_plain_inline(item)}" for item in items]
            elif empty:
                lines += ["", f"{title}: {empty}"]
        lines += [
            "",
            f"Session id: {record.session_uuid}",
            f"Handoff file: {record.path}",
            "",
            "First check the open threads against the code as it is now, then carry on with them.",
        ]
        return "\n".join(lines)

    for limit in (50, 10, 5, 3, 1, 0):
        text = build(limit)
        if utf16_len(esc(text)) <= budget:
            return text
    return to_plain(_split_line(esc(text), budget)[0])


def continue_html(record: HandoffRecord) -> str:
    """The prompt as one `pre` block: Telegram shows it with a copy button."""
    return f"<pre>{esc(continue_prompt(record))}</pre>"


# --- lists, digest, status ---------------------------------------------------------------------


def short_line(index: int, record: HandoffRecord) -> str:
    """One line a session: number, headline, date, projects, duration, id (for /show)."""
    meta = f"{record.date:%d %b} · {projects_label(record)} · {format_duration(record.duration_min)}"
    return f"{index}. <b>{esc(record.headline)}</b> · {esc(meta)} · <code>{esc(record.short_id)}</code>"


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
        lines = ["<b>Open threads</b>"]
        for record, threads in digest.open_threads:
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
             f"Source files: {stats.sources} ({stats.sources_skipped} empty or not transcripts)",
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
    llm = getattr(stats, "llm", None) or {}  # LLM extraction's own figures, when core reports them
    in_use = f"LLM {llm.get('model', '')}".strip() if llm.get("active") else "deterministic"
    written = ", ".join(f"{name} {n}" for name, n in stats.extractors.items()) or "none yet"
    lines.append(f"Extractor in use: {esc(in_use)} (handoffs written by: {esc(written)})")
    lines.append(f"Daily digest here: {digest_time + ' ' + zone.key if digest_time else 'off'}")
    return "\n".join(lines)


HELP = "\n".join([
    "<b>Eywa</b> finds your past Claude Code sessions.",
    "",
    "Type words, or send a voice note, to get the sessions that match. Under each: <b>More</b> (the next "
    "ones), <b>File</b> (the handoff as a .md file), <b>Continue</b> (a prompt that opens a new Claude "
    "session on it).",
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
