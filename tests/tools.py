"""The outside programs the tests run for real, installed by the project itself on first use.

One place for both kinds: the agent CLIs pinned in tests/agent_clis/package-lock.json (`npm ci` into a cache
keyed by the lock file, so a clean machine installs them once and later runs reuse them) and Debian packages
(flite, openssh-server, rsync, ...) that `apt-get` installs when the machine lacks them. Under CI a tool that
cannot be had fails the test; elsewhere (no root, no npm) the test is skipped with the reason.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

AGENT_CLIS = Path(__file__).resolve().parent / "agent_clis"
CACHE = Path(os.environ.get("EYWA_TEST_TOOLS", Path.home() / ".cache" / "eywa-test-tools"))


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


@contextmanager
def _locked(name: str) -> Iterator[None]:
    """One installer at a time across processes (several test runs may share the cache)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def agent_cli(command: str) -> Path:
    """The pinned CLI `command` (claude, codex, gemini): its executable, installed with npm on first use."""
    lock = (AGENT_CLIS / "package-lock.json").read_bytes()
    home = CACHE / f"agent-clis-{hashlib.sha256(lock).hexdigest()[:16]}"
    binary = home / "node_modules" / ".bin" / command
    if binary.exists():
        return binary
    if shutil.which("npm") is None:
        _unavailable("npm is needed to install the agent CLIs the tests run (tests/agent_clis)")
    with _locked("agent-clis"):
        if not binary.exists():
            staging = home.with_name(home.name + ".partial")
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir(parents=True)
            for name in ("package.json", "package-lock.json"):
                shutil.copy2(AGENT_CLIS / name, staging / name)
            # Install scripts stay off but for the one the CLIs need (below): none may reach beyond the registry.
            done = subprocess.run(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
                                  cwd=staging, capture_output=True, text=True, timeout=600)
            if done.returncode == 0:  # Claude Code's own postinstall links its platform binary (no download)
                done = subprocess.run(["node", "install.cjs"], cwd=staging / "node_modules/@anthropic-ai/claude-code",
                                      capture_output=True, text=True, timeout=600)
            if done.returncode != 0:
                _unavailable(f"installing tests/agent_clis failed: {done.stderr.strip()[-400:]}")
            shutil.rmtree(home, ignore_errors=True)
            staging.rename(home)
    return binary


def python_tool(command: str, requirement: str) -> Path:
    """The program `command` of the PyPI package `requirement` (pinned, `name==version`), installed with pip into a
    virtual environment of its own in the cache on first use."""
    home = CACHE / f"python-{requirement.replace('==', '-')}"
    binary, complete = home / "bin" / command, home / ".complete"
    if complete.exists():
        return binary
    with _locked("python-tools"):
        if not complete.exists():  # a venv's scripts name its path: made in place, marked complete at the end
            shutil.rmtree(home, ignore_errors=True)
            subprocess.run([sys.executable, "-m", "venv", str(home)], check=True, capture_output=True, timeout=300)
            done = subprocess.run([str(home / "bin" / "python"), "-m", "pip", "install", "-q", requirement],
                                  capture_output=True, text=True, timeout=600)
            if done.returncode != 0:
                _unavailable(f"pip install {requirement} failed: {done.stderr.strip()[-400:]}")
            complete.touch()
    return binary


def debian(*packages: str, command: str) -> Path:
    """`command` from the machine, after installing the Debian `packages` that provide it when it is missing."""
    found = _which(command)
    if found:
        return found
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        _unavailable(f"{command} is missing; as root: apt-get install {' '.join(packages)}")
    with _locked("apt"):
        if not _which(command):
            env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
            install = ["apt-get", "install", "-y", "-q", "--no-install-recommends", *packages]
            done = subprocess.run(install, capture_output=True, text=True, env=env, timeout=600)
            if done.returncode != 0:  # an empty or stale package list: update once and try again
                subprocess.run(["apt-get", "update", "-q"], capture_output=True, env=env, timeout=600)
                done = subprocess.run(install, capture_output=True, text=True, env=env, timeout=600)
            if done.returncode != 0:
                _unavailable(f"apt-get install {' '.join(packages)} failed: {done.stderr.strip()[-400:]}")
    found = _which(command)
    if not found:
        _unavailable(f"{' '.join(packages)} installed but {command} is not on PATH")
    return found


def _which(command: str) -> Path | None:
    """On PATH, or in /usr/sbin (sshd), which a non-login PATH may lack."""
    found = shutil.which(command) or shutil.which(command, path="/usr/sbin")
    return Path(found) if found else None


@contextmanager
def stand_in(committed: Path) -> Iterator[Path]:
    """A fresh folder beside `committed` whose path is just as long, removed after: a regeneration runs the
    real CLIs there (never in the fixed folder the committed transcripts name, which a second run at once
    would share) and `map_paths` then writes `committed` in its place; an equal length keeps every line a CLI
    or Eywa cuts cut at the same place."""
    keep = len(committed.name) - 8  # mkdtemp adds 8 characters
    folder = Path(tempfile.mkdtemp(prefix=committed.name[:keep], dir=committed.parent))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def encoded_cwd(path: Path) -> str:
    """Claude Code's folder name for a working directory under ~/.claude/projects."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(path))


def map_paths(tree: Path, ran_in: Path, committed: Path) -> None:
    """Every mention of `ran_in` under `tree`, in file contents and in names (Claude Code's encoded form too),
    made `committed`."""
    pairs = ((str(ran_in), str(committed)), (encoded_cwd(ran_in), encoded_cwd(committed)))
    for path in sorted(tree.rglob("*"), key=lambda p: len(p.parts), reverse=True):  # deepest first
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            for old, new in pairs:
                text = text.replace(old, new)
            path.write_text(text, encoding="utf-8")
        name = path.name
        for old, new in pairs:
            name = name.replace(old, new)
        if name != path.name:
            path.rename(path.with_name(name))
