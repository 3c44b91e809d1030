"""One plain sentence for what the machine did to the data directory: a full disk, a read-only or
unwritable folder, an index another process kept locked. Every front end (CLI, bot, MCP) shows this
instead of a traceback or SQLite's terse wording: `storage_faults` turns what SQLite raises into a StoreError."""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from eywa.core.errors import StoreError

_FULL_ERRNOS = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}
_SETTING = "set data_dir (or EYWA_DATA_DIR) to another folder"
_INDEX_FAILED = "the index in {data_dir} failed ({exc}): `eywa reindex` rebuilds it from the handoff files"


@contextlib.contextmanager
def storage_faults(data_dir: Path, *, otherwise: str = _INDEX_FAILED) -> Iterator[None]:
    """Inside it, any SQLite error, and an OS fault of the data directory, is raised as a StoreError that
    says what to do (`otherwise`, formatted with `data_dir` and `exc`, for an SQLite error `describe` does
    not know); other OS errors (a transcript or config file) pass as they are."""
    try:
        yield
    except sqlite3.Error as exc:
        raise StoreError(describe(exc, data_dir) or otherwise.format(data_dir=data_dir, exc=exc)) from exc
    except OSError as exc:
        message = describe(exc, data_dir)
        if message is None:
            raise
        raise StoreError(message) from exc


def describe(exc: BaseException, data_dir: Path) -> str | None:
    """The message for a storage fault under `data_dir`, or None when `exc` is something else."""
    if isinstance(exc, sqlite3.Error):
        return _sqlite(str(exc).lower(), data_dir)
    if not isinstance(exc, OSError):
        return None
    if exc.errno in _FULL_ERRNOS:
        return _full(data_dir)
    if exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
        return None
    if exc.filename is not None and not _inside(Path(exc.filename), data_dir):
        return None  # a transcript or config file: not the data directory's fault
    return _read_only(data_dir) if exc.errno == errno.EROFS else _denied(exc.filename or data_dir, data_dir)


def _full(data_dir: Path) -> str:
    return (f"the disk holding the data directory {data_dir} is full: free some space and run it again "
            "(what was indexed before is kept)")


def _read_only(data_dir: Path) -> str:
    return f"the data directory {data_dir} is on a read-only file system: eywa writes its index there; {_SETTING}"


def _denied(path: str | os.PathLike[str], data_dir: Path) -> str:
    return f"permission denied on {path}: make the data directory {data_dir} writable by this user, or {_SETTING}"


def _sqlite(text: str, data_dir: Path) -> str | None:
    if "disk is full" in text or ("i/o error" in text and _out_of_space(data_dir)):
        return _full(data_dir)  # a full disk while opening the index shows as an I/O error
    if "locked" in text or "busy" in text:
        return (f"the index in {data_dir} stayed locked by another eywa process (an ingest, a reindex): "
                "try again in a minute")
    if "readonly" in text or "read-only" in text or "unable to open" in text:
        return _unwritable(data_dir)
    return None


def _unwritable(data_dir: Path) -> str | None:
    """Why SQLite could not open or write the index, when the folder or file says so."""
    for path in (data_dir, data_dir / "index.sqlite3"):
        if path.exists() and not os.access(path, os.W_OK):
            if _read_only_mount(path):
                return _read_only(data_dir)
            return _denied(path, data_dir)
    return None


def _out_of_space(path: Path) -> bool:
    try:
        info = os.statvfs(path)
    except OSError:
        return False
    return info.f_bavail * info.f_frsize < 1 << 20


def _read_only_mount(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _inside(path: Path, folder: Path) -> bool:
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except OSError:
        return False
