"""A real sshd on 127.0.0.1 for the several-machines tests: Debian's openssh-server with throwaway host and
user keys, run as the current user on a free port, and real rsync on both ends (installed by tests/tools.py)."""

from __future__ import annotations

import getpass
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .tools import debian


@dataclass(frozen=True)
class SshHub:
    user: str
    port: int
    key: Path  # the spokes' private key
    known_hosts: Path

    def push_env(self, hub_spokes: Path) -> dict[str, str]:
        """The settings that point a spoke's `eywa push` at this sshd."""
        options = f'["UserKnownHostsFile={self.known_hosts}", "StrictHostKeyChecking=yes", "LogLevel=ERROR"]'
        return {"EYWA_PUSH__HUB": f"{self.user}@127.0.0.1", "EYWA_PUSH__PORT": str(self.port),
                "EYWA_PUSH__SSH_KEY": str(self.key), "EYWA_PUSH__PATH": str(hub_spokes),
                "EYWA_PUSH__SSH_OPTIONS": options}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, what: str, seconds: float = 60) -> None:
    """Until `process` accepts connections on 127.0.0.1:`port`; fails when it exits or takes too long."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not start") from None
            time.sleep(0.05)


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)


@contextmanager
def ssh_hub(folder: Path) -> Iterator[SshHub]:
    sshd = debian("openssh-server", command="sshd")
    debian("openssh-client", command="ssh")
    debian("rsync", command="rsync")
    folder.mkdir(parents=True, exist_ok=True)
    host_key, user_key = folder / "host_key", folder / "user_key"
    _keygen(host_key)
    _keygen(user_key)
    authorized = folder / "authorized_keys"
    authorized.write_text(user_key.with_suffix(".pub").read_text())
    authorized.chmod(0o600)
    port = free_port()
    config = folder / "sshd_config"
    config.write_text("\n".join([
        f"Port {port}", "ListenAddress 127.0.0.1", f"HostKey {host_key}", f"AuthorizedKeysFile {authorized}",
        f"PidFile {folder / 'sshd.pid'}", "PasswordAuthentication no", "KbdInteractiveAuthentication no",
        "UsePAM no", "StrictModes no", "PermitRootLogin prohibit-password", "PrintMotd no", "LogLevel ERROR",
    ]) + "\n")
    if os.geteuid() == 0:
        Path("/run/sshd").mkdir(exist_ok=True)  # privilege separation folder sshd wants when run as root
    known_hosts = folder / "known_hosts"
    known_hosts.write_text(f"[127.0.0.1]:{port} {host_key.with_suffix('.pub').read_text().split(' ')[0]} "
                           f"{host_key.with_suffix('.pub').read_text().split(' ')[1]}\n")
    log = open(folder / "sshd.log", "wb")
    process = subprocess.Popen([str(sshd), "-D", "-e", "-f", str(config)], stdout=log, stderr=log)
    try:
        try:
            wait_for_port(port, process, "sshd", seconds=10)
        except RuntimeError as exc:
            raise RuntimeError(f"{exc}: {(folder / 'sshd.log').read_text()}") from None
        yield SshHub(getpass.getuser(), port, user_key, known_hosts)
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()
