"""Rebuilds the index from the handoff files alone, and imports handoffs written by the original eywa-mcp."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

from eywa.core.archive.columns import FULLTEXT_VERSION, fulltext_columns
from eywa.core.handoffs.model import Handoff, atomic_write, handoff_from, handoff_relpath, split_front_matter
from eywa.core.index.store import Store
from eywa.core.ingest.allocator import bound_allocator


def _read(path: Path, problems: list[str]) -> tuple[Handoff, bool] | None:
    """(handoff, written by us) or None, noting why in `problems`."""
    try:
        text = path.read_text(encoding="utf-8")
        meta, body = split_front_matter(text)
        return handoff_from(meta, body, fallback_id=path.stem), "session_uuid" in meta
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        problems.append(f"{path}: {exc}")
        return None


def import_originals(store: Store, import_dir: Path, handoffs_dir: Path, problems: list[str]) -> int:
    """Copy the original's handoff files into our tree (names kept); ids already indexed are left alone."""
    if not import_dir.is_dir():
        raise FileNotFoundError(f"{import_dir} is not a folder of handoff files")
    imported = 0
    for path in markdown_files(import_dir):
        read = _read(path, problems)
        if read is None:
            continue
        handoff, _ = read
        target = handoffs_dir / handoff_relpath(handoff)
        if store.handoff_path(handoff.session_id) is not None or target.exists():
            continue
        atomic_write(target, path.read_text(encoding="utf-8"))
        imported += 1
    return imported


def markdown_files(folder: Path) -> Iterator[Path]:
    """The `.md` files under `folder`, folder by folder in name order, as they are found: a million handoffs
    are never listed at once."""
    if not folder.is_dir():
        return
    with os.scandir(folder) as found:
        entries = sorted(found, key=lambda entry: entry.name)
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            yield from markdown_files(Path(entry.path))
        elif entry.name.endswith(".md") and entry.is_file():
            yield Path(entry.path)


def reindex(store: Store, handoffs_dir: Path, archive_dir: Path, import_dir: Path | None = None, *,
            build_text_index: bool = True) -> tuple[int, int, list[str]]:
    """(handoffs indexed, files imported, problems). The rebuild is one transaction: all or nothing. The files
    are read one at a time, so memory stays the same for any number of them. `build_text_index` False leaves the
    full-text index to be built from the committed rows by the next `text_index.ensure` (`Store.rebuilding`)."""
    bound_allocator()  # the full-text index's indexing and merging threads would each keep an arena of their own
    problems: list[str] = []
    imported = import_originals(store, import_dir, handoffs_dir, problems) if import_dir else 0
    with store.rebuilding(build_text_index=build_text_index) as rebuild:
        for path in markdown_files(handoffs_dir):
            read = _read(path, problems)
            if read is None:
                continue
            handoff, ours = read
            # Two files for one session (a crash between writing the new day's file and removing the old):
            # the later day wins.
            previous = rebuild.date_of(handoff.session_id)
            if previous is not None and handoff.date.isoformat() <= previous:
                continue
            relpath = path.relative_to(handoffs_dir).as_posix()
            archive = archive_dir / relpath
            transcript = archive.read_text(encoding="utf-8") if archive.is_file() else ""
            rebuild.add(handoff, path=relpath, archive_path=relpath if transcript else "", transcript=transcript,
                        origin="extracted" if ours else "imported", extractor="" if ours else "eywa-mcp")
        store.set_meta("fulltext_version", FULLTEXT_VERSION)
    return store.handoff_count(), imported, problems


def refresh_fulltext(store: Store, archive_dir: Path, batch_seconds: float = 1.0) -> int:
    """Split every handoff's archived markdown into full-text columns again when the index was built by
    an older `fulltext_columns` (FULLTEXT_VERSION); the number of handoffs refreshed. In transactions of
    about `batch_seconds`, as ingest's, so other writers never wait long; the version is written with the
    last, so an interrupted refresh starts over on the next run."""
    if store.get_meta("fulltext_version") == FULLTEXT_VERSION:
        return 0
    rows = store.archived_handoffs()
    refreshed = done = 0
    while True:
        began = time.perf_counter()
        with store.transaction():
            while done < len(rows):
                row = rows[done]
                done += 1
                archive = archive_dir / row.archive_path
                if archive.is_file():  # else the archive was pruned: the columns split before stay
                    store.put_columns(row.rowid, fulltext_columns(archive.read_text(encoding="utf-8")))
                    refreshed += 1
                if time.perf_counter() - began >= batch_seconds:
                    break
            if done == len(rows):
                store.set_meta("fulltext_version", FULLTEXT_VERSION)
                return refreshed
