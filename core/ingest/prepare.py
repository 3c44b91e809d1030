"""The order-free half of ingest: a session's transcripts -> its archive markdown, terms and drafted
handoff. Only keywords need the document frequencies of the sessions before it, so everything else
can run ahead, in worker processes when there is enough to read; results come back in input order.
"""

from __future__ import annotations

import datetime as dt
import gc
import multiprocessing
import os
import signal
from collections import Counter
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from multiprocessing.sharedctypes import Synchronized
from multiprocessing.synchronize import Semaphore
from typing import cast
from zoneinfo import ZoneInfo

from eywa.core.archive.columns import FulltextColumns, fulltext_columns
from eywa.core.archive.renderer import Renderer
from eywa.core.extract.deterministic import KeywordCandidates, draft, keyword_candidates, session_terms
from eywa.core.handoffs.model import Handoff
from eywa.core.ingest.apart import can_fork
from eywa.core.sources.jsonl import ReadStats
from eywa.core.sources.plugin import SessionFiles
from eywa.core.sources.sessions import is_transcript, read_session

Redact = Callable[[str], str]

MAX_WORKERS = 4  # past this the ordered half (keywords, index, files) is the bottleneck
PARALLEL_MIN_BYTES = 8_000_000  # below this, starting workers costs more than it saves
_PARENT_CHECK_SECONDS = 0.5  # how often an idle worker checks that its parent still runs
_AHEAD_PER_WORKER = 4  # sessions prepared ahead of the consumer per worker: bounds memory, keeps them busy


@dataclass
class PreparedSession:
    """What ingest stores for a session, short of its keywords."""

    session_id: str
    stats: dict[str, ReadStats]  # per source file
    bad_lines: int
    orphan: bool = False
    subagent_runs: int = 0
    ended_at: str = ""
    markdown: str = ""
    columns: FulltextColumns | None = None  # of `markdown`
    handoff: Handoff | None = None  # drafted, no keywords yet; None: empty, or not a Claude Code transcript
    terms: list[str] = field(default_factory=list)  # recorded in the document frequencies
    weights: Counter[str] = field(default_factory=Counter)  # of `terms`: all that keywords read
    candidates: KeywordCandidates | None = None  # of `weights`, for a handoff of substance


def prepare(group: SessionFiles, redact: Redact, zone: ZoneInfo) -> PreparedSession:
    """Read a session; nothing is written (every file is written by the process that commits)."""
    session, stats = read_session(group, redact)
    prepared = PreparedSession(group.session_id, stats, session.bad_lines)
    if not is_transcript(session):
        return prepared
    session.machine = group.machine
    if session.first_ts is None and session.last_ts is None:  # no record says when (a summary-only file)
        newest = max(f.mtime_ns for f in group.files)
        session.last_ts = dt.datetime.fromtimestamp(newest / 1e9, dt.UTC)  # the file's own time, not 1970
    prepared.orphan = session.orphan
    prepared.subagent_runs = len(session.subagents)
    prepared.ended_at = session.last_ts.isoformat() if session.last_ts else ""
    prepared.markdown = Renderer(zone).render(session)
    prepared.columns = fulltext_columns(prepared.markdown)
    weights, prepared.terms = session_terms(session)
    prepared.weights = Counter({term: weights[term] for term in prepared.terms})
    prepared.handoff = draft(session, zone, group.projects)
    if prepared.handoff.substance:
        prepared.candidates = keyword_candidates(prepared.weights, tuple(prepared.handoff.projects))
    return prepared


def worker_count(groups: Sequence[SessionFiles]) -> int:
    """Worker processes worth starting for these sessions: one per CPU for a large ingest, none for a
    small one, and none when other threads run (the bot's ingest thread): forking a threaded process
    can copy a lock held by another thread."""
    if not can_fork():
        return 0
    if sum(f.size for group in groups for f in group.files) < PARALLEL_MIN_BYTES:
        return 0
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    workers = min(cpus, MAX_WORKERS, len(groups))
    return workers if workers > 1 else 0


def prepared_in_order(groups: Sequence[SessionFiles], redact: Redact, zone: ZoneInfo,
                      workers: int) -> Generator[PreparedSession, None, None]:
    """`prepare` of each group, in order; with `workers` > 0 in that many forked processes, which take
    the next session as they come free, a bounded number ahead of the consumer. Closing the iterator
    stops the workers."""
    if workers <= 0:
        for group in groups:
            yield prepare(group, redact, zone)
        return
    # fork: the workers inherit the groups and `redact` (configured patterns included), nothing to pickle
    # but the results. No helper threads: the consumer reads the pipes itself.
    context = multiprocessing.get_context("fork")
    claimed = context.Value("l", 0)
    slots = context.Semaphore(workers * _AHEAD_PER_WORKER)
    pipes: list[Connection] = []
    processes: list[BaseProcess] = []
    # Frozen until the workers end, what they inherit is visited by no collector, theirs or this process's: its pages
    # stay shared, not copied by a collection in either.
    gc.freeze()
    try:
        for _ in range(workers):
            receiver, sender = context.Pipe(duplex=False)
            process = context.Process(target=_work, args=(groups, redact, zone, claimed, slots, sender,
                                                          [*pipes, receiver]), daemon=True)
            process.start()
            sender.close()
            pipes.append(receiver)
            processes.append(process)
        arrived: dict[int, PreparedSession] = {}
        open_pipes = dict(zip(pipes, processes, strict=True))
        for index in range(len(groups)):
            while index not in arrived:
                if not open_pipes:
                    raise RuntimeError(f"no ingest worker prepared session {groups[index].session_id}")
                for pipe in cast(list[Connection], wait(list(open_pipes))):
                    try:
                        done, result = pipe.recv()
                    except EOFError:  # that worker ran out of sessions to claim, or died
                        gone = open_pipes.pop(pipe)
                        gone.join()
                        if gone.exitcode:
                            raise RuntimeError(f"an ingest worker died (exit code {gone.exitcode})") from None
                        continue
                    if isinstance(result, BaseException):
                        raise result
                    arrived[done] = result
            slots.release()
            yield arrived.pop(index)
    finally:
        for pipe in pipes:
            pipe.close()
        for started in processes:
            started.terminate()
            started.join()
        gc.unfreeze()


def _work(groups: Sequence[SessionFiles], redact: Redact, zone: ZoneInfo, claimed: Synchronized,
          slots: Semaphore, pipe: Connection, read_ends: list[Connection]) -> None:
    """A worker: claim the next unclaimed session while a slot is free, send back (index, result)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it stops the workers
    for inherited in read_ends:
        # Only the parent may hold a read end: once it is killed, a send fails (BrokenPipeError) instead of
        # blocking forever on a full pipe that this worker itself kept open.
        inherited.close()
    parent = os.getppid()
    while True:
        while not slots.acquire(timeout=_PARENT_CHECK_SECONDS):
            if os.getppid() != parent:
                return  # the parent was killed: nobody will read what this worker prepares
        with claimed.get_lock():
            index = claimed.value
            claimed.value += 1
        if index >= len(groups):
            return
        try:
            result: PreparedSession | BaseException = prepare(groups[index], redact, zone)
        except Exception as exc:  # the consumer raises it, as `prepare` would have in its own process
            result = exc
        try:
            pipe.send((index, result))
        except BrokenPipeError:
            return  # the consumer stopped
        except Exception as exc:  # an exception that cannot be pickled
            pipe.send((index, RuntimeError(f"ingest worker: {exc!r} while preparing {groups[index].session_id}")))
