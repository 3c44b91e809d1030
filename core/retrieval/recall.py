"""The read side of retrieval: ranked handoff records and the original's output format.

Kept free of pydantic and the settings model, so that `eywa get` can answer from a light start-up
(see `eywa.cli.main`): a user waits on that command, and the settings model's imports are slow (bench/RESULTS.md).
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import orjson

MAX_QUERY_CHARS = 500  # a longer query is cut: nobody types more, and each word costs a lookup
COLUMNS = ("session_uuid, short_id, date, headline, projects, keywords, substance, duration_min, model, body, path,"
           " agent, machine")


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


def record_from_row(row: tuple, handoffs_dir: Path, score: float = 0.0) -> HandoffRecord:
    """A record from a row of `SELECT {COLUMNS} FROM handoffs`."""
    return HandoffRecord(
        session_uuid=row[0], short_id=row[1], date=dt.date.fromisoformat(row[2]), headline=row[3],
        projects=orjson.loads(row[4]), keywords=orjson.loads(row[5]), substance=row[6],
        duration_min=row[7], model=row[8], body=row[9], path=handoffs_dir / row[10], agent=row[11],
        machine=row[12], score=score,
    )


def fetch_records(conn: sqlite3.Connection, ids: list[str], handoffs_dir: Path) -> dict[str, HandoffRecord]:
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = conn.execute(f"SELECT {COLUMNS} FROM handoffs WHERE session_uuid IN ({marks})", ids).fetchall()
    return {row[0]: record_from_row(row, handoffs_dir) for row in rows}


def ranked_records(conn: sqlite3.Connection, query: str | None, *, handoffs_dir: Path, mode: str,
                   today: dt.date, days_back: int, max_results: int, project: str | None = None,
                   offset: int = 0, agent: str | None = None, machine: str | None = None) -> list[HandoffRecord]:
    """The best handoffs for `query` (or the most recent ones without a query), best first."""
    from eywa.core.retrieval.scorer import rank

    hits = rank(conn, (query or "")[:MAX_QUERY_CHARS] or None, mode=mode, now=today, days_back=days_back,
                max_results=max_results, project=project, offset=offset, agent=agent, machine=machine)
    records = fetch_records(conn, [hit.session_uuid for hit in hits], handoffs_dir)
    result = []
    for hit in hits:
        record = records[hit.session_uuid]
        record.score = hit.score
        result.append(record)
    return result


def format_handoffs(records: list[HandoffRecord]) -> str:
    """The original eywa-mcp's output: a header, then each body without front matter, joined by `---`."""
    header = f"## Eywa: {len(records)} past session{'s' if len(records) != 1 else ''}"
    if not records:
        return header + "\n\nNo matching handoffs.\n"
    return header + "\n\n" + "\n\n---\n\n".join(r.body.strip() for r in records) + "\n"
