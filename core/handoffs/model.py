"""The handoff: its model, its markdown file format (YAML front matter + sections) and atomic writing.

The format is the original eywa-mcp's, so handoffs written by it import unchanged.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, field_validator

from eywa.core.config.private_files import private_dir
from eywa.core.handoffs.durations import format_duration
from eywa.core.handoffs.fixed_words import SECTION_TITLES

if TYPE_CHECKING:
    import yaml

__all__ = ["STATUSES", "Handoff", "atomic_write", "format_duration", "handoff_relpath", "parse_handoff",
           "parse_sections", "parse_duration", "render_body", "split_front_matter", "handoff_from"]

NO_WORK_BODY = "No meaningful work."
NO_OPEN_THREADS = "None."
# Where the session left its work (front matter `status`, optional: the original's files have none).
STATUSES = ("done", "partial", "abandoned", "exploratory")
_DURATION_RE = re.compile(r"(?:(\d+)\s*h)?\s*(?:(\d+)\s*m(?:in)?)?", re.IGNORECASE)


def parse_duration(text: str | int | float | None) -> int:
    """Minutes from `1h 10m`, `45m`, `2h` or a bare number; 0 when unreadable."""
    if text is None:
        return 0
    if isinstance(text, int | float):
        return max(0, int(text))
    match = _DURATION_RE.fullmatch(text.strip())
    if not match or not any(match.groups()):
        return int(text) if text.strip().isdigit() else 0
    return int(match.group(1) or 0) * 60 + int(match.group(2) or 0)


class Handoff(BaseModel):
    """One session's handoff. `session_id` is the full id; `short_id` the short display id (the front
    matter keeps its keys: `session_id` the short id, `session_uuid` the full one)."""

    short_id: str
    session_id: str
    date: dt.date
    duration: str = "0m"
    model: str = ""
    headline: str
    projects: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    substance: int = Field(default=1, ge=0, le=2)
    what_happened: list[str] = Field(default_factory=list)
    insights: list[str] = Field(default_factory=list)
    key_files: list[str] = Field(default_factory=list)
    open_threads: list[str] = Field(default_factory=list)
    machine: str = ""  # the machine the session ran on; "" in files written before machines were told apart
    agent: str = "claude-code"  # which agent's session it is (core/sources); the original's files are Claude Code's
    status: str | None = None  # one of STATUSES; None when unknown (an imported original)
    # Body as read from a file (imported originals keep their own wording); rendered from sections if None.
    raw_body: str | None = None

    @field_validator("projects", "keywords", mode="before")
    @classmethod
    def _as_list(cls, value: object) -> object:
        if value is None:
            return []
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return [str(item) for item in value] if isinstance(value, list) else value

    @field_validator("status", mode="before")
    @classmethod
    def _known_status(cls, value: object) -> object:
        """A status outside STATUSES (any case, stray spaces or period) is read as unknown, never refused."""
        text = str(value or "").strip().strip(".").lower()
        return text if text in STATUSES else None

    @property
    def duration_minutes(self) -> int:
        return parse_duration(self.duration)

    @property
    def body(self) -> str:
        return self.raw_body if self.raw_body is not None else render_body(self)

    def front_matter(self) -> dict[str, object]:
        optional = {"machine": self.machine} if self.machine else {}
        return {
            "session_id": self.short_id,
            "session_uuid": self.session_id,
            "date": self.date.isoformat(),
            "duration": self.duration,
            "model": self.model,
            "headline": self.headline,
            "projects": self.projects,
            "keywords": self.keywords,
            "substance": self.substance,
            **({"status": self.status} if self.status else {}),
            "agent": self.agent,
            **optional,
        }

    def to_markdown(self) -> str:
        lines = ["---"]
        for key, value in self.front_matter().items():
            lines.append(f"{key}: {_yaml_value(value)}")
        lines.append("---")
        return "\n".join(lines) + "\n" + self.body.rstrip("\n") + "\n"


_PLAIN_RE = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_./ ()+-]*")
_YAML_WORDS = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"}


def _yaml_value(value: object) -> str:
    """One front-matter value: plain when YAML reads it back as the same string, else double-quoted
    (a JSON string is a valid YAML double-quoted scalar)."""
    if isinstance(value, list):
        return "[" + ", ".join(_yaml_value(item) for item in value) + "]"
    if isinstance(value, int):
        return str(value)
    text = str(value)
    plain = (_PLAIN_RE.fullmatch(text) and text == text.strip() and text.lower() not in _YAML_WORDS
             and not _looks_numeric(text))
    return text if plain else json.dumps(text, ensure_ascii=False)


def _looks_numeric(text: str) -> bool:
    try:
        float(text.replace("_", ""))
    except ValueError:
        return bool(re.fullmatch(r"\d{4}-\d{2}-\d{2}.*|0[xob].*", text))
    return True


def render_body(handoff: Handoff) -> str:
    """The markdown body for the handoff's substance level, as docs/architecture.md lays it out."""
    if handoff.substance == 0:
        return f"# {handoff.headline}\n\n{NO_WORK_BODY}\n"
    parts = [f"# {handoff.headline}"]
    sections = ["what_happened", "insights"]
    if handoff.substance == 2:
        sections.append("key_files")
    sections.append("open_threads")
    for name in sections:
        items = getattr(handoff, name)
        if name == "open_threads" and not items:
            parts.append(f"## {SECTION_TITLES[name]}\n{NO_OPEN_THREADS}")
        elif items:
            parts.append(f"## {SECTION_TITLES[name]}\n" + "\n".join(f"- {item}" for item in items))
    return "\n\n".join(parts) + "\n"


