"""`eywa push`: a spoke sends redacted copies of its transcripts to the hub with rsync over SSH; never a
database, and never a raw transcript.

What travels: `repositories.json`, the working directory -> git repository map resolved here, where the
folders exist (core/sources/projects.py), then the outbox (core/machines/outbox.py): each agent folder's
transcripts (and the subagents' `.meta.json`, Gemini CLI's `.project_root`) copied line by line through the
redactor, laid out as on the spoke; symlinks are neither followed nor sent. They land in
`<push.path>/<machine>/` on the hub, which ingests them as one more source each (core/machines/spokes.py).
A copy made whole since the last push (new, rewritten, or made under new redaction rules) is sent whole,
with rsync's delta transfer against what the hub has; the others are sent only when they grew, and of a
grown one only what was appended (`--append-verify`, which checks the whole file and sends it again if it
differs). A new file is written to a temporary `.<name>.XXXXXX` and renamed when complete, which the hub's
discovery never reads; an append cut short leaves a truncated last line, which the reader skips until the
next push completes it. Nothing is ever deleted on the hub: it keeps what the agents' own cleanup removes
here (redacted, as everything it holds).
"""

from __future__ import annotations

import contextlib
import fcntl
import re
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import msgspec

from eywa.core.config.private_files import private_dir, write_private
from eywa.core.config.settings import Settings
from eywa.core.errors import PushError
from eywa.core.index import readonly
from eywa.core.machines.outbox import TEMPORARY_SUFFIX, save_state, state_path, sync
from eywa.core.machines.spokes import REPOSITORIES_FILE, RepositoryMap, read_repository_map, valid_machine
from eywa.core.redaction.copies import redact_document
from eywa.core.redaction.scrubber import Redactor
from eywa.core.sources import agent
from eywa.core.sources.plugin import SourceFile
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
                  append: bool = True, files_from: Path | None = None) -> list[str]:
    """rsync of `source` (a folder, or one file) to `destination` under the hub's spokes folder: only what
    grew, by appending (`append`), or whole with rsync's delta transfer; `files_from` lists the files of
    `source` to send. Symlinks are never followed (nor sent), temporary copies never sent."""
    remote = f"{settings.push.path.rstrip('/')}/{destination}"
    return [
        rsync, "--recursive", "--times", *(["--append-verify"] if append else []), "--mkpath",
        *([f"--files-from={files_from}"] if files_from is not None else []),
        f"--exclude=*{TEMPORARY_SUFFIX}", "--chmod=Du=rwx,Dgo=,Fu=rw,Fgo=",  # private on the hub too
        f"--timeout={RSYNC_TIMEOUT_SECONDS}", "--stats",
        *([f"--bwlimit={settings.push.bwlimit_kbps}"] if settings.push.bwlimit_kbps else []),
        "-e", shlex.join(ssh_command(settings)), source, f"{settings.push.hub}:{remote}",
    ]


def forgotten_here(settings: Settings) -> Callable[[SourceFile], bool] | None:
    """Which transcripts stay home because their session was forgotten on this machine (`eywa forget`, in
    its own index), as their agent tells a file's session. None when nothing was forgotten."""
    forgotten = readonly.forgotten_ids(settings.db_path)
    if not forgotten:
        return None
    return lambda file: agent(file.agent).session_of(file) in forgotten


@contextlib.contextmanager
def _one_at_a_time(lock_path: Path) -> Iterator[None]:
    """A push from the timer and one from the SessionEnd hook wait for each other instead of racing."""
    private_dir(lock_path.parent)
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
    write_private(path, data)


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
        private_dir(outbox)
        redactor = Redactor(settings.redaction.extra_patterns)
        # A remote may carry a token (https://user:<token>@host/...): redacted too, its repository name kept.
        _write_if_changed(outbox / REPOSITORIES_FILE, redact_document(msgspec.json.encode(mapped), redactor))
        state, _ = sync(folders, outbox, redactor, forgotten_here(settings))
        # The map first: a hub ingesting while the transcripts land names their projects by it.
        sent = [_rsync(rsync_command(settings, str(outbox / REPOSITORIES_FILE), f"{machine}/", rsync=rsync,
                                     append=False), hub)]
        if state.unsent:
            listing = outbox.with_name(outbox.name + ".unsent")
            write_private(listing, "".join(f"{key}\n" for key in state.unsent))
            sent.append(_rsync(rsync_command(settings, f"{outbox}/", f"{machine}/", rsync=rsync, append=False,
                                             files_from=listing), hub))
            state.unsent = []
            save_state(state_path(outbox), state)
        sent.append(_rsync(rsync_command(settings, f"{outbox}/", f"{machine}/", rsync=rsync)
                           + [f"--exclude=/{REPOSITORIES_FILE}"], hub))
    counts = {name: sum(one[name] for one in sent) for name in _STAT_LINES}
    return PushReport(hub=hub, destination=f"{settings.push.path.rstrip('/')}/{machine}", files=counts["files"],
                      bytes_sent=counts["bytes_sent"], repositories=len(mapped.repositories),
                      seconds=time.perf_counter() - started)
