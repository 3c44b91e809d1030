"""Drift made visible: the record types and fields the reader does not know are counted per Claude Code
version, kept in the index per source file, and shown by `eywa stats` and the bot's /status."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from eywa.bot.render import status_html
from eywa.core.api import Eywa
from eywa.core.config.settings import load_settings
from eywa.core.sources.claude.builder import FIELD_SAMPLE
from tests.claude_harness_regen import FIXTURES, sessions_of

from .conftest import ROOT


def _future_version(folder: Path) -> Path:
    """The background-agent transcript as a later CLI might write it: one new record type, one new field on
    every user record, a new version number."""
    transcript = next(folder.glob("*/*.jsonl"))
    out = []
    for line in transcript.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if "version" in record:
            record["version"] = "2.9.0"
        if record.get("type") == "user":
            record["voiceInputId"] = "v-1"
        out.append(json.dumps(record))
    out.append(json.dumps({"type": "hologram-state", "sessionId": "x", "version": "2.9.0"}))
    transcript.write_text("\n".join(out) + "\n", encoding="utf-8")
    return transcript


def test_unknown_types_and_fields_are_counted_with_the_files_version(tmp_path: Path) -> None:
    folder = tmp_path / "projects"
    shutil.copytree(FIXTURES / "background-agent", folder)
    transcript = _future_version(folder)
    users = sum(1 for line in transcript.read_text().splitlines() if json.loads(line).get("type") == "user")
    (session, stats), = sessions_of(folder)
    main = stats[str(transcript)]
    assert main.version == "2.9.0"
    assert main.unknown_types == {"hologram-state": 1}
    assert main.unknown_fields == {"user.voiceInputId": min(users, FIELD_SAMPLE)}
    assert session.user_texts == ["find where the retry policy lives"]  # read as before, only counted


def test_the_harness_transcripts_of_the_pinned_version_hold_nothing_unknown() -> None:
    for folder in FIXTURES.iterdir():
        for _, stats in sessions_of(folder):
            for file_stats in stats.values():
                assert (file_stats.unknown_types, file_stats.unknown_fields) == ({}, {}), folder.name
                assert file_stats.version == "2.1.332"


def _env(tmp_path: Path, projects: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EYWA_", "ANTHROPIC_"))}
    return {**env, "HOME": str(tmp_path / "home"), "EYWA_DATA_DIR": str(tmp_path / "data"),
            "EYWA_PROJECTS_DIR": str(projects)}


def _eywa(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "eywa.cli.main", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_stats_and_status_show_drift_per_version_and_a_reingest_does_not_add_it_twice(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    projects = tmp_path / "projects"
    shutil.copytree(FIXTURES / "print-session", projects)
    shutil.copytree(FIXTURES / "background-agent", tmp_path / "future")
    transcript = _future_version(tmp_path / "future")
    users = min(FIELD_SAMPLE, sum(1 for line in transcript.read_text().splitlines()
                                  if json.loads(line).get("type") == "user"))
    shutil.copytree(tmp_path / "future", projects, dirs_exist_ok=True)
    env = _env(tmp_path, projects)
    _eywa(env, "ingest")
    transcript = next(projects.glob("*background-agent*/*.jsonl"))
    last = transcript.read_text().splitlines()[-1]
    transcript.write_text(transcript.read_text() + last + "\n")  # the session went on: the file is read again
    _eywa(env, "ingest")
    expected = f"2.9.0: 1 file, unknown: field user.voiceInputId {users}, type hologram-state 2"
    stats = _eywa(env, "stats")
    assert expected in stats, stats  # a version with something unknown is shown; the rest under --verbose
    assert "2.1.332: 2 files, nothing unknown" not in stats and "unknown records in 1 version" in stats
    # print-session and the subagent's own file:
    assert "2.1.332: 2 files, nothing unknown" in _eywa(env, "stats", "--verbose")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    eywa = Eywa(load_settings())
    try:
        html = status_html(eywa.stats(), now=dt.datetime.now(dt.UTC), zone=ZoneInfo("UTC"), next_ingest=None,
                           ingest_every=30, last_scheduled=None, digest_time=None)
    finally:
        eywa.close()
    assert "Agent versions read" in html and expected in html
