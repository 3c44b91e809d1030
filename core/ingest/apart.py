"""A step run in a forked child process, for the memory it needs: what it allocates is returned to the system when
the child ends, so the process that goes on (and the workers it forks later) never holds it."""

from __future__ import annotations

import gc
import multiprocessing
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def can_fork() -> bool:
    """Forking a threaded process (the bot's ingest thread) can copy a lock another thread holds."""
    return threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods()


def apart(step: Callable[..., T], *args: object) -> T:
    """`step(*args)` in a forked child (in this process when forking is not safe); its result or its exception."""
    if not can_fork():
        return step(*args)
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_run, args=(step, args, sender), daemon=True)
    # Frozen, what the child inherits is never visited by its collector: those pages stay shared, not copied.
    gc.freeze()
    try:
        child.start()
    finally:
        gc.unfreeze()
    sender.close()
    try:
        ok, result = receiver.recv()
    except EOFError:
        child.join()
        raise RuntimeError(f"ingest's {step.__name__} died (exit code {child.exitcode})") from None
    finally:
        receiver.close()
    child.join()
    if not ok:
        raise result
    return result


def _run(step: Callable[..., object], args: tuple[object, ...], sender: multiprocessing.connection.Connection) -> None:
    try:
        sender.send((True, step(*args)))
    except BaseException as exc:  # raised again in the parent, as if the step had run there
        sender.send((False, exc))
