"""Files only their owner can read: under umask 022 every folder Eywa makes in its data directory is 0700
and every file 0600 (the index and its -wal, the full-text index, handoffs, archives, marks, bot state, a
spoke's outbox); an existing wider data directory gets one warning; the config file holding a token is
written 0600 (core/config/private_files.py), and a wider one gets a warning."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from eywa.core.config.private_files import write_private

from .conftest import ROOT, link_corpus


def _modes(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): stat.S_IMODE(p.lstat().st_mode) for p in [root, *root.rglob("*")]}


def _run(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, text=True, input=stdin, capture_output=True,
                          timeout=300, preexec_fn=lambda: os.umask(0o022))


def test_with_umask_022_every_folder_is_0700_and_every_file_0600(env: dict[str, Path]) -> None:
    link_corpus(env["projects"], 3)
    run_env = {**os.environ, "EYWA_NOW": "2026-03-01"}
    assert _run(run_env, "-m", "eywa.cli.main", "ingest").returncode == 0
    transcript = next(env["projects"].rglob("*.jsonl"))  # a SessionEnd of a transcript that exists leaves a mark
    hook = json.dumps({"session_id": transcript.stem, "transcript_path": str(transcript), "cwd": "/x"})
    assert _run(run_env, "-m", "eywa.cli.main", "hook", "session-end", stdin=hook).returncode == 0
    bot_store = f"from eywa.core.index.bot_store import BotState; BotState(__import__('pathlib').Path('{env['data']}'" \
                ") / 'bot.sqlite3').close()"
    assert _run(run_env, "-c", bot_store).returncode == 0
    assert _run(run_env, "-m", "eywa.cli.main", "get", "hooks").returncode == 0
    modes = _modes(env["data"])
    assert {"index.sqlite3", "bot.sqlite3", "pending", "handoffs", "archive", "index.text_index"} <= set(modes)
    wrong = {name: oct(mode) for name, mode in modes.items()
             if mode != (0o700 if (env["data"] / name).is_dir() or name == "." else 0o600)}
    assert wrong == {}


def test_an_existing_wider_data_directory_is_warned_about_once(env: dict[str, Path]) -> None:
    link_corpus(env["projects"], 1)
    env["data"].mkdir(mode=0o755)
    env["data"].chmod(0o755)
    done = _run({**os.environ}, "-c", "from eywa.core.api import Eywa; from eywa.core.config.settings import "
                                      "load_settings; e = Eywa(load_settings()); e.ingest(); e.stats(); e.close(); "
                                      "e = Eywa(load_settings()); e.ingest(); e.close()")
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("is mode 755: other users of this machine can read it") == 1
    assert f"chmod 700 {env['data']}" in done.stderr
    assert stat.S_IMODE(env["data"].stat().st_mode) == 0o755  # a choice of the owner's is not undone


def test_the_config_file_holding_a_token_is_written_0600_and_a_wider_one_is_warned_about(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    config = tmp_path / "eywa" / "config.yaml"
    old = os.umask(0o022)
    try:
        config.parent.mkdir()
        config.write_text("telegram: {token: '123:old'}\n")
        assert stat.S_IMODE(config.stat().st_mode) == 0o644
        from eywa.core.config.settings import load_settings

        load_settings(config)
        assert "the config file, which holds a token or key," in caplog.text and "is mode 644" in caplog.text
        write_private(config, "telegram: {token: '123:new'}\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE(config.stat().st_mode) == 0o600 and "123:new" in config.read_text()
    assert [p.name for p in config.parent.iterdir()] == ["config.yaml"]  # no temporary file left
