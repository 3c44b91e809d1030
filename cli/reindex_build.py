"""`eywa reindex`'s last step: the full-text index built from the rows the reindex committed, by a program that
imports little beside SQLite and tantivy. The reindex replaces itself with it (`os.execv`: the same process, its
output and exit code the command's), so the build's memory is not added to what the reindex held before it (the
modules of the whole command line, the allocator's free blocks; bench/RESULTS.md, issue 29). A child process would
not do: its parent's memory would still count. A build that fails or is stopped leaves the store as a crash does:
the rows are committed, and the next store opened builds the full-text index from them."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NoReturn

from eywa.cli.terminal import flushed, reported

_MODULE = "eywa.cli.reindex_build"


def replace_process(db_path: Path, report: str) -> NoReturn:
    """Become this program for the index at `db_path`: it builds the full-text index, then prints `report`."""
    sys.stdout.flush()
    sys.stderr.flush()
    # -P: the working folder stays off the module path, as it is for the installed `eywa`.
    os.execv(sys.executable, [sys.executable, "-P", "-m", _MODULE, str(db_path), report])


def main(argv: list[str]) -> int:
    """The exit code of the build of the index at `argv[0]`, `argv[1]` printed once it is done."""
    db_path, report = Path(argv[0]), argv[1]

    def build() -> int:
        from eywa.core.index import text_index
        from eywa.core.ingest.allocator import bound_allocator

        bound_allocator()  # an exec starts with glibc's defaults again
        text_index.ensure_at(db_path)
        print(report)
        return 0

    return flushed(lambda: reported("eywa", build, db_path.parent))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
