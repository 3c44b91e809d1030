"""Files only their owner can read: Eywa's data directory is 0700 and every file in it 0600 whatever the
umask, and the config file that holds a token is written 0600. Every writer of a private file or folder
goes through here (the data directory, `eywa-bot setup`'s config file), so there is one rule and one warning.

The process's umask is narrowed to 077 once the data directory is opened: SQLite's -wal and -shm files,
tantivy's segments and every temporary file are then created private too, by code that takes no mode.
"""

from __future__ import annotations

import logging
import os
import stat
import tempfile
from pathlib import Path

log = logging.getLogger("eywa")

PRIVATE_UMASK = 0o077
DIR_MODE = 0o700
FILE_MODE = 0o600
_warned: set[Path] = set()  # folders and files already warned about by this process


def narrow_umask() -> None:
    """Group and others lose every permission on what this process creates from now on (never widened)."""
    os.umask(os.umask(PRIVATE_UMASK) | PRIVATE_UMASK)


def private_dir(path: Path) -> Path:
    """`path` (and missing parents) created 0700; the umask narrowed. An existing folder is left as it is."""
    narrow_umask()
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    return path


def open_data_dir(data_dir: Path) -> Path:
    """The data directory, created 0700; a wider existing one is named in a warning, once per process."""
    existed = data_dir.is_dir()
    private_dir(data_dir)
    if existed:
        warn_if_shared(data_dir, "Eywa's data directory")
    return data_dir


def shared_bits(path: Path) -> int:
    """The permission bits `path` gives its group and others (0: private, or gone)."""
    try:
        return stat.S_IMODE(path.stat().st_mode) & 0o077
    except OSError:
        return 0


def warn_if_shared(path: Path, what: str) -> bool:
    """Log a warning when `path` is readable or writable by other users; once per path and process."""
    bits = shared_bits(path)
    if not bits or path in _warned:
        return False
    _warned.add(path)
    mode = stat.S_IMODE(path.stat().st_mode)
    private = DIR_MODE if path.is_dir() else FILE_MODE
    log.warning("%s %s is mode %o: other users of this machine can read it; `chmod %o %s` makes it private",
                what, path, mode, private, path)
    return True


def write_private(path: Path, data: bytes | str) -> None:
    """Write `path` atomically (a temporary file in its folder, renamed), mode 0600 whatever the umask and
    whatever mode an older file had: for config files holding a token, and for any file Eywa keeps private."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)  # 0600
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
        os.chmod(temporary, FILE_MODE)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