def split_front_matter(text: str) -> tuple[dict[str, object], str]:
    """(front matter mapping, body). Raises ValueError when the text has no valid front matter."""
    if not text.startswith("---"):
        raise ValueError("no front matter (the file must start with ---)")
    end = text.find("\n---", 3)
    if end < 0:
        raise ValueError("front matter is not closed by ---")
    meta = _simple_front_matter(text[3:end])
    if meta is None:
        import yaml  # deferred: ingest writes handoffs and never parses them

        meta = yaml.safe_load(text[3:end])
    if not isinstance(meta, dict):
        raise ValueError("front matter is not a mapping")
    body = text[end + 4 :].lstrip("\n")
    return meta, body


# What `to_markdown` and the original eywa-mcp write: one `key: value` a line, each value a plain scalar, a
# double-quoted one (as `_yaml_value` quotes) or a flow list of those. Anything else goes to the YAML parser.
_LINE_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*): (.*)")
_ITEM_RE = re.compile(r'\s*("(?:[^"\\]|\\.)*"|[^,"\[\]{}]*?)\s*(?:,|$)')
# Characters YAML reads other than as themselves (line breaks it folds, characters it refuses): left to it.
_UNUSUAL_RE = re.compile("[^\t\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_STR, _INT, _TIMESTAMP = "tag:yaml.org,2002:str", "tag:yaml.org,2002:int", "tag:yaml.org,2002:timestamp"


def _simple_front_matter(block: str) -> dict[str, object] | None:
    """The mapping yaml.safe_load reads from `block` when every line is of the simple kinds above; None
    otherwise. Reindexing a million handoffs parses a million front matters: the YAML parser's share of that
    was most of the time (bench/RESULTS.md)."""
    if _UNUSUAL_RE.search(block):
        return None
    meta: dict[str, object] = {}
    for line in block.strip("\n").split("\n"):
        match = _LINE_RE.fullmatch(line)
        if match is None:
            return None
        value = _scalar(match.group(2).rstrip(" "), flow=False)
        if value is _UNREAD and match.group(2).startswith("[") and match.group(2).endswith("]"):
            value = _flow_list(match.group(2)[1:-1])
        if value is _UNREAD:
            return None
        meta[match.group(1)] = value
    return meta


@functools.cache
def _resolver() -> tuple[yaml.resolver.Resolver, frozenset[str], type[yaml.ScalarNode]]:
    """YAML's resolver of implicit types, the first characters it has types for, its scalar node (imported when
    first read: ingest writes handoffs and never reads one)."""
    import yaml

    resolver = yaml.resolver.Resolver()
    return resolver, frozenset(first for first in resolver.yaml_implicit_resolvers if first), yaml.ScalarNode


_UNREAD = object()
_PLAIN_START_RE = re.compile(r"[A-Za-z0-9_/(]")  # a plain scalar's first character (no indicator, no . + -)
_FLOW_INDICATORS = frozenset(",[]{}")


def _scalar(text: str, *, flow: bool) -> object:
    """`text` as YAML reads a scalar, for the cases `_yaml_value` writes; _UNREAD for any other."""
    if text.startswith('"'):
        try:
            value = json.loads(text)
        except ValueError:
            return _UNREAD
        # Only a string exactly as json.dumps escapes it: those escapes mean the same to YAML.
        return value if isinstance(value, str) and json.dumps(value, ensure_ascii=False) == text else _UNREAD
    if not text or not _PLAIN_START_RE.match(text) or ": " in text or " #" in text or text.endswith(":") \
            or (flow and _FLOW_INDICATORS.intersection(text)):
        return _UNREAD
    # YAML picks the implicit types to try by a plain scalar's first character: most start with none of those.
    resolver, typed_starts, node = _resolver()
    tag = _STR if text[0] not in typed_starts else resolver.resolve(node, text, (True, False))
    if tag == _STR:
        return text
    if tag == _INT and re.fullmatch(r"0|[1-9][0-9]*", text):
        return int(text)
    if tag == _TIMESTAMP and re.fullmatch(r"\d{4}-\d\d-\d\d", text):
        return dt.date.fromisoformat(text)
    return _UNREAD


def _flow_list(inner: str) -> object:
    if not inner.strip():
        return []
    items: list[object] = []
    at = 0
    while at < len(inner):
        match = _ITEM_RE.match(inner, at)
        if match is None or match.end() == at:
            return _UNREAD
        item = _scalar(match.group(1), flow=True)
        if item is _UNREAD:
            return _UNREAD
        items.append(item)
        at = match.end()
        if at == len(inner) and inner.rstrip().endswith(","):
            return _UNREAD  # a trailing comma: YAML's business
    return items


def parse_sections(body: str) -> dict[str, list[str]]:
    """Bullet items of each known `## ` section of a body; unknown sections are ignored."""
    by_title = {title.lower(): name for name, title in SECTION_TITLES.items()}
    result: dict[str, list[str]] = {name: [] for name in SECTION_TITLES}
    current: str | None = None
    for line in body.splitlines():
        if line.startswith("## "):
            current = by_title.get(line[3:].strip().lower())
            continue
        if current is None:
            continue
        stripped = line.strip()
        if stripped.startswith(("- ", "* ")):
            result[current].append(stripped[2:].strip())
        elif stripped and stripped != NO_OPEN_THREADS and result[current]:
            result[current][-1] += " " + stripped
        elif stripped and stripped != NO_OPEN_THREADS:
            result[current].append(stripped)
    return result


def parse_handoff(text: str, fallback_id: str | None = None) -> Handoff:
    """A handoff from its file text (ours or the original eywa-mcp's). Raises ValueError if unusable."""
    return handoff_from(*split_front_matter(text), fallback_id=fallback_id)


def handoff_from(meta: dict[str, Any], body: str, fallback_id: str | None = None) -> Handoff:
    """A handoff from a file's front matter and body (`split_front_matter`). Raises ValueError if unusable."""
    short = str(meta.get("session_id") or fallback_id or "").strip()
    full = str(meta.get("session_uuid") or short).strip()
    if not full:
        raise ValueError("front matter has no session_id")
    headline = str(meta.get("headline") or "").strip()
    if not headline:
        first = next((ln[2:].strip() for ln in body.splitlines() if ln.startswith("# ")), "")
        headline = first or "(untitled)"
    raw_date = meta.get("date")
    if isinstance(raw_date, dt.datetime):
        raw_date = raw_date.date()
    elif isinstance(raw_date, str):
        raw_date = dt.date.fromisoformat(raw_date.strip()[:10])
    if not isinstance(raw_date, dt.date):
        raise ValueError("front matter has no valid date")
    sections = parse_sections(body)
    return Handoff(
        short_id=short or full[:8],
        session_id=full,
        date=raw_date,
        duration=str(meta.get("duration") or "0m"),
        model=str(meta.get("model") or ""),
        headline=headline,
        projects=meta.get("projects") or [],
        keywords=meta.get("keywords") or [],
        substance=int(meta.get("substance", 1) or 0),
        machine=str(meta.get("machine") or ""),
        agent=str(meta.get("agent") or "claude-code"),
        status=meta.get("status"),
        raw_body=body,
        **sections,
    )


def handoff_relpath(handoff: Handoff) -> Path:
    """`YYYY/MM/DD/<session-id>.md`, named by the full id (imported originals keep their short names)."""
    d = handoff.date
    return Path(f"{d.year:04d}", f"{d.month:02d}", f"{d.day:02d}", f"{handoff.session_id}.md")


def atomic_write(path: Path, text: str) -> None:
    """Write through a temporary file in the same folder and rename: readers see old or new, never half.

    No fsync (it slows ingest, bench/RESULTS.md): a killed process cannot leave half a file this way, and
    after a power loss the next ingest rewrites what the index lacks.
    A killed writer leaves its temporary file (named with its pid): the next process to write to the
    folder removes it.
    """
    _prepare_folder(path.parent)
    prefix = f".{path.name}.{os.getpid()}."
    try:
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=path.parent)
    except FileNotFoundError:  # the folder was deleted since this process prepared it
        _PREPARED.discard(path.parent)
        _prepare_folder(path.parent)
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# Folders this process has created or found, and swept of orphans: once each, not before every write.
_PREPARED: set[Path] = set()


def _prepare_folder(folder: Path) -> None:
    if folder not in _PREPARED:
        private_dir(folder)
        _remove_orphan_temps(folder)
        _PREPARED.add(folder)


def _remove_orphan_temps(folder: Path) -> None:
    """Delete the temporary files `.<name>.<pid>.<random>.tmp` whose writer is no longer running."""
    for entry in os.scandir(folder):
        parts = entry.name.split(".")
        if entry.name.startswith(".") and parts[-1] == "tmp" and len(parts) >= 5 and parts[-3].isdigit() \
                and not _running(int(parts[-3])):
            Path(entry.path).unlink(missing_ok=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, as another user's
    return True
