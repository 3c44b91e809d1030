"""`eywa-bot service install|uninstall` and `eywa push --install`: the files each platform's service manager
reads, checked by that platform's own validator (`systemd-analyze verify`; the plist through plistlib)."""

from __future__ import annotations

import os
import plistlib
import subprocess
import sys
from pathlib import Path

import pytest

from eywa.core.config.settings import load_settings
from eywa.core.machines.services import bot_service, install, push_service, uninstall
from eywa.core.sources.projects import ProjectNames, Repository, repository_project

from .conftest import ROOT
from .tools import debian

pytestmark = pytest.mark.slow  # systemd-analyze on the units


def verify(*units: Path) -> None:
    analyze = debian("systemd", command="systemd-analyze")
    done = subprocess.run([str(analyze), "verify", *map(str, units)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "Failed" not in done.stderr, done.stderr


def test_the_bot_unit_starts_at_login_restarts_on_failure_and_passes_systemd_analyze(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("mcp:\n  token: abc123\n")  # with a token, the HTTP MCP server is a service too
    env = {k: v for k, v in os.environ.items() if not k.startswith("EYWA_")}
    done = subprocess.run([sys.executable, "-m", "eywa.bot.main", "--config", str(config), "service",
                           "install", "--files-only"], cwd=ROOT, env={**env, "HOME": str(tmp_path)}, text=True,
                          capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    unit = tmp_path / ".config" / "systemd" / "user" / "eywa-bot.service"
    mcp = unit.with_name("eywa-mcp.service")
    assert "mcp --transport http" in mcp.read_text()
    verify(mcp)
    text = unit.read_text()
    assert "Restart=on-failure" in text and "WantedBy=default.target" in text
    assert f"--config {config}" in text and "journalctl --user -u eywa-bot" in done.stdout
    verify(unit)
    broken = tmp_path / "broken.service"
    broken.write_text(text.replace("Restart=on-failure", "Restart=sometimes"))
    analyze = debian("systemd", command="systemd-analyze")
    assert "restart" in subprocess.run([str(analyze), "verify", str(broken)], capture_output=True,
                                       text=True).stderr.lower()  # the validator does catch a bad unit
    done = subprocess.run([sys.executable, "-m", "eywa.bot.main", "service", "uninstall", "--files-only"], cwd=ROOT,
                          env={**env, "HOME": str(tmp_path)}, text=True, capture_output=True, timeout=60)
    assert done.returncode == 0 and not unit.exists() and not mcp.exists()


def test_the_push_timer_and_its_service_pass_systemd_analyze(env: dict[str, Path]) -> None:
    service = push_service(load_settings(push={"every_minutes": 10}))
    lines = install(service, platform="linux", home=env["home"], files_only=True)
    folder = env["home"] / ".config" / "systemd" / "user"
    timer, unit = folder / "eywa-push.timer", folder / "eywa-push.service"
    assert "OnUnitActiveSec=10min" in timer.read_text() and "push --quiet" in unit.read_text()
    assert any("eywa-push.timer" in line for line in lines)
    verify(timer, unit)
    uninstall(service, platform="linux", home=env["home"], files_only=True)
    assert not timer.exists() and not unit.exists()


def test_eywa_push_install_writes_the_timer_and_uninstall_removes_it(env: dict[str, Path]) -> None:
    run = {**os.environ, "HOME": str(env["home"]), "EYWA_PUSH__EVERY_MINUTES": "7"}
    done = subprocess.run([sys.executable, "-m", "eywa.cli.main", "push", "--install", "--files-only"], cwd=ROOT,
                          env=run,
                          text=True, capture_output=True, timeout=60)
    timer = env["home"] / ".config" / "systemd" / "user" / "eywa-push.timer"
    assert done.returncode == 0 and "OnUnitActiveSec=7min" in timer.read_text(), done.stderr
    assert "push.on_session_end" in done.stdout
    done = subprocess.run([sys.executable, "-m", "eywa.cli.main", "push", "--uninstall", "--files-only"], cwd=ROOT,
                          env=run, text=True, capture_output=True, timeout=60)
    assert done.returncode == 0 and not timer.exists()


def test_the_launchd_agents_are_valid_plists_that_keep_the_bot_alive_and_time_the_push(env: dict[str, Path]) -> None:
    home = env["home"]
    install(bot_service(), platform="darwin", home=home, files_only=True)
    install(push_service(load_settings()), platform="darwin", home=home, files_only=True)
    agents = home / "Library" / "LaunchAgents"
    bot = plistlib.loads((agents / "dev.eywa.bot.plist").read_bytes())
    push = plistlib.loads((agents / "dev.eywa.push.plist").read_bytes())
    assert bot["Label"] == "dev.eywa.bot" and bot["RunAtLoad"] and bot["KeepAlive"] == {"SuccessfulExit": False}
    assert Path(bot["ProgramArguments"][0]).name == "eywa-bot" and bot["StandardErrorPath"].endswith("eywa-bot.log")
    assert push["StartInterval"] == 15 * 60 and push["ProgramArguments"][-2:] == ["push", "--quiet"]
    assert (home / "Library" / "Logs" / "eywa").is_dir()
    uninstall(bot_service(), platform="darwin", home=home, files_only=True)
    assert not (agents / "dev.eywa.bot.plist").exists() and (agents / "dev.eywa.push.plist").exists()


def test_projects_are_named_by_repository_then_by_alias() -> None:
    assert repository_project(Repository("/home/a/src/cli", "git@github.com:acme/cli.git")) == "cli"
    assert repository_project(Repository("/srv/cli-main", "https://gitlab.com/acme/group/cli/")) == "cli"
    assert repository_project(Repository("/srv/work/tool", "")) == "tool"
    assert repository_project(Repository("/home/bob", "")) == ""  # a home folder in git is a person
    spoke = {"/srv/x": Repository("/srv/x", "ssh://git@host/acme/eywa-cli.git")}
    names = ProjectNames({"eywa-cli": "cli", "/srv/scratch": "notes"}, spoke)
    assert names.of("/srv/x") == ("cli",)
    assert names.of("/srv/scratch/deep/er") == ("notes",)
    assert names.of("/Users/alex/workspace/cli/.worktrees/2") == ("cli",)  # no map entry: by folder
    assert names.of("/Users/alex") == ()
