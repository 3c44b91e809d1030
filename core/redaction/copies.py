"""Redacted copies of transcript files, for the places where a transcript itself is kept away from its
agent: a spoke's outbox (core/machines/outbox.py) and the hub's spoke folders.

A JSONL file is redacted line by line, so that an append to the transcript stays an append to its copy: a
line with no trigger word is copied byte for byte; any other is decoded and each of its strings (keys too)
passes the redactor, as ingest passes them, then is encoded again, so it stays valid JSON. A line that is
not JSON is redacted as text. A whole-JSON file (Gemini CLI's older chats, a subagent's `.meta.json`) is
redacted the same way as one document, a zstd one (Codex's `.jsonl.zst`) line by line inside, anything
else as text.
"""

from __future__ import annotations

import io
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from eywa.core.redaction.scrubber import Redactor

# \u0040 and the like: an ASCII character a JSON writer chose to escape could hide a trigger from the raw line.
_ESCAPED_ASCII = re.compile(rb"\\u00[2-7][0-9a-fA-F]")
_CHUNK = 1 << 20


def _redact_value(value: Any, redact: Callable[[str], str]) -> tuple[Any, bool]:
    """`value` with every string in it redacted; whether anything changed."""
    if isinstance(value, str):
        redacted = redact(value)
        return redacted, redacted is not value and redacted != value
    if isinstance(value, list):
        changed = False
        items = []
        for item in value:
            new, moved = _redact_value(item, redact)
            items.append(new)
            changed = changed or moved
        return (items, True) if changed else (value, False)
    if isinstance(value, dict):
        changed = False
        pairs = {}
        for key, item in value.items():
            new_key, moved_key = _redact_value(key, redact)
            new, moved = _redact_value(item, redact)
            pairs[new_key] = new
            changed = changed or moved or moved_key
        return (pairs, True) if changed else (value, False)
    return value, False


def _redact_text(data: bytes, redactor: Redactor) -> bytes:
    text = data.decode("utf-8", "surrogateescape")
    redacted = redactor.redact(text)
    return data if redacted is text or redacted == text else redacted.encode("utf-8", "surrogateescape")


def redact_line(line: bytes, redactor: Redactor) -> bytes:
    """One JSONL line (its line ending kept) with its secrets replaced; the same object when it has none."""
    body = line.rstrip(b"\r\n")
    if not redactor.might_redact(body.decode("utf-8", "surrogateescape")) and not _ESCAPED_ASCII.search(body):
        return line
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:  # not JSON (a damaged line): redacted as text, still skipped by readers
        redacted = _redact_text(body, redactor)
        return line if redacted is body else redacted + line[len(body):]
    new, changed = _redact_value(value, redactor.redact)
    return orjson.dumps(new) + line[len(body):] if changed else line


def redact_document(data: bytes, redactor: Redactor) -> bytes:
    """A whole JSON file (or, when it is not JSON, a text file) with its secrets replaced."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return _redact_text(data, redactor)
    new, changed = _redact_value(value, redactor.redact)
    return orjson.dumps(new, option=orjson.OPT_INDENT_2) if changed else data


def redact_json(text: str, redactor: Redactor) -> str:
    """A JSON text (a stored answer, say) with its secrets replaced, compact; as it was when it has none."""
    if not redactor.might_redact(text):
        return text
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return redactor.redact(text)
    new, changed = _redact_value(value, redactor.redact)
    return orjson.dumps(new).decode() if changed else text


def complete_lines(handle: BinaryIO) -> Iterator[bytes]:
    """The lines of `handle` that end with a newline, from where it stands; a last line still being written
    (no newline yet) is left for later."""
    for line in handle:
        if not line.endswith(b"\n"):
            return
        yield line


def is_lines(name: str) -> bool:
    return name.endswith((".jsonl", ".jsonl.zst"))


def redacted_bytes(path: Path, redactor: Redactor, *, whole_lines_only: bool = False) -> bytes:
    """The redacted content of a transcript file, by its kind (see the module docstring); with
    `whole_lines_only`, a JSONL file's unfinished last line is left out."""
    name = path.name
    if name.endswith(".zst"):
        import zstandard

        from eywa.core.sources.jsonl import open_transcript

        with open_transcript(path) as handle:
            lines = complete_lines(handle) if whole_lines_only else handle
            plain = b"".join(redact_line(line, redactor) for line in lines)
        return zstandard.ZstdCompressor().compress(plain)
    if is_lines(name):
        with path.open("rb") as handle:
            lines = complete_lines(handle) if whole_lines_only else handle
            return b"".join(redact_line(line, redactor) for line in lines)
    data = path.read_bytes()
    return redact_document(data, redactor) if name.endswith(".json") else _redact_text(data, redactor)


def write_atomically(path: Path, data: bytes, mtime_ns: int | None = None) -> None:
    """`path` replaced by `data` through a temporary `.<name>.<random>.eywa-tmp` in its folder (mode 0600)."""
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".eywa-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if mtime_ns is not None:
            os.utime(temporary, ns=(mtime_ns, mtime_ns))
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def redact_in_place(path: Path, redactor: Redactor) -> bool:
    """Redact a kept copy where it lies, atomically, its mtime kept; whether it held anything to redact."""
    try:
        stat = path.stat()
        data = redacted_bytes(path, redactor)
    except FileNotFoundError:
        return False
    if not path.name.endswith(".zst"):
        with path.open("rb") as handle:
            if _same(handle, data):
                return False
    elif _decompressed(path) == _decompressed_bytes(data):
        return False
    write_atomically(path, data, stat.st_mtime_ns)
    return True


def _same(handle: BinaryIO, data: bytes) -> bool:
    view = memoryview(data)
    at = 0
    while chunk := handle.read(_CHUNK):
        if view[at : at + len(chunk)] != chunk:
            return False
        at += len(chunk)
    return at == len(data)


def _decompressed(path: Path) -> bytes:
    from eywa.core.sources.jsonl import open_transcript

    with open_transcript(path) as handle:
        return handle.read()


def _decompressed_bytes(data: bytes) -> bytes:
    import zstandard

    return zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True).read()
