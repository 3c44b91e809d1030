"""Eywa as a service: `eywa-bot service install` (the bot, started at login and restarted when it fails)
and `eywa push --install` (a push on a timer), as a systemd user unit on Linux or a launchd agent on macOS.
Logs go where the platform keeps them: the journal (`journalctl --user -u eywa-bot`), or
`~/Library/Logs/eywa/<name>.log`.
"""

from __future__ import annotations

import os
import plistlib
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from eywa.core.config.settings import Settings
from eywa.core.errors import ServiceError

RESTART_SECONDS = 10
_MAC_PATH = "/opt/homebrew/bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"  # launchd's own PATH lacks Homebrew


@dataclass(frozen=True)
class Service:
    name: str  # eywa-bot, eywa-push: the unit's or the agent's name
    description: str
    command: tuple[str, ...]
    every_minutes: int | None = None  # None: kept running (restarted on failure); else run on a timer

    @property
    def label(self) -> str:
        """launchd's reverse-DNS label."""
        return "dev.eywa." + self.name.removeprefix("eywa-")


def _executable(name: str) -> str:
    """The console script of this installation (beside the interpreter running it), else the one on PATH."""
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        raise ServiceError(f"cannot find the `{name}` command: install eywa (pip install -e .) first")
    return found


def _with_config(command: list[str], config_path: Path | None) -> tuple[str, ...]:
    return tuple(command[:1] + (["--config", str(config_path.expanduser().resolve())] if config_path else [])
                 + command[1:])


def bot_service(config_path: Path | None = None) -> Service:
    return Service("eywa-bot", "Eywa: the Telegram bot and the hub's ingest",
                   _with_config([_executable("eywa-bot")], config_path))


def mcp_service(config_path: Path | None = None) -> Service:
    """The hub's MCP tools over HTTP for the spokes' Claude Code (claude_code/mcp_http.py)."""
    return Service("eywa-mcp", "Eywa: the MCP tools over HTTP for other machines",
                   _with_config([_executable("eywa"), "mcp", "--transport", "http"], config_path))


def hub_services(settings: Settings, config_path: Path | None = None) -> list[Service]:
    """What `eywa-bot service install` sets up: the bot, and the HTTP MCP server once `mcp.token` is set."""
    services = [bot_service(config_path)]
    if settings.mcp.token.get_secret_value().strip():
        services.append(mcp_service(config_path))
    return services


def push_service(settings: Settings, config_path: Path | None = None) -> Service:
    return Service("eywa-push", "Eywa: push this machine's transcripts to the hub",
                   _with_config([_executable("eywa"), "push", "--quiet"], config_path),
                   every_minutes=settings.push.every_minutes)


# --- the files -------------------------------------------------------------------------------------


def systemd_units(service: Service, home: Path) -> dict[Path, str]:
    """`~/.config/systemd/user/<name>.service` (and `.timer` for a scheduled one)."""
    folder = home / ".config" / "systemd" / "user"
    # systemd reads this file's variables itself; the token and keys can live there, out of the unit.
    lines = ["[Unit]", f"Description={service.description}", "", "[Service]",
             f"ExecStart={shlex.join(service.command)}", "EnvironmentFile=-%h/.config/eywa/env"]
    if service.every_minutes is None:
        lines += ["Type=simple", "Restart=on-failure", f"RestartSec={RESTART_SECONDS}", "",
                  "[Install]", "WantedBy=default.target"]
        return {folder / f"{service.name}.service": "\n".join(lines) + "\n"}
    lines += ["Type=oneshot"]
    timer = ["[Unit]", f"Description={service.description}, every {service.every_minutes} minutes", "",
             "[Timer]", "OnStartupSec=2min", f"OnUnitActiveSec={service.every_minutes}min",
             f"Unit={service.name}.service", "", "[Install]", "WantedBy=timers.target"]
    return {folder / f"{service.name}.service": "\n".join(lines) + "\n",
            folder / f"{service.name}.timer": "\n".join(timer) + "\n"}


