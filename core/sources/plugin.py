"""What an agent's module provides (`AGENT`, an `AgentSource`), and the files discovery finds.

Ingest, discovery, push and the linking of headless runs ask the plug-in of a file's agent (`eywa.core.sources.agent`)
and nothing else about it: where under its folder the transcripts are, which session a file belongs to, how to
read a session's files into the normalized `Session` (with each file's `ReadStats`: its CLI version and the record
types and fields the reader does not know, the drift `eywa stats` shows), what of its folder travels to a hub, and
how a run of its CLI started by another agent's shell tool is recognised. The defaults fit an agent that writes
one JSONL file a session.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from eywa.core.sources import CLAUDE_CODE

if TYPE_CHECKING:
    from eywa.core.session import Session, SubagentRun
    from eywa.core.sources import Source
    from eywa.core.sources.jsonl import ReadStats
    from eywa.core.sources.projects import ProjectNames

Redact = Callable[[str], str]
AGENT_RUN = "agent-run"  # a file's role once linked to the session whose shell tool ran it (core/ingest/agent_runs.py)


# Slots, and the path as a string (a Path object holds its parts too: twice the memory): an ingest holds one of
# each per file seen, hundreds of thousands on a large disk.
@dataclass(frozen=True, slots=True)
class SourceFile:
    location: str  # its path
    size: int
    mtime_ns: int
    role: str  # main | agent-file | subagents-dir (a subagent's file) | agent-run
    agent: str = CLAUDE_CODE  # the agent whose folder it was found in (core/sources)
    machine: str = ""  # the machine of that source

    @property
    def path(self) -> Path:
        return Path(self.location)


@dataclass(slots=True)
class SessionFiles:
    session_id: str
    main: list[SourceFile] = field(default_factory=list)
    subagents: list[SourceFile] = field(default_factory=list)
    agent: str = CLAUDE_CODE
    machine: str = ""  # the machine it ran on (core/machines/spokes.py)
    projects: ProjectNames | None = None  # how that machine's projects are named; None: by this machine's folders

    @property
    def files(self) -> list[SourceFile]:
        return self.main + self.subagents


class AgentSource:
    """One agent's transcripts. A module sets the attributes and overrides what its files need."""

    kind: str
    folders: tuple[str, ...] = ("",)  # where under a source's folder its transcripts are ("": the folder itself)
    # A file of a subagent is a whole session of this agent's format, folded in by `fold` (else `read` reads it).
    subagents_are_sessions: bool = True
    headless: re.Pattern[str] | None = None  # a shell command that runs its CLI headless (core/ingest/agent_runs.py)
    # a `cd` lasts for later shell calls only in a shell that stays (Codex, Gemini CLI start each command afresh)
    shell_keeps_folder: bool = False

    # -- discovery ---------------------------------------------------------------------------------------------
    def wanted(self, name: str) -> bool:
        """A file name that may be a transcript (nothing is read to tell)."""
        return name.endswith(".jsonl")

    def layout(self, relative: tuple[str, ...]) -> str | None:
        """A file's role from its path under one of `folders`; None: no transcript."""
        return "main"

    def scan(self, source: Source) -> list[SourceFile]:
        from eywa.core.sources.discovery import scan_files

        return [file for folder in self.folders for file in scan_files(source.path / folder, self.kind, source.machine)]

    def session_of(self, file: SourceFile) -> str | None:
        """The session a file belongs to (a subagent's file: its parent's); None when it cannot be told."""
        return self.own_id(file)

    def named_session(self, file: SourceFile) -> str | None:
        """The session of a main file when its name alone tells it (nothing is read); None: ask `session_of`."""
        return None

    def own_id(self, file: SourceFile) -> str:
        """The id of the session (or run) the file itself records."""
        return file.path.stem

    def spawned(self, file: SourceFile, session_id: str) -> bool:
        """A main file that is a subagent's run of the session `session_id` (its own id is another)."""
        return False

    def short_id(self, session_id: str) -> str:
        """The id a person reads: 8 characters that differ from session to session."""
        return session_id[:8]

    # -- reading -----------------------------------------------------------------------------------------------
    def read(self, session_id: str, files: list[SourceFile], redact: Redact,
             ) -> tuple[Session, dict[str, ReadStats]]:
        """A session's main files (and the subagent files it reads itself) -> the Session, every text redacted,
        and each file's ReadStats; a file that vanished has none (ingest looks at it again next time)."""
        raise NotImplementedError

    def fold(self, session: Session, redact: Redact) -> SubagentRun:
        """A whole session of this agent, run by another (its subagent, or a headless run): a subagent run (its
        texts redacted already; `redact` for what the module reads beside it)."""
        from eywa.core.sources.sessions import as_run

        return as_run(session)

    # -- other machines and other agents -----------------------------------------------------------------------
    def companions(self, transcript: Path) -> tuple[Path, ...]:
        """Files its reader needs beside a transcript (a subagent's `.meta.json`, say): they travel with it."""
        return ()

    def travelling(self, folder: Path) -> Iterator[tuple[str, SourceFile]]:
        """What of an agent folder travels to a hub (core/machines/outbox.py): every transcript discovery finds
        there and its companions, as (its path relative to `folder`, POSIX; the transcript it goes with). Symlinks
        are neither followed nor sent."""
        from eywa.core.sources import Source

        linked = [folder / sub for sub in self.folders if sub and (folder / sub).is_symlink()]
        sent: set[Path] = set()
        for file in self.scan(Source(self.kind, folder)):
            if any(file.path.is_relative_to(root) for root in linked):
                continue
            for path in (file.path, *self.companions(file.path)):
                if path not in sent and not path.is_symlink() and path.is_file():
                    sent.add(path)
                    yield path.relative_to(folder).as_posix(), file

    def working_directories(self, folder: Path) -> set[str]:
        """The working folders its sessions ran in, where the folder alone tells (for a spoke's repository map;
        an agent that records its repository in the transcript needs none)."""
        return set()

    def run_start(self, file: SourceFile) -> tuple[dt.datetime | None, str]:
        """When and in which folder a headless run of its CLI began; (None, "") for a session of its own."""
        return None, ""
