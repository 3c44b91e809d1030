"""`eywa push`: a spoke sends its raw transcripts to the hub with rsync over SSH; never a database.

What travels: `repositories.json`, the working directory -> git repository map resolved here, where the
folders exist (core/sources/projects.py), then each agent folder's `*.jsonl` transcripts (and the subagents'
`.meta.json`), laid out as on the spoke; symlinks are neither followed nor sent. They land in
`<push.path>/<machine>/` on the hub, which ingests them as
one more source each (core/machines/spokes.py). rsync sends only new and grown files, and of a grown one only what
was appended (`--append-verify`, which checks the whole file and sends it again if it differs). A new file
is written to a temporary `.<name>.XXXXXX` and renamed when complete, which the hub's discovery never
reads; an append cut short leaves a truncated last line, which the reader skips until the next push
completes it. Nothing is ever deleted on the hub: it keeps what the agents' own cleanup removes here.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shlex
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import msgspec

from eywa.core.config.settings import Settings
from eywa.core.errors import PushError
from eywa.core.machines.spokes import REPOSITORIES_FILE, RepositoryMap, read_repository_map, valid_machine
from eywa.core.sources import agent
from eywa.core.sources.projects import Repository, local_repository

RSYNC_TIMEOUT_SECONDS = 120  # no data for this long: the hub or the link is gone, the next push resumes
_PARTIAL_CODES = {24}  # "some files vanished before they could be transferred": an agent's cleanup, harmless
_STAT_LINES = {
    "files": re.compile(r"^Number of regular files transferred: ([\d,]+)", re.MULTILINE),
    "bytes_sent": re.compile(r"^Total bytes sent: ([\d,]+)", re.MULTILINE),
}


@dataclass
class PushReport:
    hub: str
    destination: str
    files: int  # transcript and map files sent (new, or grown)
    bytes_sent: int  # on the wire, rsync's own count (compressed by ssh on top)
    repositories: int  # working directories in the map
    seconds: float

    def summary(self) -> str:
        return (f"pushed {self.files} new or changed files ({self.bytes_sent / 1e3:.1f} KB sent) to "
                f"{self.hub}:{self.destination} in {self.seconds:.1f}s; {self.repositories} working directories mapped")


def agent_folders(settings: Settings) -> list[tuple[str, Path]]:
    """(kind, folder) of each enabled source here that exists (core/sources), as it lands on the hub under
    `<machine>/<kind>/`."""
    return [(source.kind, source.path) for source in settings.all_sources
            if source.enabled and source.path.is_dir()]


def repository_map(machine: str, folders: list[tuple[str, Path]], previous: dict[str, Repository]) -> RepositoryMap:
    """The map of every working directory seen, resolved here; a folder deleted since keeps what it was.
    (Codex records its repository in the rollout itself.)"""
    repositories = dict(previous)
    for kind, folder in folders:
        for cwd in agent(kind).working_directories(folder):
            repository = local_repository(cwd)
            if repository is not None:
                repositories[cwd] = repository
    return RepositoryMap.of(machine, repositories)


def ssh_command(settings: Settings) -> list[str]:
    push = settings.push
    command = ["ssh", "-p", str(push.port), "-o", "BatchMode=yes", "-o", "ConnectTimeout=15",
               "-o", "ServerAliveInterval=15"]
    if push.ssh_key is not None:
        command += ["-i", str(push.ssh_key), "-o", "IdentitiesOnly=yes"]
    for option in push.ssh_options:
        command += ["-o", option]
    return command


def rsync_command(settings: Settings, source: str, destination: str, *, rsync: str = "rsync",
                  kind: str | None = None) -> list[str]:
    """rsync of `source` to `destination` under the hub's spokes folder: an agent folder of `kind` (what of
    it travels: its transcripts, and what its reader needs beside them: the agent's `push_filters`), or one
    file. Symlinks are never followed (nor sent)."""
    remote = f"{settings.push.path.rstrip('/')}/{destination}"
    filters = [*agent(kind).push_filters, "--prune-empty-dirs"] if kind is not None else []
    return [
        rsync, "--recursive", "--times", "--append-verify", "--mkpath", *filters,
        "--chmod=Du=rwx,Dgo=,Fu=rw,Fgo=",  # transcripts are private on the hub too
        f"--timeout={RSYNC_TIMEOUT_SECONDS}", "--stats",
        *([f"--bwlimit={settings.push.bwlimit_kbps}"] if settings.push.bwlimit_kbps else []),
        "-e", shlex.join(ssh_command(settings)), source, f"{settings.push.hub}:{remote}",
    ]


@contextlib.contextmanager
def _one_at_a_time(lock_path: Path) -> Iterator[None]:
    """A push from the timer and one from the SessionEnd hook wait for each other instead of racing."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _write_if_changed(path: Path, data: bytes) -> None:
    """Rewritten only when its content changes: a new mtime alone would send it on every push."""
    try:
        if path.read_bytes() == data:
            return
    except FileNotFoundError:
        pass
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


def _rsync(command: list[str], hub: str) -> dict[str, int]:
    done = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0 and done.returncode not in _PARTIAL_CODES:
        problem = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        raise PushError(f"rsync to {hub} failed: {problem} (check push.hub, push.ssh_key and that the hub "
                        f"accepts this key; the next push sends what this one did not)")
    return {name: int(match.group(1).replace(",", "")) if (match := pattern.search(done.stdout)) else 0
            for name, pattern in _STAT_LINES.items()}


def push(settings: Settings) -> PushReport:
    """Send what is new since the last push; raises `PushError` with what to do."""
    started = time.perf_counter()
    hub = settings.push.hub
    if not hub:
        raise PushError("no hub to push to: set push.hub (user@host of the machine running eywa-bot) in the "
                        "config file, or EYWA_PUSH__HUB")
    machine = settings.machine_name
    if not valid_machine(machine):
        raise PushError(f"machine name {machine!r} cannot name a folder on the hub: set `machine` in the config")
    rsync = shutil.which("rsync")
    if rsync is None or shutil.which("ssh") is None:
        raise PushError("eywa push needs rsync and ssh on this machine (apt-get install rsync openssh-client, "
                        "or brew install rsync)")
    folders = agent_folders(settings)
    if not folders:
        listed = ", ".join(str(source.path) for source in settings.all_sources if source.enabled)
        raise PushError(f"nothing to push: no transcript folder here exists ({listed or 'every source is off'})")
    outbox = settings.data_dir / "push" / machine
    with _one_at_a_time(outbox.parent / ".lock"):
        mapped = repository_map(machine, folders, read_repository_map(outbox / REPOSITORIES_FILE))
        outbox.mkdir(parents=True, exist_ok=True)
        _write_if_changed(outbox / REPOSITORIES_FILE, msgspec.json.encode(mapped))
        # The map first: a hub ingesting while the transcripts land names their projects by it.
        commands = [rsync_command(settings, str(outbox / REPOSITORIES_FILE), f"{machine}/", rsync=rsync)]
        commands += [rsync_command(settings, f"{folder}/", f"{machine}/{kind}/", rsync=rsync, kind=kind)
                     for kind, folder in folders]
        sent = [_rsync(command, hub) for command in commands]
    counts = {name: sum(one[name] for one in sent) for name in _STAT_LINES}
    return PushReport(hub=hub, destination=f"{settings.push.path.rstrip('/')}/{machine}", files=counts["files"],
                      bytes_sent=counts["bytes_sent"], repositories=len(mapped.repositories),
                      seconds=time.perf_counter() - started)