def launchd_plist(service: Service, home: Path) -> tuple[Path, bytes]:
    """`~/Library/LaunchAgents/<label>.plist`."""
    logs = home / "Library" / "Logs" / "eywa"
    agent: dict[str, object] = {
        "Label": service.label,
        "ProgramArguments": list(service.command),
        "RunAtLoad": True,
        "EnvironmentVariables": {"PATH": _MAC_PATH},
        "StandardOutPath": str(logs / f"{service.name}.log"),
        "StandardErrorPath": str(logs / f"{service.name}.log"),
        "ProcessType": "Background",
    }
    if service.every_minutes is None:
        agent["KeepAlive"] = {"SuccessfulExit": False}  # restarted when it fails, not after a clean stop
        agent["ThrottleInterval"] = RESTART_SECONDS
    else:
        agent["StartInterval"] = service.every_minutes * 60
    return home / "Library" / "LaunchAgents" / f"{service.label}.plist", plistlib.dumps(agent)


# --- installing ------------------------------------------------------------------------------------


def _run(command: list[str]) -> str | None:
    """None when it worked, else why not (one line)."""
    if shutil.which(command[0]) is None:
        return f"{command[0]} is not on this machine"
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode != 0:
        return (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
    return None


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


def install(service: Service, *, platform: str = sys.platform, home: Path | None = None,
            files_only: bool = False) -> list[str]:
    """Write the service's files and start it (not with `files_only`); what was done, a line each (how to
    start it by hand when it is not started, or the service manager cannot be reached, in a container say)."""
    start = not files_only
    home = home or Path.home()
    if platform == "darwin":
        path, data = launchd_plist(service, home)
        _write(path, data)
        (home / "Library" / "Logs" / "eywa").mkdir(parents=True, exist_ok=True)
        domain = f"gui/{os.getuid()}"
        started = f"launchctl bootstrap {domain} {path}"
        if start:
            _run(["launchctl", "bootout", f"{domain}/{service.label}"])  # a previous version, if loaded
        problem = _run(["launchctl", "bootstrap", domain, str(path)]) if start else "--files-only"
        logs = f"logs: ~/Library/Logs/eywa/{service.name}.log"
        written = [path]
    elif platform.startswith("linux"):
        units = systemd_units(service, home)
        for path, text in units.items():
            _write(path, text.encode())
        unit = f"{service.name}.timer" if service.every_minutes else f"{service.name}.service"
        problem = (_run(["systemctl", "--user", "daemon-reload"]) or
                   _run(["systemctl", "--user", "enable", "--now", unit])) if start else "--files-only"
        started = f"systemctl --user daemon-reload && systemctl --user enable --now {unit}"
        logs = f"logs: journalctl --user -u {service.name}"
        written = list(units)
    else:
        raise ServiceError(f"no service manager Eywa knows on {platform}: run `{shlex.join(service.command)}` "
                           f"yourself (systemd on Linux and launchd on macOS are supported)")
    lines = [f"wrote {path}" for path in written]
    lines.append(f"not started ({problem}); to start it: {started}" if problem else f"started: {started}")
    return [*lines, logs]


def uninstall(service: Service, *, platform: str = sys.platform, home: Path | None = None,
              files_only: bool = False) -> list[str]:
    """Stop the service (not with `files_only`) and remove its files; what was done."""
    home = home or Path.home()
    run = (lambda command: None) if files_only else _run
    if platform == "darwin":
        path, _ = launchd_plist(service, home)
        run(["launchctl", "bootout", f"gui/{os.getuid()}/{service.label}"])
        paths = [path]
    elif platform.startswith("linux"):
        paths = list(systemd_units(service, home))
        unit = f"{service.name}.timer" if service.every_minutes else f"{service.name}.service"
        run(["systemctl", "--user", "disable", "--now", unit])
    else:
        raise ServiceError(f"no service manager Eywa knows on {platform}")
    removed = [path for path in paths if path.exists()]
    for path in removed:
        path.unlink()
    if platform.startswith("linux") and removed:
        run(["systemctl", "--user", "daemon-reload"])
    return [f"removed {path}" for path in removed] or [f"{service.name} was not installed"]
