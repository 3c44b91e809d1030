"""`eywa hooks install | uninstall` on real-looking Claude Code settings files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT

# Another memory tool's hooks (the Entire CLI's, as its sessions in the corpus show) and other settings.
OTHERS = {
    "permissions": {"allow": ["Bash(go test:*)"], "deny": []},
    "model": "opus",
    "hooks": {
        "SessionStart": [{"matcher": "startup", "hooks": [
            {"type": "command", "command": "go run ${CLAUDE_PROJECT_DIR}/cmd/entire/main.go hooks claude-code "
                                           "session-start"}]}],
        "SessionEnd": [{"hooks": [{"type": "command", "command": "entire hooks claude-code session-end"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh", "timeout": 5}]}],
    },
}


def eywa(*args: str, home: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EYWA_", "ANTHROPIC_"))}
    env.update(HOME=str(home), EYWA_DATA_DIR=str(home / "data"))
    result = subprocess.run([sys.executable, "-m", "eywa.cli.main", *args], cwd=ROOT, env=env, text=True,
                            capture_output=True, timeout=60)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".eywa-backup-*"))


def eywa_commands(data: dict) -> dict[str, list[str]]:
    return {event: [h["command"] for g in groups for h in g["hooks"] if " hook session-" in h["command"]]
            for event, groups in data.get("hooks", {}).items()}


@pytest.fixture
def settings(tmp_path: Path) -> Path:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(OTHERS, indent=4) + "\n")
    return path


def test_install_adds_both_hooks_and_keeps_everything_else(settings: Path, tmp_path: Path) -> None:
    original = settings.read_bytes()
    out = eywa("hooks", "install", "--settings", str(settings), home=tmp_path).stdout
    data = json.loads(settings.read_text())
    assert {k: v for k, v in data.items() if k != "hooks"} == {k: v for k, v in OTHERS.items() if k != "hooks"}
    for event in ("SessionStart", "SessionEnd", "PreToolUse"):
        assert data["hooks"][event][: len(OTHERS["hooks"][event])] == OTHERS["hooks"][event]
    ours = eywa_commands(data)
    assert [c.endswith("hook session-start") for c in ours["SessionStart"]] == [True]
    assert [c.endswith("hook session-end") for c in ours["SessionEnd"]] == [True]
    assert data["hooks"]["SessionStart"][-1]["matcher"] == "startup|clear|compact"
    [backup] = backups(settings)
    assert backup.read_bytes() == original
    assert f"backup: {backup}" in out
    assert "claude mcp add --scope user eywa -- " in out and out.rstrip().endswith(" mcp")


def test_install_twice_changes_nothing_the_second_time(settings: Path, tmp_path: Path) -> None:
    eywa("hooks", "install", "--settings", str(settings), home=tmp_path)
    installed = settings.read_bytes()
    out = eywa("hooks", "install", "--settings", str(settings), home=tmp_path).stdout
    assert out.startswith("no change:")
    assert settings.read_bytes() == installed and len(backups(settings)) == 1


def test_install_replaces_an_older_eywa_entry_instead_of_adding_one(settings: Path, tmp_path: Path) -> None:
    stale = json.loads(settings.read_text())
    stale["hooks"]["SessionStart"][0]["hooks"].append({"type": "command",
                                                       "command": "/old/venv/bin/eywa hook session-start"})
    settings.write_text(json.dumps(stale))
    eywa("hooks", "install", "--settings", str(settings), home=tmp_path)
    data = json.loads(settings.read_text())
    assert len(eywa_commands(data)["SessionStart"]) == 1
    assert data["hooks"]["SessionStart"][0] == OTHERS["hooks"]["SessionStart"][0]


def test_uninstall_removes_only_eywas_hooks(settings: Path, tmp_path: Path) -> None:
    eywa("hooks", "install", "--settings", str(settings), home=tmp_path)
    out = eywa("hooks", "uninstall", "--settings", str(settings), home=tmp_path).stdout
    assert json.loads(settings.read_text()) == OTHERS
    assert "removed Eywa's hooks" in out and "claude mcp remove --scope user eywa" in out
    assert eywa("hooks", "uninstall", "--settings", str(settings), home=tmp_path).stdout.startswith("no change:")


def test_install_creates_a_missing_settings_file(tmp_path: Path) -> None:
    out = eywa("hooks", "install", home=tmp_path).stdout  # the default: ~/.claude/settings.json
    path = tmp_path / ".claude" / "settings.json"
    data = json.loads(path.read_text())
    assert set(data) == {"hooks"} and set(data["hooks"]) == {"SessionStart", "SessionEnd"}
    assert "(new file)" in out and backups(path) == []
    eywa("hooks", "uninstall", home=tmp_path)
    assert json.loads(path.read_text()) == {}


@pytest.mark.parametrize(("text", "message"), [
    ('{"hooks": {"SessionStart": [}', "is not valid JSON (line 1, column 29"),
    ("// comments are not JSON\n{}", "is not valid JSON (line 1, column 1"),
    ('["a list"]', "holds a JSON list, not an object"),
    ('{"hooks": []}', "'hooks' in"),
    ('{"hooks": {"SessionEnd": {"hooks": []}}}', "'hooks.SessionEnd' in"),
])
@pytest.mark.parametrize("action", ["install", "uninstall"])
def test_a_settings_file_eywa_cannot_read_is_refused_untouched(tmp_path: Path, text: str, message: str,
                                                               action: str) -> None:
    path = tmp_path / "settings.json"
    path.write_text(text)
    result = eywa("hooks", action, "--settings", str(path), home=tmp_path, check=False)
    assert result.returncode == 1 and result.stdout == ""
    assert message in result.stderr and "nothing was changed" in result.stderr
    assert path.read_text() == text and backups(path) == []


def test_print_shows_the_change_and_writes_nothing(settings: Path, tmp_path: Path) -> None:
    original = settings.read_bytes()
    out = eywa("hooks", "install", "--settings", str(settings), "--print", home=tmp_path).stdout
    assert out.startswith(f"--- {settings}\n+++ {settings} (after eywa hooks install)")
    added = [line for line in out.splitlines() if line.startswith("+") and "hook session-" in line]
    assert len(added) == 2
    assert "claude mcp add --scope user eywa" in out
    assert settings.read_bytes() == original and backups(settings) == []


def test_installed_commands_run_eywas_hooks(tmp_path: Path) -> None:
    config = tmp_path / "eywa.yaml"
    config.write_text(f"data_dir: {tmp_path / 'from-config'}\n")
    settings = tmp_path / "settings.json"
    eywa("--config", str(config), "hooks", "install", "--settings", str(settings), home=tmp_path)
    commands = eywa_commands(json.loads(settings.read_text()))
    assert all(f"--config {config}" in c for cs in commands.values() for c in cs)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EYWA_", "ANTHROPIC_"))}
    transcript = tmp_path / "abc-123.jsonl"  # a SessionEnd naming no transcript that exists leaves no mark
    transcript.write_text("{}\n")
    hook_input = json.dumps({"session_id": "abc-123", "transcript_path": str(transcript), "cwd": "/tmp",
                             "hook_event_name": "SessionEnd", "reason": "clear"})
    result = subprocess.run(commands["SessionEnd"][0], shell=True, input=hook_input, text=True, env=env,
                            capture_output=True, timeout=60)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert (tmp_path / "from-config" / "pending" / "abc-123.json").is_file()


def test_every_change_keeps_its_own_backup(settings: Path, tmp_path: Path) -> None:
    original = settings.read_bytes()
    for action in ("install", "uninstall", "install"):
        eywa("hooks", action, "--settings", str(settings), home=tmp_path)
    saved = backups(settings)
    assert len(saved) == 3
    assert saved[0].read_bytes() == original  # names sort in the order they were made


def test_install_replaces_hook_commands_written_by_earlier_versions(settings: Path, tmp_path: Path) -> None:
    # Releases before the eywa.* namespace wrote `python -m core.cli hook ...`; that module no longer exists.
    data = json.loads(settings.read_text())
    old = "/home/me/eywa/.venv/bin/python -m core.cli --config /home/me/.eywa/config.yaml hook"
    data["hooks"]["SessionStart"].append({"matcher": "startup|clear|compact", "hooks": [
        {"type": "command", "command": f"{old} session-start", "timeout": 10}]})
    data["hooks"]["SessionEnd"].append({"hooks": [{"type": "command", "command": f"{old} session-end"}]})
    settings.write_text(json.dumps(data))
    eywa("hooks", "install", "--settings", str(settings), home=tmp_path)
    commands = eywa_commands(json.loads(settings.read_text()))
    assert [c for c in commands["SessionStart"] if "core.cli" in c] == []
    assert len([c for c in commands["SessionStart"] if c.endswith("hook session-start")]) == 1
    assert len([c for c in commands["SessionEnd"] if c.endswith("hook session-end")]) == 1
    hook = next(c for c in commands["SessionStart"] if c.endswith("hook session-start"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EYWA_", "ANTHROPIC_"))}
    done = subprocess.run(hook, shell=True, input="{}", env={**env, "HOME": str(tmp_path)}, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == ""
