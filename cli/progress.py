"""A progress bar for long commands: tqdm on a terminal, nothing when output is piped."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
Progress = Callable[[int, int, str], None]


def with_progress_bar(mode: str, unit: str, run: Callable[[Progress], T]) -> T:
    """Call `run(progress)`; `mode` is auto (a bar only on a terminal), always or never."""
    bar = None
    if mode == "always" or (mode == "auto" and sys.stderr.isatty()):
        from tqdm import tqdm

        # No monitor thread: ingest starts its worker processes only from a single-threaded process
        # (core/ingest/prepare.py), and the bar is updated by hand anyway.
        tqdm.monitor_interval = 0
        bar = tqdm(total=0, unit=unit, file=sys.stderr, dynamic_ncols=True, leave=False)

    def progress(done: int, total: int, label: str) -> None:
        if bar is not None:
            bar.total = total
            bar.set_postfix_str(label[:12], refresh=False)
            bar.update(done - bar.n)
            if done == total:  # a run shorter than tqdm's refresh interval still shows where it ended
                bar.refresh()

    try:
        return run(progress)
    finally:
        if bar is not None:
            bar.close()
