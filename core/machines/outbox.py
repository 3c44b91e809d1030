"""A spoke's outbox: the redacted copies of its transcripts that `eywa push` sends, so nothing raw leaves
the machine.

`<data_dir>/push/<machine>/<kind>/...` mirrors what travels of each agent folder (laid out as on the spoke),
each file redacted by the same redactor as ingest (core/redaction/copies.py). A JSONL transcript is copied
line by line and only whole lines: a line still being written waits for its newline, and an append to the
transcript becomes an append to its copy, so rsync's `--append-verify` still sends only the new bytes. A file
that shrank, was rewritten (its last copied bytes changed, or it is a new file at the same name), is not
JSONL (Gemini CLI's older `.json` chats, a `.meta.json`) or is compressed (Codex's `.jsonl.zst`) is copied
again whole, atomically, and listed as `unsent` until a push has sent it whole. A transcript deleted here
loses its copy (the hub keeps its own). New redaction rules copy everything again.

What each copy was made from is in `<data_dir>/push/<machine>.outbox.json`, written after the copies: a copy
that does not match it (a push killed while copying) is made again whole.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import msgspec

from eywa.core.config.private_files import private_dir, write_private
from eywa.core.redaction.copies import complete_lines, is_lines, redact_line, redacted_bytes, write_atomically
from eywa.core.redaction.scrubber import Redactor
from eywa.core.sources import agent
from eywa.core.sources.plugin import SourceFile

TEMPORARY_SUFFIX = ".eywa-tmp"  # a copy being written (core/redaction/copies.py): never sent
_TAIL = 64  # bytes before the end of what was copied, compared on an append: a rewrite changes them


class Copied(msgspec.Struct, array_like=True):
    """One transcript's copy: the transcript as it was copied, and the copy as it was left."""

    size: int
    mtime_ns: int
    inode: int
    consumed: int  # bytes of the transcript in the copy: up to its last newline (JSONL), else all
    tail: str  # hex of the last bytes of those
    copy_size: int
    copy_mtime_ns: int


class OutboxState(msgspec.Struct):
    rules: str = ""  # the redaction rules the copies were made under (Redactor.rules)
    files: dict[str, Copied] = {}  # "<kind>/<path in the agent folder>" -> its copy
    unsent: list[str] = []  # copies made whole since the last push that sent them: sent whole, not appended


@dataclass
class OutboxReport:
    appended: int = 0
    copied: int = 0  # made whole
    removed: int = 0
    bytes_read: int = 0


def _load(path: Path) -> OutboxState:
    try:
        return msgspec.json.decode(path.read_bytes(), type=OutboxState)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return OutboxState()


def save_state(path: Path, state: OutboxState) -> None:
    write_private(path, msgspec.json.encode(state))


def state_path(outbox: Path) -> Path:
    return outbox.with_name(outbox.name + ".outbox.json")


def sync(folders: list[tuple[str, Path]], outbox: Path, redactor: Redactor,
         leave_out: Callable[[SourceFile], bool] | None = None) -> tuple[OutboxState, OutboxReport]:
    """Bring the outbox's copies up to date with what travels of the agent folders `(kind, folder)` (each
    agent's `travelling`); `leave_out(transcript)` names transcripts that must not travel (sessions forgotten
    here). The state, saved, and what was done."""
    private_dir(outbox)
    saved = state_path(outbox)
    state = _load(saved)
    if state.rules != redactor.rules:  # new rules: every copy made again
        state = OutboxState(rules=redactor.rules, files={}, unsent=list(state.unsent))
    report = OutboxReport()
    seen: set[str] = set()
    unsent = dict.fromkeys(state.unsent)
    for kind, folder in folders:
        for rel, transcript in agent(kind).travelling(folder):
            if leave_out is not None and leave_out(transcript):
                continue
            key = f"{kind}/{rel}"
            copied, whole = _copy(folder / rel, outbox / kind / rel, state.files.get(key), redactor, report)
            if copied is None:
                continue  # vanished while being looked at
            seen.add(key)
            state.files[key] = copied
            if whole:
                unsent[key] = None
    for key in [key for key in state.files if key not in seen]:
        (outbox / key).unlink(missing_ok=True)
        del state.files[key]
        unsent.pop(key, None)
        report.removed += 1
    state.unsent = [key for key in unsent if key in state.files]
    save_state(saved, state)
    return state, report


def _copy(source: Path, copy: Path, old: Copied | None, redactor: Redactor,
          report: OutboxReport) -> tuple[Copied | None, bool]:
    """The copy of `source` brought up to date (None: the transcript is gone), and whether it was made whole."""
    try:
        stat = source.stat()
    except FileNotFoundError:
        return None, False
    try:
        copy_stat = copy.stat()
    except FileNotFoundError:
        copy_stat = None
    intact = old is not None and copy_stat is not None and \
        (copy_stat.st_size, copy_stat.st_mtime_ns) == (old.copy_size, old.copy_mtime_ns)
    if old is not None and intact:
        if (stat.st_size, stat.st_mtime_ns, stat.st_ino) == (old.size, old.mtime_ns, old.inode):
            return old, False
        if _plain_lines(source) and stat.st_ino == old.inode and stat.st_size >= old.consumed:
            appended = _append(source, copy, old, stat, redactor, report)
            if appended is not None:
                return appended, False
    try:
        return _whole(source, copy, stat, redactor, report), True
    except FileNotFoundError:
        return None, False


def _plain_lines(path: Path) -> bool:
    return is_lines(path.name) and not path.name.endswith(".zst")


def _tail(path: Path, end: int) -> str:
    with path.open("rb") as handle:
        handle.seek(max(0, end - _TAIL))
        return handle.read(min(end, _TAIL)).hex()


def _append(source: Path, copy: Path, old: Copied, stat: os.stat_result, redactor: Redactor,
            report: OutboxReport) -> Copied | None:
    """The new whole lines of `source` redacted onto the end of its copy; None when the transcript was
    rewritten under its name (the bytes before the new ones changed)."""
    with source.open("rb") as handle:
        handle.seek(max(0, old.consumed - _TAIL))
        if handle.read(min(old.consumed, _TAIL)).hex() != old.tail:
            return None
        consumed = old.consumed
        pieces = []
        for line in complete_lines(handle):
            consumed += len(line)
            pieces.append(redact_line(line, redactor))
    report.bytes_read += consumed - old.consumed
    if pieces:
        with copy.open("ab") as out:
            out.write(b"".join(pieces))
        report.appended += 1
    copy_stat = copy.stat()
    return Copied(stat.st_size, stat.st_mtime_ns, stat.st_ino, consumed, _tail(source, consumed),
                  copy_stat.st_size, copy_stat.st_mtime_ns)


def _whole(source: Path, copy: Path, stat: os.stat_result, redactor: Redactor, report: OutboxReport) -> Copied:
    if _plain_lines(source):
        consumed, pieces = 0, []
        with source.open("rb") as handle:
            for line in complete_lines(handle):
                consumed += len(line)
                pieces.append(redact_line(line, redactor))
        data, tail = b"".join(pieces), _tail(source, consumed)
    else:
        data, consumed, tail = redacted_bytes(source, redactor), stat.st_size, ""
    private_dir(copy.parent)
    write_atomically(copy, data)
    report.copied += 1
    report.bytes_read += consumed
    copy_stat = copy.stat()
    # `consumed` is what was read, not the size seen before reading: the next append starts there.
    return Copied(stat.st_size, stat.st_mtime_ns, stat.st_ino, consumed, tail, copy_stat.st_size,
                  copy_stat.st_mtime_ns)
