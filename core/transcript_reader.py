"""Streams the records of one JSONL transcript, tolerating what real files contain.

Claude Code appends to a transcript while the session runs, and real files hold lines that are not
JSON, two records glued on one line, truncated last lines, non-object JSON and invalid UTF-8. Each
such line is skipped (or split and kept) and counted; none of them costs the rest of the file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import orjson

_DECODER = json.JSONDecoder()


@dataclass
class ReadStats:
    """What reading one file found. `bad_lines` counts every line that was not exactly one JSON object."""

    lines: int = 0
    records: int = 0
    not_json: int = 0
    non_object: int = 0
    multi_record: int = 0
    truncated_last: int = 0
    invalid_utf8: int = 0
    bytes_read: int = 0
    unknown_types: dict[str, int] = field(default_factory=dict)

    @property
    def bad_lines(self) -> int:
        return self.not_json + self.non_object + self.multi_record + self.truncated_last


def _split_glued(text: str) -> list[object] | None:
    """Two or more JSON values written on one line with nothing between them; None if it is not that."""
    values: list[object] = []
    pos, end = 0, len(text)
    while pos < end:
        while pos < end and text[pos].isspace():
            pos += 1
        if pos >= end:
            break
        try:
            value, pos = _DECODER.raw_decode(text, pos)
        except json.JSONDecodeError:
            return None
        values.append(value)
    return values if len(values) > 1 else None


def read_records(path: Path, stats: ReadStats | None = None) -> Iterator[dict]:
    """Yield each JSON object of the file in order. Never raises for bad content; OSError propagates."""
    stats = stats if stats is not None else ReadStats()
    with path.open("rb") as handle:
        for raw in handle:
            stats.lines += 1
            stats.bytes_read += len(raw)
            complete = raw.endswith(b"\n")
            line = raw.strip()
            if not line:
                continue
            try:
                value = orjson.loads(line)
            except orjson.JSONDecodeError:
                yield from _recover(line, complete, stats)
                continue
            if isinstance(value, dict):
                stats.records += 1
                yield value
            else:
                stats.non_object += 1


def _recover(line: bytes, complete: bool, stats: ReadStats) -> Iterator[dict]:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        stats.invalid_utf8 += 1
        text = line.decode("utf-8", errors="replace")
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = None
        else:
            if isinstance(value, dict):
                stats.records += 1
                yield value
                return
    glued = _split_glued(text)
    if glued is not None:
        stats.multi_record += 1
        for value in glued:
            if isinstance(value, dict):
                stats.records += 1
                yield value
        return
    if not complete:
        # The writer was still appending when we read: the tail will be whole next time.
        stats.truncated_last += 1
    else:
        stats.not_json += 1


def peek_fields(path: Path, names: tuple[str, ...], max_lines: int = 50) -> dict[str, str]:
    """The first value of each named top-level field within the first lines (cheap: for grouping files)."""
    found: dict[str, str] = {}
    try:
        with path.open("rb") as handle:
            for number, raw in enumerate(handle):
                if number >= max_lines or len(found) == len(names):
                    break
                try:
                    value = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    continue
                if not isinstance(value, dict):
                    continue
                for name in names:
                    item = value.get(name)
                    if name not in found and isinstance(item, str) and item:
                        found[name] = item
    except OSError:
        pass
    return found
