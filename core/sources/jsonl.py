"""Streams the records of one JSONL transcript, of any agent, tolerating what real files contain.

An agent appends to a transcript while the session runs, and real files hold lines that are not
JSON, two records glued on one line, truncated last lines, non-object JSON and invalid UTF-8. Each
such line is skipped (or split and kept) and counted; none of them costs the rest of the file. A line
longer than MAX_LINE_BYTES is read past and counted, never held: memory stays bounded whatever the file.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import orjson

_DECODER = json.JSONDecoder()
# 16 times the real corpus's longest line; Claude Code caps tool output and image sizes far below.
MAX_LINE_BYTES = 16 * 1024 * 1024
# Most lines are long tool results: the default buffer would read them in pieces (bench/RESULTS.md).
_READ_BUFFER = 1024 * 1024


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
    oversized: int = 0
    bytes_read: int = 0
    unknown_types: dict[str, int] = field(default_factory=dict)
    unknown_fields: dict[str, int] = field(default_factory=dict)  # "type.field" -> records (builder.py)
    version: str = ""  # the CLI version that wrote the file (Claude Code's: its last record's `version`)

    @property
    def bad_lines(self) -> int:
        return self.not_json + self.non_object + self.multi_record + self.truncated_last + self.oversized


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
            values.append(_without_lone_surrogates(value))
        except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
            return None
    return values if len(values) > 1 else None


def open_transcript(path: Path, buffering: int = _READ_BUFFER) -> BinaryIO:
    """The file's bytes, decompressed as they are read when it is zstd (Codex's `.jsonl.zst`)."""
    if path.name.endswith(".zst"):
        import zstandard  # only for compressed transcripts

        return io.BufferedReader(_Decompressed(path.open("rb"), zstandard), buffering)
    return path.open("rb", buffering=buffering)


class _Decompressed(io.RawIOBase):
    """A zstd file of one or more frames (a writer appends frame by frame), read as one stream. Damage (a
    corrupt frame, or one cut short by a writer still at work) ends it, remembered in `damaged`."""

    def __init__(self, raw: BinaryIO, zstandard: object) -> None:
        self._raw, self._zstd = raw, zstandard
        self._frame = zstandard.ZstdDecompressor().decompressobj()  # type: ignore[attr-defined]
        self._pending = b""
        self._started = False  # the current frame has been fed bytes
        self.damaged = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        while not self._pending:
            chunk = self._raw.read(_READ_BUFFER)
            if not chunk:
                self.damaged = self.damaged or (self._started and not self._frame.eof)
                return 0
            try:
                self._pending = self._feed(chunk)
            except self._zstd.ZstdError:  # type: ignore[attr-defined]
                self.damaged = True
                return 0
        size = min(len(buffer), len(self._pending))
        buffer[:size] = self._pending[:size]
        self._pending = self._pending[size:]
        return size

    def _feed(self, chunk: bytes) -> bytes:
        out = []
        while chunk:
            self._started = True
            out.append(self._frame.decompress(chunk))
            if not self._frame.eof:
                break
            chunk = self._frame.unused_data  # the next frame begins in this chunk
            self._frame = self._zstd.ZstdDecompressor().decompressobj()  # type: ignore[attr-defined]
            self._started = False
        return b"".join(out)

    def close(self) -> None:
        self._raw.close()
        super().close()


def read_records(path: Path, stats: ReadStats | None = None,
                 decode: Callable[[bytes], object] = orjson.loads) -> Generator[dict, None, None]:
    """Yield each JSON object of the file in order. Never raises for bad content; OSError propagates.

    `decode` may read a line as less than all of it (core/sources/claude/records.py); a line it raises
    ValueError or RecursionError for is decoded whole, as with the default. (Invalid UTF-8 in a part
    it skips is then not seen: `invalid_utf8` does not count that line.)
    """
    stats = stats if stats is not None else ReadStats()
    with open_transcript(path) as handle:
        while raw := handle.readline(MAX_LINE_BYTES):
            stats.lines += 1
            stats.bytes_read += len(raw)
            complete = raw.endswith(b"\n")
            if not complete and len(raw) == MAX_LINE_BYTES:
                stats.oversized += 1
                stats.bytes_read += _read_past_line(handle)
                continue
            try:
                value = decode(raw)  # JSON allows the newline around it: no stripped copy of the line
            except (ValueError, RecursionError):  # orjson.JSONDecodeError is a ValueError
                line = raw.strip()  # also strips what orjson does not take for whitespace (\f, \v)
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
        if isinstance(raw_stream := getattr(handle, "raw", None), _Decompressed) and raw_stream.damaged:
            stats.not_json += 1  # the compressed rest of the file could not be read: one bad line


def first_record(path: Path) -> dict | None:
    """The file's first JSON object; None when it holds none or cannot be read (gone since it was found)."""
    try:
        with contextlib.closing(read_records(path)) as records:
            return next(records, None)
    except OSError:
        return None


def _read_past_line(handle: BinaryIO) -> int:
    """Skip the rest of the current line in bounded chunks; the number of bytes skipped."""
    skipped = 0
    while chunk := handle.readline(1024 * 1024):
        skipped += len(chunk)
        if chunk.endswith(b"\n"):
            break
    return skipped


def _without_lone_surrogates(value: object) -> object:
    """The value with its lone surrogates (from `\\ud800`-style escapes, which Python's parser accepts) made
    U+FFFD, so that every string can be encoded again; values with none come back unchanged."""
    text = json.dumps(value, ensure_ascii=False)
    clean = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return value if clean == text else json.loads(clean)


def _recover(line: bytes, complete: bool, stats: ReadStats) -> Iterator[dict]:
    """A line orjson rejected: invalid UTF-8, what only Python's parser accepts (lone surrogate escapes,
    NaN, integers past 64 bits), glued records, or junk. Too deep a nesting or an integer past Python's
    4300 digits (a ValueError) is junk, not a crash."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        stats.invalid_utf8 += 1
        text = line.decode("utf-8", errors="replace")
    try:
        value = _without_lone_surrogates(json.loads(text))
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
        value = None
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
        with open_transcript(path, io.DEFAULT_BUFFER_SIZE) as handle:
            for number, raw in enumerate(iter(lambda: handle.readline(MAX_LINE_BYTES), b"")):
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
