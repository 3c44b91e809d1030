"""The hub's transcript sources: its own agents' folders, and one folder per spoke that pushes to it.

`<data_dir>/spokes/<machine>/` holds what `eywa push` sent from that machine (core/push.py): one folder per
agent kind, laid out as that agent's own home (`claude-code/` as `~/.claude/projects`), and
`repositories.json`, the working directory -> repository map the spoke resolved where it could see its
folders. The hub is the only writer of the index; spokes only ever write files here.
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from core.projects import ProjectNames, Repository

CLAUDE_CODE = "claude-code"
SPOKE_KINDS = (CLAUDE_CODE,)  # the agent kinds a spoke folder may hold, each read by its own source reader
REPOSITORIES_FILE = "repositories.json"
_MACHINE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class RepositoryEntry(msgspec.Struct, frozen=True):
    """A `Repository` (core/projects.py) as `repositories.json` holds it."""

    root: str
    remote: str = ""


class RepositoryMap(msgspec.Struct):
    """`repositories.json`: what a spoke sends beside its transcripts."""

    machine: str
    repositories: dict[str, RepositoryEntry] = {}  # working directory -> its repository, as the spoke saw it
    version: int = 1

    @classmethod
    def of(cls, machine: str, repositories: Mapping[str, Repository]) -> RepositoryMap:
        return cls(machine, {cwd: RepositoryEntry(*repository) for cwd, repository in sorted(repositories.items())})

    def resolved(self) -> dict[str, Repository]:
        return {cwd: Repository(entry.root, entry.remote) for cwd, entry in self.repositories.items()}


@dataclass(frozen=True)
class Source:
    """One folder of transcripts of one agent kind, from one machine."""

    kind: str
    root: Path
    machine: str
    projects: ProjectNames = field(default_factory=ProjectNames, compare=False)


def machine_name(configured: str = "") -> str:
    """The configured name, else the host name up to its first dot ("mac.local" -> "mac")."""
    name = configured.strip() or socket.gethostname().split(".", 1)[0]
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.").lower()
    return name or "localhost"


def valid_machine(name: str) -> bool:
    return bool(_MACHINE_RE.match(name))


def read_repository_map(path: Path) -> dict[str, Repository]:
    """A spoke's map, or {} when it has sent none (or an unreadable one: its sessions are named by folder)."""
    try:
        return msgspec.json.decode(path.read_bytes(), type=RepositoryMap).resolved()
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return {}


def spoke_sources(spokes_dir: Path, aliases: Mapping[str, str] | None = None,
                  kinds: tuple[str, ...] = SPOKE_KINDS) -> list[Source]:
    """A source per agent kind folder of each spoke folder, by machine name; dot-folders (rsync's partial
    files) and names that are not machine names are left alone."""
    try:
        machines = sorted(entry.name for entry in os.scandir(spokes_dir)
                          if entry.is_dir(follow_symlinks=False) and valid_machine(entry.name))
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return []
    found = []
    for machine in machines:
        folder = spokes_dir / machine
        kinds_here = [kind for kind in kinds if (folder / kind).is_dir()]
        if not kinds_here:
            continue
        names = ProjectNames(aliases, read_repository_map(folder / REPOSITORIES_FILE))
        found += [Source(kind, folder / kind, machine, names) for kind in kinds_here]
    return found
