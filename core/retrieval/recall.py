"""The one query path of every front end: the query's time words understood, its handoffs ranked, and the
text `eywa get` and the MCP tool answer with. `query_handoffs` is the reader both paths call: `Eywa.recall` (the API,
the bot, the MCP server, the hub the hooks ask) and `eywa get` (light), each with its own settings' defaults.

Kept free of pydantic and the settings model, so that `eywa get` can answer from a light start-up
(see `eywa.cli.main`): a user waits on that command, and the settings model's imports are slow (bench/RESULTS.md).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, cast, overload

from eywa.core.config.clock import now
from eywa.core.index.readonly import HandoffRow, handoffs_by_id, machine_count
from eywa.core.retrieval.query_tokens import tokenize_query
from eywa.core.retrieval.time_words import Window, last_days, understood

if TYPE_CHECKING:
    import sqlite3

    from eywa.core.retrieval.scorer import Mode

MAX_QUERY_CHARS = 500  # a longer query is cut: nobody types more, and each word costs a lookup


class HandoffRecord(NamedTuple):  # no dataclass: `dataclasses` imports `inspect`, milliseconds at each `eywa get`
    session_id: str
    short_id: str
    date: dt.date
    headline: str
    projects: list[str]
    keywords: list[str]
    substance: int
    duration_min: int
    model: str
    body: str
    path: Path
    agent: str = "claude-code"
    machine: str = ""
    score: float = 0.0
    match: bool = True  # False: it matches no word of the query, one of the latest sessions listed instead

    def to_json(self) -> dict[str, object]:
        return {
            "session_id": self.session_id,
            "short_id": self.short_id,
            "match": self.match,
            "score": round(self.score, 6),
            "date": self.date.isoformat(),
            "headline": self.headline,
            "projects": self.projects,
            "keywords": self.keywords,
            "substance": self.substance,
            "duration_min": self.duration_min,
            "model": self.model,
            "agent": self.agent,
            "machine": self.machine,
            "path": str(self.path),
        }

    @property
    def status(self) -> str | None:
        """done | partial | abandoned | exploratory, from the handoff file's front matter (the index
        keeps no column for it); None when the file has none (an imported original) or is gone."""
        from eywa.core.handoffs.model import STATUSES, split_front_matter

        try:
            value = split_front_matter(self.path.read_text(encoding="utf-8"))[0].get("status")
        except (OSError, ValueError):
            return None
        return value if value in STATUSES else None

    @property
    def open_threads(self) -> list[str]:
        from eywa.core.handoffs.model import parse_sections

        return parse_sections(self.body)["open_threads"]


def record_from_row(row: HandoffRow, handoffs_dir: Path, score: float = 0.0, match: bool = True) -> HandoffRecord:
    return HandoffRecord(
        session_id=row.session_id, short_id=row.short_id, date=dt.date.fromisoformat(row.date),
        headline=row.headline, projects=json.loads(row.projects), keywords=json.loads(row.keywords),
        substance=row.substance, duration_min=row.duration_min, model=row.model, body=row.body,
        path=handoffs_dir / row.path, agent=row.agent, machine=row.machine, score=score, match=match,
    )


class Results(Sequence[HandoffRecord]):
    """The handoffs a query found, best first, and how they were chosen: what an answer says around them."""

    __slots__ = ("records", "words", "today", "within", "asked", "first", "missed", "machines")

    def __init__(self, records: list[HandoffRecord], words: str, today: dt.date, within: Window | None = None,
                 asked: bool = False, first: Window | None = None, missed: Window | None = None,
                 machines: int = 1) -> None:
        self.records = records
        self.words = words  # the words matched, time words taken out ("" when none are left: a listing)
        self.today = today  # the day the query was asked, which time words count from
        self.within = within  # the only days searched (days_back, "7d"; with no words, the time words too)
        self.asked = asked  # the query's own words named `within` ("7d", "yesterday"), not days_back alone
        self.first = first  # the days the time words name, whose sessions rank first
        self.missed = missed  # with no words: the time words' days held no session, the latest instead
        self.machines = machines  # how many machines the index holds sessions of

    @property
    def no_match(self) -> bool:
        """The query had words and nothing matched them: the latest sessions instead."""
        return bool(self.words) and not any(record.match for record in self.records)

    def label(self, window: Window | None) -> str:
        """A window as an answer names it ("since Mon 23 Nov"), "" for none."""
        return window.label(self.today) if window is not None else ""

    @overload
    def __getitem__(self, index: int) -> HandoffRecord: ...
    @overload
    def __getitem__(self, index: slice) -> list[HandoffRecord]: ...
    def __getitem__(self, index: int | slice) -> HandoffRecord | list[HandoffRecord]:
        return self.records[index]

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self) -> Iterator[HandoffRecord]:
        return iter(self.records)


class RecallDefaults(NamedTuple):
    """What a query takes from the settings where it says nothing: the settings model (core/api.py) and the
    light reader (`eywa get`) each give these, and `query_handoffs` alone applies them."""

    handoffs_dir: Path
    mode: str
    days_back: int | None
    max_handoffs: int
    zone: dt.tzinfo


def query_handoffs(conn: sqlite3.Connection, query: str | None, defaults: RecallDefaults, *,
                   days_back: int | None = None, max_results: int | None = None, project: str | None = None,
                   mode: str | None = None, offset: int = 0, agent: str | None = None, machine: str | None = None,
                   asked_on: dt.date | None = None) -> Results:
    """The best handoffs for `query` with `defaults` filling what is not given (`asked_on`: the day the query
    was first asked, for its next pages; default today in the settings' zone)."""
    return _ranked_records(conn, query, handoffs_dir=defaults.handoffs_dir, mode=mode or defaults.mode,
                          today=asked_on or now().astimezone(defaults.zone).date(),
                          days_back=days_back or defaults.days_back, max_results=max_results or defaults.max_handoffs,
                          project=project, offset=offset, agent=agent, machine=machine)


def _ranked_records(conn: sqlite3.Connection, query: str | None, *, handoffs_dir: Path, mode: str,
                   today: dt.date, days_back: int | None, max_results: int, project: str | None = None,
                   offset: int = 0, agent: str | None = None, machine: str | None = None) -> Results:
    """The best handoffs for `query`, best first; the most recent ones without words, or when none match.

    Time words in the query ("last week", "in March", core/retrieval/time_words.py), counted from `today`, rank
    the sessions of those days first; without other words, they are the days listed. `days_back` and a
    leading "7d" keep the sessions of the last N days alone.
    """
    from eywa.core.retrieval.scorer import rank

    asked = understood((query or "")[:MAX_QUERY_CHARS], today)
    within = _both(asked.only, last_days(days_back, today) if days_back else None)
    named = asked.only is not None
    words = asked.words if tokenize_query(asked.words) else ""
    first = asked.first if words else None
    missed = None

    def ranked(days: Window | None, count: int = max_results, skip: int = offset) -> list:
        return rank(conn, words or None, mode=cast("Mode", mode), now=today, since=days.since if days else None,
                    until=days.until if days else None, prefer=first, days_back=days_back,
                    max_results=count, project=project, offset=skip, agent=agent, machine=machine)

    if words or asked.first is None:
        hits = ranked(within)
    else:  # a listing of the days the time words name ("what did I do yesterday")
        days = _both(within, asked.first)
        hits = ranked(days)
        if hits or (offset and ranked(days, 1, 0)):
            within, named = days, True
        else:  # those days hold no session: the latest ones, said so
            missed = asked.first
            hits = ranked(within)
    rows = handoffs_by_id(conn, [hit.session_id for hit in hits])
    return Results([record_from_row(rows[hit.session_id], handoffs_dir, hit.score, hit.match) for hit in hits],
                   words=words, today=today, within=within, asked=named, first=first, missed=missed,
                   machines=machine_count(conn))


def _both(one: Window | None, other: Window | None) -> Window | None:
    return one & other if one is not None and other is not None else one or other


def session_line(record: HandoffRecord, machines: int = 1) -> str:
    """What names a session so that `eywa show` and `eywa continue` can follow it: the short id, the date,
    the projects, the agent, and the machine when the index holds several."""
    parts = [f"session {record.short_id}", record.date.isoformat(), ", ".join(record.projects) or "no project",
             record.agent]
    if machines > 1 and record.machine:
        parts.append(record.machine)
    return " · ".join(parts)


def format_handoffs(results: Results) -> str:
    """The text of `eywa get` and the MCP tool: a header, then per handoff the line that names it and its body
    without front matter, joined by `---`; when nothing matches the words, that in one line, then the latest
    sessions one line each."""
    within = f" {results.label(results.within)}" if results.within else ""
    if not results.records:
        return f"## Eywa: 0 past sessions{within}\n\nNo sessions{within} to show.\n"
    if results.no_match:
        lines = [f"## Eywa: nothing matches \"{results.words}\"{within}", "", "no match; the latest sessions:", ""]
        lines += [f"{session_line(r, results.machines)} · {r.headline}" for r in results.records]
        return "\n".join(lines) + "\n"
    count = len(results.records)
    header = f"## Eywa: {count} past session{'s' if count != 1 else ''}{within}"
    if results.first is not None:
        header += f", those {results.label(results.first)} first"
    if results.missed is not None:
        header += f"\n\nNo sessions {results.label(results.missed)}; the latest instead:"
    return header + "\n\n" + "\n\n---\n\n".join(
        f"{session_line(r, results.machines)}\n{r.body.strip()}" for r in results.records) + "\n"
