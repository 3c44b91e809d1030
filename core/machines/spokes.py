"""The hub's transcript sources: its own agents' folders, and one folder per spoke that pushes to it.

`<data_dir>/spokes/<machine>/` holds what `eywa push` sent from that machine (core/machines/push.py): one folder per
agent kind, laid out as that agent's own home (`claude-code/` as `~/.claude/projects`, `codex/` as
`~/.codex`, `gemini/` as `~/.gemini`: core/sources reads each as it reads this machine's), and
`repositories.json`, the working directory -> repository map the spoke resolved where it could see its
folders. The hub is the only writer of the index; spokes only ever write files here.
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Mapping
from pathlib import Path

import msgspec

from eywa.core.sources import KINDS, Source
from eywa.core.sources.projects import ProjectNames, Repository

REPOSITORIES_FILE = "repositories.json"
_MACHINE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class RepositoryEntry(msgspec.Struct, frozen=True):
    """A `Repository` (core/sources/projects.py) as `repositories.json` holds it."""

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


def spoke_sources(spokes_dir: Path, kinds: tuple[str, ...] = KINDS) -> list[Source]:
    """A source per agent folder of each spoke folder (`<machine>/<kind>/`, laid out as that agent's own home),
    tagged with the machine; dot-folders (rsync's partial files) and names that are no machine's are left alone."""
    try:
        machines = sorted(entry.name for entry in os.scandir(spokes_dir)
                          if entry.is_dir(follow_symlinks=False) and valid_machine(entry.name))
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return []
    return [Source(kind, spokes_dir / machine / kind, True, machine) for machine in machines for kind in kinds
            if (spokes_dir / machine / kind).is_dir()]


def spoke_projects(spokes_dir: Path, sources: list[Source], aliases: Mapping[str, str] | None = None,
                   ) -> dict[str, ProjectNames]:
    """How each spoke's projects are named: by the repository map it sent."""
    return {machine: ProjectNames(aliases, read_repository_map(spokes_dir / machine / REPOSITORIES_FILE))
            for machine in dict.fromkeys(source.machine for source in sources)}
