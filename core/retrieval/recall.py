"""The read side of retrieval: ranked handoff records and the original's output format.

Kept free of pydantic and the settings model, so that `eywa get` can answer from a light start-up
(see `eywa.cli.main`): a user waits on that command, and the settings model's imports are slow (bench/RESULTS.md).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from eywa.core.index.readonly import HandoffRow, handoffs_by_id

if TYPE_CHECKING:
    import sqlite3

MAX_QUERY_CHARS = 500  # a longer query is cut: nobody types more, and each word costs a lookup


@dataclass
class HandoffRecord:
    session_uuid: str
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

    def to_json(self) -> dict[str, object]:
        return {
            "session_id": self.session_uuid,
            "short_id": self.short_id,
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


def record_from_row(row: HandoffRow, handoffs_dir: Path, score: float = 0.0) -> HandoffRecord:
    return HandoffRecord(
        session_uuid=row.session_uuid, short_id=row.short_id, date=dt.date.fromisoformat(row.date),
        headline=row.headline, projects=orjson.loads(row.projects), keywords=orjson.loads(row.keywords),
        substance=row.substance, duration_min=row.duration_min, model=row.model, body=row.body,
        path=handoffs_dir / row.path, agent=row.agent, machine=row.machine, score=score,
    )


def ranked_records(conn: sqlite3.Connection, query: str | None, *, handoffs_dir: Path, mode: str,
                   today: dt.date, days_back: int, max_results: int, project: str | None = None,
                   offset: int = 0, agent: str | None = None, machine: str | None = None) -> list[HandoffRecord]:
    """The best handoffs for `query` (or the most recent ones without a query), best first."""
    from eywa.core.retrieval.scorer import rank

    hits = rank(conn, (query or "")[:MAX_QUERY_CHARS] or None, mode=mode, now=today, days_back=days_back,
                max_results=max_results, project=project, offset=offset, agent=agent, machine=machine)
    rows = handoffs_by_id(conn, [hit.session_uuid for hit in hits])
    return [record_from_row(rows[hit.session_uuid], handoffs_dir, hit.score) for hit in hits]


def format_handoffs(records: list[HandoffRecord]) -> str:
    """The original eywa-mcp's output: a header, then each body without front matter, joined by `---`."""
    header = f"## Eywa: {len(records)} past session{'s' if len(records) != 1 else ''}"
    if not records:
        return header + "\n\nNo matching handoffs.\n"
    return header + "\n\n" + "\n\n---\n\n".join(r.body.strip() for r in records) + "\n"
